// Extent changes: boundary chunks, HDF5's rewritten chunks and the elements outside the kept
// box agree with a brute-force enumeration over random shapes (1-D to 4-D, grow, shrink, both
// at once, zero extents).
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "h5sparse/error.hpp"
#include "h5sparse/extent_change.hpp"

using namespace h5sparse;
using Coords = std::vector<std::uint64_t>;

namespace {

// Every chunk origin of a grid covering `dims` (plus one chunk beyond, to test rejections).
std::vector<Coords> all_origins(const Coords& dims, const Coords& chunk) {
  std::vector<Coords> out;
  Coords scaled(dims.size(), 0);
  while (true) {
    Coords origin(dims.size());
    for (std::size_t d = 0; d < dims.size(); ++d) origin[d] = scaled[d] * chunk[d];
    out.push_back(origin);
    std::size_t d = dims.size();
    while (d-- > 0) {
      if (++scaled[d] <= dims[d] / chunk[d] + 1) break;
      scaled[d] = 0;
    }
    if (d == std::size_t(-1)) return out;
  }
}

void check_against_brute_force(const Coords& old_dims, const Coords& new_dims, const Coords& chunk) {
  const ExtentChange change(old_dims, new_dims, chunk);
  const std::size_t r = chunk.size();
  std::set<Coords> expected;
  for (const Coords& origin : all_origins(std::max(old_dims, new_dims), chunk)) {
    bool exists_both = true, straddles = false, hdf5_fills = false;
    for (std::size_t d = 0; d < r; ++d) {
      const std::uint64_t kept = std::min(old_dims[d], new_dims[d]);
      exists_both = exists_both && origin[d] < kept;
      const bool across = origin[d] < kept && origin[d] + chunk[d] > kept;
      straddles = straddles || (old_dims[d] != new_dims[d] && across);
      hdf5_fills = hdf5_fills || (new_dims[d] < old_dims[d] && across);
    }
    const bool boundary = exists_both && straddles;
    EXPECT_EQ(change.is_boundary(origin), boundary);
    EXPECT_EQ(change.rewritten_by_hdf5(origin), boundary && hdf5_fills);
    if (boundary) expected.insert(origin);
    if (!exists_both) continue;
    // Elements outside the kept box, element by element.
    const ChunkSelection outside = change.outside_kept(origin);
    std::uint64_t n = 1;
    for (std::uint64_t c : chunk) n *= c;
    ASSERT_EQ(outside.element_count(), n);
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t rest = i;
      bool out = false;
      for (std::size_t d = r; d-- > 0;) {
        out = out || origin[d] + rest % chunk[d] >= std::min(old_dims[d], new_dims[d]);
        rest /= chunk[d];
      }
      ASSERT_EQ(outside.test(i), out) << "element " << i;
    }
  }
  std::vector<Coords> visited;
  change.for_each_boundary_chunk([&](const Coords& origin) { visited.push_back(origin); });
  EXPECT_EQ(std::set<Coords>(visited.begin(), visited.end()).size(), visited.size()) << "a chunk visited twice";
  EXPECT_EQ(std::set<Coords>(visited.begin(), visited.end()), expected);
  EXPECT_GE(change.boundary_bound(), visited.size());
}

}  // namespace

TEST(ExtentChange, ShrinkFillsTheNewEdgeChunks) {
  const ExtentChange change({10, 10}, {6, 6}, {4, 4});
  std::vector<Coords> visited;
  change.for_each_boundary_chunk([&](const Coords& o) { visited.push_back(o); });
  EXPECT_EQ(visited, (std::vector<Coords>{{4, 0}, {4, 4}, {0, 4}}));
  EXPECT_TRUE(change.rewritten_by_hdf5({4, 4}));
  const ChunkSelection outside = change.outside_kept({4, 4});
  EXPECT_EQ(outside.defined_count(), 16u - 4u);  // the kept 2x2 corner of the chunk
  EXPECT_FALSE(outside.test(0));
  EXPECT_FALSE(outside.test(5));
  EXPECT_TRUE(outside.test(2));
}

TEST(ExtentChange, GrowExposesTheOldEdgeChunksOnly) {
  const ExtentChange change({10}, {30}, {4});
  std::vector<Coords> visited;
  change.for_each_boundary_chunk([&](const Coords& o) { visited.push_back(o); });
  EXPECT_EQ(visited, (std::vector<Coords>{{8}}));
  EXPECT_FALSE(change.rewritten_by_hdf5({8}));
  EXPECT_EQ(change.outside_kept({8}).defined_count(), 2u);
  // Growing from a multiple of the chunk size exposes no stored chunk.
  const ExtentChange aligned({8, 5}, {20, 5}, {4, 5});
  EXPECT_EQ(aligned.boundary_bound(), 0u);
  EXPECT_FALSE(ExtentChange({8}, {8}, {4}).changed());
}

TEST(ExtentChange, MatchesBruteForce) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t r = 1 + rng() % 4;
    Coords old_dims(r), new_dims(r), chunk(r);
    for (std::size_t d = 0; d < r; ++d) {
      chunk[d] = 1 + rng() % 4;
      old_dims[d] = rng() % 11;
      new_dims[d] = rng() % 3 == 0 ? old_dims[d] : rng() % 11;
    }
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    check_against_brute_force(old_dims, new_dims, chunk);
  }
}

TEST(ExtentChange, RejectsMismatchedRanks) {
  EXPECT_THROW(ExtentChange({1, 2}, {1}, {1, 1}), Error);
  EXPECT_THROW(ExtentChange({1}, {1}, {0}), Error);
  EXPECT_THROW(ExtentChange({}, {}, {}), Error);
}
