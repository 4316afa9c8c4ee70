// Filter lookup on a DCPL by walking its pipeline (never a failing call).
#include "dcpl.hpp"

#include "error_stack.hpp"
#include "h5sparse/sparse_layout.hpp"

namespace h5sparse::hdf5 {

std::optional<std::vector<unsigned>> filter_values(hid_t dcpl, int filter_id) {
  const int count = H5Pget_nfilters(dcpl);
  throw_if_negative(count, "cannot read the filter pipeline");
  for (int i = 0; i < count; ++i) {
    unsigned flags = 0;
    std::size_t n = 256;
    std::vector<unsigned> values(n);
    const H5Z_filter_t id = H5Pget_filter2(dcpl, unsigned(i), &flags, &n, values.data(), 0, nullptr, nullptr);
    throw_if_negative(id, "cannot read the filter pipeline");
    if (id != filter_id) continue;
    values.resize(n < 256 ? n : 256);
    return values;
  }
  return std::nullopt;
}

std::optional<std::vector<unsigned>> sparse_dataset_values(hid_t dcpl) {
  if (H5Pget_layout(dcpl) != H5D_CHUNKED) return std::nullopt;
  std::optional<std::vector<unsigned>> values = filter_values(dcpl, kFilterStructuredChunk);
  if (!values || !is_complete_form(values->data(), values->size())) return std::nullopt;
  return values;
}

}  // namespace h5sparse::hdf5
