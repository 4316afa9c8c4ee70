// Merging a chunk's stored elements with written ones, both as ascending offset lists: the
// one walk that fixed-size (engine/coordinate_write.cpp) and variable-length (var_chunk.cpp)
// element merges share. Private to core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace h5sparse::detail {

/// Calls take(from_written, index) for every offset of `base` and `written` in ascending order;
/// where both hold an offset, only written's element is taken (a write replaces the value).
template <typename Take>
void merge_offsets(const std::vector<std::uint32_t>& base, const std::vector<std::uint32_t>& written, Take&& take) {
  std::size_t i = 0, j = 0;
  while (i < base.size() || j < written.size()) {
    if (j == written.size() || (i < base.size() && base[i] < written[j])) {
      take(false, i++);
      continue;
    }
    if (i < base.size() && base[i] == written[j]) ++i;
    take(true, j++);
  }
}

}  // namespace h5sparse::detail
