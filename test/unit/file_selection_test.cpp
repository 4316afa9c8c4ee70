// hdf5_support's file_selection: HDF5 file selections to chunk pieces and back, on dataspaces
// alone (no file).
#include "file_selection.hpp"

#include <gtest/gtest.h>

#include "h5sparse/error.hpp"

using namespace h5sparse;
using hdf5::checked;
using hdf5::Handle;

namespace {

Handle space_of(std::vector<hsize_t> dims) {
  return checked(H5Screate_simple(int(dims.size()), dims.data(), nullptr), "dataspace");
}

}  // namespace

namespace h5sparse {
bool operator==(const ChunkPiece& a, const ChunkPiece& b) {
  return a.chunk == b.chunk && a.in_chunk_start == b.in_chunk_start && a.length == b.length && a.source == b.source;
}
}  // namespace h5sparse

TEST(FileSelection, HyperslabRowsSplitAtChunkBordersGroupedByChunk) {
  Handle space = space_of({4, 6});
  const hsize_t start[] = {1, 2}, count[] = {2, 3};
  ASSERT_GE(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr), 0);
  const std::vector<ChunkPiece> pieces = hdf5::selection_pieces(space.get(), ChunkGrid({4, 6}, {2, 3}));
  // Rows 1 and 2, columns 2-4: each row meets two chunks; `source` numbers elements row-major.
  const std::vector<ChunkPiece> expected = {{0, 5, 1, 0}, {1, 3, 2, 1}, {2, 2, 1, 3}, {3, 0, 2, 4}};
  EXPECT_TRUE(pieces == expected);
}

TEST(FileSelection, EveryElementGivesWhatSplittingEachRunGives) {
  const ChunkGrid grid({5, 7}, {2, 3});
  Handle all = space_of({5, 7});
  ASSERT_TRUE(hdf5::selects_everything(all.get(), grid, 35));
  // The same elements as points, in row-major order: not a hyperslab, so split run by run.
  std::vector<hsize_t> coords;
  for (hsize_t r = 0; r < 5; ++r)
    for (hsize_t c = 0; c < 7; ++c) coords.insert(coords.end(), {r, c});
  Handle points = space_of({5, 7});
  ASSERT_GE(H5Sselect_elements(points.get(), H5S_SELECT_SET, 35, coords.data()), 0);
  ASSERT_FALSE(hdf5::selects_everything(points.get(), grid, 35));
  EXPECT_TRUE(hdf5::selection_pieces(all.get(), grid) == hdf5::selection_pieces(points.get(), grid));
}

TEST(FileSelection, LinearElementsBecomeCoordinates) {
  Handle space = space_of({4, 6});
  hdf5::select_linear_elements(space.get(), {4, 6}, {1, 7, 23});
  std::vector<hsize_t> coords(6);
  ASSERT_GE(H5Sget_select_elem_pointlist(space.get(), 0, 3, coords.data()), 0);
  EXPECT_EQ(coords, (std::vector<hsize_t>{0, 1, 1, 1, 3, 5}));
}

TEST(FileSelection, ChunksAreSelectedInsideTheExtent) {
  const ChunkGrid grid({5, 6}, {2, 3});
  Handle space = space_of({5, 6});
  hdf5::select_chunks(space.get(), grid, {0, 5});  // chunk 5 is the edge chunk at (4, 3)
  EXPECT_EQ(H5Sget_select_npoints(space.get()), 6 + 3);
}

TEST(FileSelection, ResolvingChecksExtentAndMemoryCount) {
  Handle other = space_of({3, 6});
  try {
    hdf5::resolve_selection(space_of({4, 6}), other.get(), {2, 3});
    FAIL() << "a file dataspace of another extent was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("differs from the dataset's"), std::string::npos) << e.what();
  }
  const hdf5::FileSelection sel = hdf5::resolve_selection(space_of({4, 6}), H5S_ALL, {2, 3});
  EXPECT_EQ(sel.npoints, 24);
  EXPECT_EQ(hdf5::memory_space_for(H5S_ALL, sel), sel.space);
  Handle small = space_of({23});
  EXPECT_THROW(hdf5::memory_space_for(small.get(), sel), Error);
}
