// PieceMerger (what the parallel connector's chunk owners apply): define-by-write in selection
// order, later duplicates winning, the fill-is-undefined option, erase, for 4-, 8- and
// 2-byte elements, against a dense model of one chunk.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "h5sparse/piece_merge.hpp"

using namespace h5sparse;

namespace {

template <typename T>
void check(bool fill_is_undefined, T fill, unsigned seed) {
  ChunkLayout layout;
  layout.dims = {6, 10};
  layout.element_size = sizeof(T);
  const std::uint64_t n = layout.element_count();
  std::vector<T> value(n, fill);
  std::vector<bool> defined(n, false);
  StructuredChunk chunk = StructuredChunk::empty(layout);
  PieceMerger merger(layout, reinterpret_cast<const std::uint8_t*>(&fill), fill_is_undefined);
  std::mt19937 rng(seed);
  for (int step = 0; step < 200; ++step) {
    // Random pieces in random order (duplicates and overlaps included), values with some fills.
    std::vector<ChunkPiece> pieces;
    std::vector<T> source;
    const int count = int(rng() % 5) + 1;
    for (int p = 0; p < count; ++p) {
      const std::uint64_t start = rng() % n, length = 1 + rng() % std::min<std::uint64_t>(n - start, 12);
      pieces.push_back(ChunkPiece{0, start, length, source.size()});
      for (std::uint64_t k = 0; k < length; ++k) source.push_back(rng() % 4 == 0 ? fill : T(rng() % 1000 + 1));
    }
    if (rng() % 4 == 0) {
      merger.erase(chunk, pieces.data(), pieces.data() + pieces.size());
      for (const ChunkPiece& p : pieces)
        for (std::uint64_t k = 0; k < p.length; ++k) defined[p.in_chunk_start + k] = false;
    } else {
      merger.write(chunk, pieces.data(), pieces.data() + pieces.size(),
                   reinterpret_cast<const std::uint8_t*>(source.data()));
      for (const ChunkPiece& p : pieces)
        for (std::uint64_t k = 0; k < p.length; ++k) {
          const T v = source[p.source + k];
          value[p.in_chunk_start + k] = v;
          defined[p.in_chunk_start + k] = !(fill_is_undefined && v == fill);
        }
    }
    ASSERT_EQ(chunk.values.size(), chunk.defined.defined_count() * sizeof(T));
    std::size_t at = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(chunk.defined.test(i), bool(defined[i])) << "step " << step << " element " << i;
      if (!defined[i]) continue;
      T v;
      std::memcpy(&v, &chunk.values[at++ * sizeof(T)], sizeof(T));
      ASSERT_EQ(v, value[i]) << "step " << step << " element " << i;
    }
  }
}

}  // namespace

TEST(PieceMerger, FourByteElements) { check<std::uint32_t>(false, 0, 1); }
TEST(PieceMerger, FourByteFillIsUndefined) { check<std::uint32_t>(true, 7, 2); }
TEST(PieceMerger, EightByteFillIsUndefined) { check<std::uint64_t>(true, 0, 3); }
TEST(PieceMerger, TwoByteFillIsUndefined) { check<std::uint16_t>(true, 5, 4); }
TEST(PieceMerger, TwoByteElements) { check<std::uint16_t>(false, 5, 5); }
