// A chunk's offset ranges inside boxes (core/src/engine/region_chunks.hpp, private to core):
// against the offsets each box holds, element by element, for random boxes in 1-D, 2-D (the
// row sweep) and 3-D chunks, overlapping, touching, empty and whole.
#include "region_chunks.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace h5sparse::detail {
namespace {

// The model: every offset of every box, then runs of consecutive offsets.
std::vector<OffsetRange> model(const std::vector<LocalBox>& boxes, const Coords& chunk) {
  std::set<std::uint64_t> inside;
  std::uint64_t n = 1;
  for (const std::uint64_t c : chunk) n *= c;
  for (std::uint64_t offset = 0; offset < n; ++offset) {
    Coords at(chunk.size());
    for (std::size_t d = chunk.size(), rest = offset; d-- > 0; rest /= chunk[d]) at[d] = rest % chunk[d];
    for (const LocalBox& b : boxes) {
      bool holds = true;
      for (std::size_t d = 0; d < chunk.size(); ++d) holds = holds && b.lo[d] <= at[d] && at[d] < b.hi[d];
      if (holds) inside.insert(offset);
    }
  }
  std::vector<OffsetRange> ranges;
  for (const std::uint64_t offset : inside) {
    if (!ranges.empty() && ranges.back().end == offset)
      ++ranges.back().end;
    else
      ranges.push_back({offset, offset + 1});
  }
  return ranges;
}

TEST(OffsetRanges, MatchTheOffsetsOfTheBoxes) {
  std::mt19937_64 random(36);
  for (const Coords& chunk : {Coords{37}, Coords{16, 8}, Coords{9, 13}, Coords{1, 20}, Coords{4, 5, 6}}) {
    for (int round = 0; round < 300; ++round) {
      std::vector<LocalBox> boxes(random() % 7);
      for (LocalBox& b : boxes) {
        b.lo.resize(chunk.size());
        b.hi.resize(chunk.size());
        for (std::size_t d = 0; d < chunk.size(); ++d) {
          b.lo[d] = random() % (chunk[d] + 1);
          b.hi[d] = b.lo[d] + random() % (chunk[d] + 1 - b.lo[d]);  // empty ones too
        }
      }
      const std::vector<OffsetRange> got = offset_ranges(boxes, chunk), want = model(boxes, chunk);
      ASSERT_EQ(got.size(), want.size()) << "chunk of rank " << chunk.size() << ", round " << round;
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].first, want[i].first);
        EXPECT_EQ(got[i].end, want[i].end);
      }
    }
  }
}

TEST(OffsetRanges, ColumnsOfEveryRowComeInOrder) {
  // A list of genes in a chunk: the same rows, columns given out of order.
  const Coords chunk{4, 16};
  const std::vector<LocalBox> boxes{{{0, 9}, {4, 10}}, {{0, 0}, {4, 3}}, {{0, 3}, {4, 4}}, {{0, 15}, {4, 16}}};
  const std::vector<OffsetRange> got = offset_ranges(boxes, chunk);
  // Each row's last column and the next row's first join.
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> want{
      {0, 4}, {9, 10}, {15, 20}, {25, 26}, {31, 36}, {41, 42}, {47, 52}, {57, 58}, {63, 64}};
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    EXPECT_EQ(got[i].end, want[i].second);
  }
}

}  // namespace
}  // namespace h5sparse::detail
