// set_local helpers: the dataset's element and chunk sizes, the filter's current cd_values.
#include "chunk_geometry.hpp"

#include <string>

#include "error_stack.hpp"

namespace h5sparse::hdf5 {

ChunkGeometry chunk_geometry(hid_t dcpl, hid_t type) {
  ChunkGeometry g{};
  g.type_size = H5Tget_size(type);
  H5SPARSE_FAIL_IF(g.type_size == 0, ErrorCode::invalid_argument, "cannot read the datatype size");
  g.base_type_size = g.type_size;
  if (H5Tget_class(type) == H5T_ARRAY) {
    const hid_t super = H5Tget_super(type);
    if (super >= 0) {
      g.base_type_size = H5Tget_size(super);
      H5Tclose(super);
    }
  }
  hsize_t dims[H5S_MAX_RANK];
  const int rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, dims);
  H5SPARSE_FAIL_IF(rank <= 0, ErrorCode::invalid_argument, "the dataset is not chunked");
  g.chunk_bytes = g.type_size;
  for (int i = 0; i < rank; ++i) g.chunk_bytes *= dims[i];
  return g;
}

std::size_t current_cd_values(hid_t dcpl, int filter_id, unsigned* flags, unsigned* values,
                              std::size_t max_values) {
  std::size_t count = max_values;
  for (std::size_t i = 0; i < max_values; ++i) values[i] = 0;
  throw_if_negative(H5Pget_filter_by_id2(dcpl, filter_id, flags, &count, values, 0, nullptr, nullptr),
                    "cannot read the filter's parameters from the dataset creation property list");
  return count < max_values ? count : max_values;
}

}  // namespace h5sparse::hdf5
