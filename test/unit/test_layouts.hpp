// What the structured-chunk unit tests share: a chunk layout of 16 x 24 elements of 4 bytes,
// and the size-class rule.
#pragma once

#include "h5sparse/structured_chunk.hpp"
#include "h5sparse/varint.hpp"

inline h5sparse::ChunkLayout layout_with(h5sparse::SectionPipeline selection, h5sparse::SectionPipeline values) {
  h5sparse::ChunkLayout l;
  l.dims = {16, 24};
  l.element_size = 4;
  l.selection_pipeline = std::move(selection);
  l.values_pipeline = std::move(values);
  return l;
}

// The size-class rule of docs/FORMAT.md, written out again as a scan: the size a chunk of
// `unpadded` bytes (with a filtered section) is stored at. With 2^k <= unpadded < 2^(k+1), the
// first multiple of max(1, 2^(k-5)) below 2^(k+1) that padding p >= 1 and its varint reach.
inline std::uint64_t class_size_of(std::uint64_t unpadded) {
  int k = 0;
  while ((unpadded >> k) > 1) ++k;
  const std::uint64_t step = k > 5 ? std::uint64_t(1) << (k - 5) : 1;
  for (std::uint64_t size = unpadded; size < (std::uint64_t(2) << k); ++size) {
    if (size % step != 0) continue;
    if (size == unpadded) return size;
    for (std::uint64_t len = 1; len <= 5 && len < size - unpadded; ++len)
      if (h5sparse::varint_size(size - unpadded - len) == len) return size;
  }
  return unpadded;
}
