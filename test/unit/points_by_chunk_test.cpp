// Grouping a coordinate write's points by chunk (core/src/engine/points_by_chunk.hpp, private
// to core): against a stable sort by chunk and offset, on grids of few chunks (a bucket a
// chunk) and of very many (buckets of chunk ranges), and in parts.
#include "points_by_chunk.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>

#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse::detail {
namespace {

struct Located {
  std::uint64_t chunk, offset, index;
  bool operator==(const Located& o) const { return std::tie(chunk, offset, index) == std::tie(o.chunk, o.offset, o.index); }
};

// The model: each point's chunk and offset by the grid's own arithmetic, stably sorted.
std::vector<Located> model(const ChunkGrid& grid, const std::vector<std::uint64_t>& coords) {
  const std::size_t rank = grid.rank();
  std::vector<Located> out;
  for (std::size_t i = 0; i < coords.size() / rank; ++i) {
    std::uint64_t chunk = 0, offset = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      const std::uint64_t c = coords[i * rank + d], cd = grid.chunk_dims()[d];
      chunk = chunk * ((grid.dataset_dims()[d] + cd - 1) / cd) + c / cd;
      offset = offset * cd + c % cd;
    }
    out.push_back(Located{chunk, offset, i});
  }
  std::stable_sort(out.begin(), out.end(), [](const Located& a, const Located& b) {
    return std::tie(a.chunk, a.offset) < std::tie(b.chunk, b.offset);
  });
  return out;
}

std::vector<Located> flattened(const PointsByChunk& points, std::size_t first = 0) {
  std::vector<Located> out;
  EXPECT_EQ(points.starts.size(), points.groups() + 1);
  for (std::size_t g = 0; g < points.groups(); ++g) {
    EXPECT_LT(points.starts[g], points.starts[g + 1]) << "an empty group";
    if (g > 0) {
      EXPECT_LT(points.chunks[g - 1], points.chunks[g]) << "a chunk in two groups, or out of order";
    }
    for (std::size_t i = points.starts[g]; i < points.starts[g + 1]; ++i)
      out.push_back(Located{points.chunks[g], points.points[i].offset, first + points.points[i].index});
  }
  return out;
}

// n points in a few clusters of the extent (so grids of very many chunks still meet the same
// chunks often), a tenth of them repeating an earlier coordinate.
std::vector<std::uint64_t> clustered_points(const Coords& dims, std::size_t n, std::mt19937_64& rng) {
  const std::size_t rank = dims.size();
  std::vector<std::uint64_t> coords;
  Coords centre(rank);
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 97 == 0)
      for (std::size_t d = 0; d < rank; ++d) centre[d] = rng() % dims[d];
    if (i > 0 && rng() % 10 == 0) {
      const std::size_t j = rng() % i;
      coords.insert(coords.end(), coords.begin() + std::ptrdiff_t(j * rank), coords.begin() + std::ptrdiff_t((j + 1) * rank));
      continue;
    }
    for (std::size_t d = 0; d < rank; ++d) coords.push_back(std::min(dims[d] - 1, centre[d] + rng() % 300));
  }
  return coords;
}

TEST(PointsByChunk, GroupLikeAStableSortByChunkThenOffset) {
  const std::uint64_t huge = std::uint64_t(1) << 40;
  const std::vector<std::pair<Coords, Coords>> grids = {
      {{1000}, {64}},                          // rank 1, a bucket a chunk
      {{4096, 4096}, {256, 256}},              // 256 chunks
      {{1000, 999}, {100, 7}},                 // chunk dimensions not powers of two
      {{huge, huge}, {1024, 1024}},            // 2^60 chunks: buckets of chunk ranges
      {{huge, 5000, 3}, {3, 1000, 3}},         // rank 3, not powers of two, many chunks
      {{40, 30, 20, 10, 5}, {7, 8, 9, 4, 5}},  // rank 5: the loop of any rank
  };
  std::mt19937_64 rng(5);
  for (const auto& [dims, chunk] : grids)
    for (std::size_t n : {0, 1, 2, 63, 64, 5000, 70000}) {
      const ChunkGrid grid(dims, chunk);
      const std::vector<std::uint64_t> coords = clustered_points(dims, n, rng);
      EXPECT_EQ(flattened(group_points(grid, coords.data(), n)), model(grid, coords))
          << coords_text(dims) << " in chunks " << coords_text(chunk) << ", " << n << " points";
    }
}

TEST(PointsByChunk, SortedInputStaysInItsOrder) {
  const ChunkGrid grid({std::uint64_t(1) << 40}, {1024});
  std::vector<std::uint64_t> coords;
  for (std::uint64_t i = 0; i < 100000; ++i) coords.push_back(i * 7919 * 1024 + i % 1024);
  const PointsByChunk points = group_points(grid, coords.data(), coords.size());
  EXPECT_EQ(points.groups(), coords.size());
  EXPECT_EQ(flattened(points), model(grid, coords));
}

TEST(PointsByChunk, PartsCountIndicesFromTheirFirstPoint) {
  const ChunkGrid grid({100, 100}, {10, 10});
  std::mt19937_64 rng(7);
  const std::vector<std::uint64_t> coords = clustered_points({100, 100}, 8, rng);
  std::vector<std::size_t> firsts;
  std::vector<Located> all;
  for_each_part(
      grid, coords.data(), 8,
      [&](const PointsByChunk& points, std::size_t first) {
        firsts.push_back(first);
        for (const Located& l : flattened(points, first)) all.push_back(l);
      },
      3);
  EXPECT_EQ(firsts, (std::vector<std::size_t>{0, 3, 6}));
  std::vector<Located> expected;
  for (std::size_t first : firsts) {
    const std::vector<std::uint64_t> part(coords.begin() + std::ptrdiff_t(first * 2),
                                          coords.begin() + std::ptrdiff_t(std::min<std::size_t>(first + 3, 8) * 2));
    for (Located l : model(grid, part)) expected.push_back(Located{l.chunk, l.offset, first + l.index});
  }
  EXPECT_EQ(all, expected);
  std::size_t calls = 0;
  for_each_part(grid, coords.data(), 0, [&](const PointsByChunk& points, std::size_t) {
    EXPECT_EQ(points.groups(), 0u);
    ++calls;
  });
  EXPECT_EQ(calls, 1u);
}

TEST(PointsByChunk, PartsCheckEveryCoordinateBeforeTheFirst) {
  const ChunkGrid grid({100, 100}, {10, 10});
  const std::vector<std::uint64_t> coords = {1, 1, 2, 2, 3, 3, 4, 4, 5, 100};
  std::size_t calls = 0;
  try {
    for_each_part(grid, coords.data(), 5, [&](const PointsByChunk&, std::size_t) { ++calls; }, 2);
    FAIL() << "a coordinate outside the extent was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("point 4"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls, 0u);
}

}  // namespace
}  // namespace h5sparse::detail
