// Chunk grid: splitting linear sequences into per-chunk pieces agrees with element-by-element
// arithmetic, including edge chunks.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/error.hpp"

using namespace h5sparse;

TEST(ChunkGrid, SplitMatchesElementwiseMapping) {
  const ChunkGrid grid({7, 10, 13}, {3, 4, 5});
  EXPECT_EQ(grid.chunk_count(), 3u * 3u * 3u);
  const std::uint64_t n = 7 * 10 * 13;
  std::vector<ChunkPiece> pieces;
  grid.split(0, n, 100, pieces);
  std::uint64_t covered = 0;
  for (const ChunkPiece& p : pieces) {
    for (std::uint64_t k = 0; k < p.length; ++k) {
      const std::uint64_t linear = p.source - 100 + k;
      const std::vector<std::uint64_t> c = grid.element_coords(p.chunk, p.in_chunk_start + k);
      EXPECT_EQ(c[0] * 130 + c[1] * 13 + c[2], linear);
      EXPECT_TRUE(grid.inside_extent(p.chunk, p.in_chunk_start + k));
      ++covered;
    }
    EXPECT_EQ(grid.chunk_index(grid.chunk_origin(p.chunk)), p.chunk);
  }
  EXPECT_EQ(covered, n);
  EXPECT_FALSE(grid.inside_extent(grid.chunk_count() - 1, 3 * 4 * 5 - 1));
  EXPECT_THROW(grid.split(n - 1, 2, 0, pieces), Error);
}

// Grouping by chunk is a stable sort by chunk, by counting or by merging.
TEST(ChunkGrid, GroupByChunkIsAStableSort) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = rng() % 300;
    // Narrow chunk ranges take the counting sort, wide ones the merge sort.
    const std::uint64_t span = trial % 2 ? 1 + rng() % 20 : 1 + rng() % 1000000;
    const std::uint64_t base = rng() % 1000;
    std::vector<ChunkPiece> pieces(n);
    for (std::size_t i = 0; i < n; ++i) pieces[i] = ChunkPiece{base + rng() % span, rng() % 64, 1 + rng() % 8, i};
    if (trial % 7 == 0) std::sort(pieces.begin(), pieces.end(), [](auto& a, auto& b) { return a.chunk < b.chunk; });
    std::vector<ChunkPiece> expected = pieces;
    std::stable_sort(expected.begin(), expected.end(), [](auto& a, auto& b) { return a.chunk < b.chunk; });
    group_by_chunk(pieces);
    ASSERT_EQ(pieces.size(), expected.size());
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_EQ(pieces[i].chunk, expected[i].chunk);
      EXPECT_EQ(pieces[i].source, expected[i].source);  // sources are unique: order inside a chunk kept
      EXPECT_EQ(pieces[i].in_chunk_start, expected[i].in_chunk_start);
    }
  }
}

// The pieces of one chunk under a whole-extent selection are those of splitting the whole
// extent as one sequence (or as sequences cut anywhere), grouped by chunk; edge chunks and
// ranks 1 to 4.
TEST(ChunkGrid, WholeChunkPiecesMatchSplittingTheExtent) {
  const std::vector<std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>>> shapes = {
      {{10}, {4}}, {{7, 9}, {3, 4}}, {{8, 8}, {4, 4}}, {{5, 6, 7}, {2, 4, 3}}, {{3, 4, 5, 6}, {2, 3, 2, 4}}, {{1, 5}, {7, 7}}};
  for (const auto& [dims, chunk] : shapes) {
    const ChunkGrid grid(dims, chunk);
    std::uint64_t n = 1;
    for (std::uint64_t d : dims) n *= d;
    for (std::uint64_t cut : {n, std::uint64_t(5), std::uint64_t(1)}) {  // sequences of `cut` elements
      std::vector<ChunkPiece> split;
      for (std::uint64_t at = 0; at < n; at += cut) grid.split(at, std::min(cut, n - at), at, split);
      group_by_chunk(split);
      // Pieces cut by the sequences are merged back when contiguous, to compare with whole rows.
      std::vector<ChunkPiece> merged;
      for (const ChunkPiece& p : split)
        if (!merged.empty() && merged.back().chunk == p.chunk &&
            merged.back().in_chunk_start + merged.back().length == p.in_chunk_start &&
            merged.back().source + merged.back().length == p.source)
          merged.back().length += p.length;
        else
          merged.push_back(p);
      std::vector<ChunkPiece> whole;
      for (std::uint64_t c = 0; c < grid.chunk_count(); ++c) grid.whole_chunk_pieces(c, whole);
      ASSERT_EQ(whole.size(), merged.size()) << dims.size() << "-D, cut " << cut;
      for (std::size_t i = 0; i < whole.size(); ++i) {
        EXPECT_EQ(whole[i].chunk, merged[i].chunk);
        EXPECT_EQ(whole[i].in_chunk_start, merged[i].in_chunk_start);
        EXPECT_EQ(whole[i].length, merged[i].length);
        EXPECT_EQ(whole[i].source, merged[i].source);
      }
    }
  }
}
