// Moving one chunk's worth of elements between a chunk-shaped buffer and a dataset, for the
// repack directions: which part of a chunk lies inside the extent, the dataspaces that select
// it, and a walk over the rows of a box inside a chunk.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "tool_support.hpp"

namespace h5sparse::tool {

/// The part of the chunk at `origin` inside the extent (a zero somewhere when none is).
std::vector<std::uint64_t> region_of(const std::vector<std::uint64_t>& origin, const std::vector<std::uint64_t>& chunk,
                                     const std::vector<std::uint64_t>& dims);
bool empty_region(const std::vector<std::uint64_t>& region);

/// Dataspaces (memory, file) for moving the `region` part of a chunk buffer (full chunk dims)
/// to or from the dataset at `origin`.
std::pair<Handle, Handle> chunk_spaces(hid_t dset, const std::vector<std::uint64_t>& origin,
                                       const std::vector<std::uint64_t>& chunk, const std::vector<std::uint64_t>& region);

/// Calls f(first) with the chunk-linear index of the first element of every row (along the
/// last dimension) of the box [lo, hi] (chunk-local, inclusive) in a chunk of dims `chunk`.
template <typename F>
void for_each_row(const std::vector<std::uint64_t>& chunk, const std::vector<std::uint64_t>& lo,
                  const std::vector<std::uint64_t>& hi, F&& f) {
  const std::size_t r = chunk.size();
  std::vector<std::uint64_t> at(lo);
  for (;;) {
    std::uint64_t linear = 0;
    for (std::size_t d = 0; d < r; ++d) linear = linear * chunk[d] + at[d];
    f(linear);
    std::size_t d = r - 1;
    while (d-- > 0) {
      if (at[d] < hi[d]) {
        ++at[d];
        break;
      }
      at[d] = lo[d];
    }
    if (d == std::size_t(-1)) return;
  }
}

/// The DCPL's user-defined fill value in `type` (zeros and *defined = false when none is set).
Bytes user_fill(hid_t dcpl, hid_t type, std::size_t size, bool* defined);

}  // namespace h5sparse::tool
