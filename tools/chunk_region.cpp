// Chunk-region helpers of repack (see chunk_region.hpp).
#include "chunk_region.hpp"

#include <algorithm>

namespace h5sparse::tool {

/// The part of the chunk at `origin` inside the extent.
std::vector<std::uint64_t> region_of(const std::vector<std::uint64_t>& origin, const std::vector<std::uint64_t>& chunk,
                                     const std::vector<std::uint64_t>& dims) {
  std::vector<std::uint64_t> region(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) region[d] = origin[d] >= dims[d] ? 0 : std::min(chunk[d], dims[d] - origin[d]);
  return region;
}

bool empty_region(const std::vector<std::uint64_t>& region) {
  for (std::uint64_t n : region)
    if (n == 0) return true;
  return false;
}

/// Dataspaces for moving the `region` part of a chunk buffer (full chunk dims) to or from the
/// dataset at `origin`.
std::pair<Handle, Handle> chunk_spaces(hid_t dset, const std::vector<std::uint64_t>& origin,
                                       const std::vector<std::uint64_t>& chunk, const std::vector<std::uint64_t>& region) {
  const std::vector<hsize_t> cdims(chunk.begin(), chunk.end()), start(origin.begin(), origin.end()),
      count(region.begin(), region.end()), zero(chunk.size(), 0);
  Handle mem = checked_handle(H5Screate_simple(int(cdims.size()), cdims.data(), nullptr), "cannot make a dataspace");
  check(H5Sselect_hyperslab(mem.get(), H5S_SELECT_SET, zero.data(), nullptr, count.data(), nullptr),
        "cannot select a chunk");
  Handle file = checked_handle(H5Dget_space(dset), "cannot read a dataspace");
  check(H5Sselect_hyperslab(file.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
        "cannot select a chunk");
  return {std::move(mem), std::move(file)};
}

Bytes user_fill(hid_t dcpl, hid_t type, std::size_t size, bool* defined) {
  H5D_fill_value_t status;
  check(H5Pfill_value_defined(dcpl, &status), "cannot read a fill value");
  Bytes fill(size, 0);
  *defined = status == H5D_FILL_VALUE_USER_DEFINED;
  if (*defined) check(H5Pget_fill_value(dcpl, type, fill.data()), "cannot read a fill value");
  return fill;
}

}  // namespace h5sparse::tool
