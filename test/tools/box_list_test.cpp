// The BLOCK/POINT decomposition and its text form: exact (every element once), canonical
// (the same set gives the same boxes, whatever order rows arrive in), and readable back.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <sstream>

#include "box_list.hpp"
#include "h5sparse/error.hpp"
#include "locations_text.hpp"

using h5sparse::tool::BoxList;

namespace {

using Point = std::vector<std::uint64_t>;

std::set<Point> expand(const BoxList& boxes) {
  std::set<Point> out;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    Point at(boxes.lo(i), boxes.lo(i) + boxes.rank());
    for (bool more = true; more;) {
      out.insert(at);
      more = false;
      for (std::size_t d = boxes.rank(); d-- > 0;) {
        if (at[d] < boxes.hi(i)[d]) {
          ++at[d];
          more = true;
          break;
        }
        at[d] = boxes.lo(i)[d];
      }
    }
  }
  return out;
}

BoxList from_points(const std::vector<Point>& points, std::size_t rank) {
  BoxList boxes(rank);
  for (const Point& p : points) boxes.add_run(p.data(), p[rank - 1], 1);
  boxes.canonicalize();
  return boxes;
}

}  // namespace

TEST(BoxList, RfcFigureGivesTwoBlocksAndThreePoints) {
  std::vector<Point> points;
  for (std::uint64_t r = 2; r <= 4; ++r)
    for (std::uint64_t c = 2; c <= 7; ++c) points.push_back({r, c});
  for (std::uint64_t c = 0; c <= 2; ++c) points.push_back({6, c});
  points.push_back({5, 9});
  points.push_back({11, 1});
  points.push_back({12, 8});
  std::shuffle(points.begin(), points.end(), std::mt19937(3));
  const BoxList boxes = from_points(points, 2);
  ASSERT_EQ(boxes.size(), 5u);
  EXPECT_EQ(Point(boxes.lo(0), boxes.lo(0) + 2), (Point{2, 2}));
  EXPECT_EQ(Point(boxes.hi(0), boxes.hi(0) + 2), (Point{4, 7}));
  EXPECT_EQ(Point(boxes.lo(1), boxes.lo(1) + 2), (Point{5, 9}));
  EXPECT_EQ(Point(boxes.lo(2), boxes.lo(2) + 2), (Point{6, 0}));
  EXPECT_EQ(Point(boxes.hi(2), boxes.hi(2) + 2), (Point{6, 2}));
  EXPECT_EQ(boxes.volume(3), 1u);
  EXPECT_EQ(boxes.element_count(), 24u);
}

TEST(BoxList, RunsSplitAcrossChunksMergeBack) {
  BoxList boxes(3);
  const std::uint64_t row[2] = {1, 2};
  boxes.add_run(row, 8, 8);  // two chunks of 8 along the last dimension
  boxes.add_run(row, 0, 8);
  const std::uint64_t row2[2] = {2, 2};
  boxes.add_run(row2, 0, 16);
  boxes.canonicalize();
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(Point(boxes.lo(0), boxes.lo(0) + 3), (Point{1, 2, 0}));
  EXPECT_EQ(Point(boxes.hi(0), boxes.hi(0) + 3), (Point{2, 2, 15}));
}

TEST(BoxList, RandomSetsAreCoveredExactlyAndCanonically) {
  std::mt19937 rng(7);
  for (std::size_t rank = 1; rank <= 4; ++rank) {
    for (int trial = 0; trial < 20; ++trial) {
      std::set<Point> truth;
      std::uniform_int_distribution<std::uint64_t> coord(0, 6);
      const int n = int(rng() % 150);
      for (int k = 0; k < n; ++k) {
        Point p(rank);
        for (auto& v : p) v = coord(rng);
        truth.insert(p);
      }
      std::vector<Point> points(truth.begin(), truth.end());
      const BoxList a = from_points(points, rank);
      std::shuffle(points.begin(), points.end(), rng);
      const BoxList b = from_points(points, rank);
      EXPECT_EQ(expand(a), truth);
      EXPECT_EQ(a.element_count(), truth.size());  // disjoint
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t i = 0; i < a.size(); ++i)
        EXPECT_TRUE(std::equal(a.lo(i), a.lo(i) + 2 * rank, b.lo(i)));
    }
  }
}

TEST(LocationsText, ParsesDumpOutputAndTheRfcOneLineForm) {
  std::istringstream dump(
      "HDF5 \"f.h5\" {\nDATASET \"/a/b\" {\n   DATA {\n"
      "      DEFINED_SPARSE_DATA BLOCK (2,2)-(4,7)\n      DATA {\n      (2,2) 66, 69\n      }\n"
      "      DEFINED_SPARSE_DATA POINT (5,9), (11,1)\n   }\n}\nDATASET \"/c\" {\n"
      "BLOCK  (2,2)-(4,7), (6,0)-(6,2) POINT (5,9), (11, 1), (12,8)\n}\n");
  const auto parsed = h5sparse::tool::parse_locations(dump, "list");
  ASSERT_EQ(parsed.size(), 2u);
  EXPECT_EQ(parsed[0].dataset, "/a/b");
  EXPECT_EQ(parsed[0].boxes.size(), 3u);
  EXPECT_EQ(parsed[0].boxes.element_count(), 20u);
  EXPECT_EQ(parsed[1].dataset, "/c");
  EXPECT_EQ(parsed[1].boxes.size(), 5u);
  EXPECT_EQ(parsed[1].boxes.element_count(), 24u);
}

TEST(LocationsText, MalformedEntriesNameTheLine) {
  for (const char* bad : {"BLOCK (4,4)-(2,2)", "POINT (1,2), (3)", "POINT (1,x)", "BLOCK (1,2)", "POINT (1,2) junk"}) {
    std::istringstream in(std::string("# list\n") + bad + "\n");
    try {
      h5sparse::tool::parse_locations(in, "l.txt");
      ADD_FAILURE() << bad;
    } catch (const h5sparse::Error& e) {
      EXPECT_EQ(e.code(), h5sparse::ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("l.txt:2"), std::string::npos) << e.what();
    }
  }
}
