// A file selection in the engine's terms (file_selection.hpp).
#include "file_selection.hpp"

#include <algorithm>
#include <memory>

#include "error_stack.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "handle.hpp"

namespace h5sparse::hdf5 {

std::vector<std::uint64_t> extent_of(hid_t space) {
  const int rank = H5Sget_simple_extent_ndims(space);
  throw_if_negative(rank, "cannot read the dataspace rank");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  throw_if_negative(H5Sget_simple_extent_dims(space, dims.data(), nullptr), "cannot read the dataspace extent");
  return {dims.begin(), dims.end()};
}

void check_file_selection(hid_t space, const std::vector<std::uint64_t>& dims, const std::string& context) {
  const std::vector<std::uint64_t> extent = extent_of(space);
  H5SPARSE_FAIL_IF(extent != dims, ErrorCode::invalid_argument,
                   context + "the file dataspace's extent " + coords_text(extent) + " differs from the dataset's " +
                       coords_text(dims));
  H5SPARSE_FAIL_IF(H5Sselect_valid(space) <= 0, ErrorCode::invalid_argument,
                   context + "the file selection lies outside the dataset's extent " + coords_text(dims));
}

FileSelection resolve_selection(Handle full, hid_t file_space, const std::vector<std::uint64_t>& chunk_dims) {
  const std::vector<std::uint64_t> dims = extent_of(full.get());
  const hid_t space = file_space == H5S_ALL ? full.get() : file_space;
  if (file_space != H5S_ALL) check_file_selection(file_space, dims);
  const hssize_t npoints = H5Sget_select_npoints(space);
  throw_if_negative(npoints, "cannot count the selected elements");
  ChunkGrid grid(dims, chunk_dims);
  return FileSelection{std::move(full), space, std::move(grid), npoints};
}

hid_t memory_space_for(hid_t mem_space, const FileSelection& sel) {
  const hid_t mspace = mem_space == H5S_ALL ? sel.space : mem_space;
  const hssize_t mem_points = H5Sget_select_npoints(mspace);
  throw_if_negative(mem_points, "cannot count the selected memory elements");
  H5SPARSE_FAIL_IF(mem_points != sel.npoints, ErrorCode::invalid_argument,
                   "memory selection has " + std::to_string(mem_points) + " elements, file selection " +
                       std::to_string(sel.npoints));
  return mspace;
}

bool selects_everything(hid_t space, const ChunkGrid& grid, std::uint64_t npoints) {
  const H5S_sel_type type = H5Sget_select_type(space);
  throw_if_negative(type, "cannot read the selection type");
  if (type == H5S_SEL_ALL) return true;
  if (type != H5S_SEL_HYPERSLABS) return false;
  std::uint64_t total = 1;
  for (std::uint64_t d : grid.dataset_dims()) total *= d;
  return npoints == total;
}

namespace {

// Each run of the selection split at chunk borders, in the default iteration order: the
// order in which H5Dwrite pairs memory and file elements.
void split_runs(hid_t space, const ChunkGrid& grid, std::vector<ChunkPiece>& pieces) {
  Handle iter = checked(H5Ssel_iter_create(space, 1, 0), "cannot iterate the selection");
  constexpr std::size_t kBatch = 4096;
  // Uninitialised: zeroing 64 KiB per call was a tenth of a one-row write (Hangar's samples).
  const std::unique_ptr<hsize_t[]> offsets(new hsize_t[kBatch]);
  const std::unique_ptr<std::size_t[]> lengths(new std::size_t[kBatch]);
  std::uint64_t source = 0;
  while (true) {
    std::size_t nseq = 0, nelem = 0;
    throw_if_negative(H5Ssel_iter_get_seq_list(iter.get(), kBatch, SIZE_MAX, &nseq, &nelem, offsets.get(),
                                               lengths.get()),
                      "cannot iterate the selection");
    if (nseq == 0) return;
    for (std::size_t i = 0; i < nseq; ++i) {
      grid.split(offsets[i], lengths[i], source, pieces);
      source += lengths[i];
    }
  }
}

}  // namespace

std::vector<ChunkPiece> selection_pieces(hid_t space, const ChunkGrid& grid) {
  std::vector<ChunkPiece> pieces;
  // Every element (a whole-dataset write): each chunk's rows follow from its position, in the
  // order split and group_by_chunk would give them (a fifth as many instructions).
  const hssize_t npoints = H5Sget_select_npoints(space);
  throw_if_negative(npoints, "cannot count the selected elements");
  if (selects_everything(space, grid, std::uint64_t(npoints))) {
    for (std::uint64_t chunk = 0, chunks = grid.chunk_count(); chunk < chunks; ++chunk)
      grid.whole_chunk_pieces(chunk, pieces);
    return pieces;
  }
  split_runs(space, grid, pieces);
  // Group by chunk, keeping selection order inside a chunk (later duplicates win).
  group_by_chunk(pieces);
  return pieces;
}

void select_linear_elements(hid_t space, const std::vector<std::uint64_t>& dims,
                            const std::vector<std::uint64_t>& linear) {
  const std::size_t rank = dims.size();
  std::vector<hsize_t> coords(linear.size() * rank);
  for (std::size_t i = 0; i < linear.size(); ++i) {
    std::uint64_t rest = linear[i];
    for (std::size_t d = rank; d-- > 0;) {
      coords[i * rank + d] = rest % dims[d];
      rest /= dims[d];
    }
  }
  throw_if_negative(H5Sselect_elements(space, H5S_SELECT_SET, linear.size(), coords.data()),
                    "cannot select the defined elements");
}

void select_chunks(hid_t space, const ChunkGrid& grid, const std::vector<std::uint64_t>& chunks) {
  throw_if_negative(H5Sselect_none(space), "cannot clear the selection");
  const std::size_t rank = grid.rank();
  std::vector<hsize_t> start(rank), count(rank);
  for (const std::uint64_t chunk : chunks) {
    const std::vector<std::uint64_t> origin = grid.chunk_origin(chunk);
    for (std::size_t j = 0; j < rank; ++j) {
      start[j] = origin[j];
      count[j] = std::min(grid.chunk_dims()[j], grid.dataset_dims()[j] - origin[j]);
    }
    throw_if_negative(H5Sselect_hyperslab(space, H5S_SELECT_OR, start.data(), nullptr, count.data(), nullptr),
                      "cannot select a chunk");
  }
}

std::vector<hsize_t> point_list(hid_t space, std::size_t n, std::size_t rank) {
  std::vector<hsize_t> coords(n * rank);
  throw_if_negative(H5Sget_select_elem_pointlist(space, 0, n, coords.data()), "cannot list the selected points");
  return coords;
}

namespace {

std::vector<Box> boxes_of(const std::vector<hsize_t>& corners, std::size_t count, std::size_t rank, bool pairs) {
  std::vector<Box> boxes(count, Box{Coords(rank), Coords(rank)});
  const std::size_t stride = pairs ? 2 * rank : rank;
  for (std::size_t b = 0; b < count; ++b)
    for (std::size_t d = 0; d < rank; ++d) {
      const hsize_t first = corners[b * stride + d];
      const hsize_t last = pairs ? corners[b * stride + rank + d] : first;  // inclusive
      boxes[b].start[d] = first;
      boxes[b].count[d] = last - first + 1;
    }
  return boxes;
}

// A regular hyperslab whose blocks touch along every dimension (stride = block, or one block):
// one box, however many blocks HDF5 counts (h5py selects a slice as blocks of one element).
bool as_one_box(hid_t space, std::size_t rank, std::vector<Box>& boxes) {
  if (H5Sis_regular_hyperslab(space) <= 0) return false;
  std::vector<hsize_t> start(rank), stride(rank), count(rank), block(rank);
  throw_if_negative(H5Sget_regular_hyperslab(space, start.data(), stride.data(), count.data(), block.data()),
                    "cannot read the regular hyperslab");
  Box box{Coords(rank), Coords(rank)};
  for (std::size_t d = 0; d < rank; ++d) {
    if (count[d] > 1 && stride[d] != block[d]) return false;
    box.start[d] = start[d];
    box.count[d] = count[d] * block[d];
  }
  boxes.assign(1, box);
  return true;
}

// Regions of more blocks than this are refused: each block is a box the scan tests chunks
// against.
constexpr hssize_t kMaxBlocks = hssize_t(1) << 20;

}  // namespace

namespace {

// The boxes of "all" or of a hyperslab selection; false for other selections and for
// hyperslabs of more than kMaxBlocks blocks.
bool region_boxes(hid_t space, std::vector<Box>& boxes) {
  const std::vector<std::uint64_t> dims = extent_of(space);
  const std::size_t rank = dims.size();
  switch (H5Sget_select_type(space)) {
    case H5S_SEL_ALL: boxes.assign(1, Box{Coords(rank, 0), dims}); return true;
    case H5S_SEL_HYPERSLABS: {
      if (as_one_box(space, rank, boxes)) return true;
      const hssize_t n = H5Sget_select_hyper_nblocks(space);
      throw_if_negative(n, "cannot count the selection's blocks");
      if (n > kMaxBlocks) return false;
      std::vector<hsize_t> corners(std::size_t(n) * 2 * rank);
      throw_if_negative(H5Sget_select_hyper_blocklist(space, 0, hsize_t(n), corners.data()),
                        "cannot list the selection's blocks");
      boxes = boxes_of(corners, std::size_t(n), rank, true);
      return true;
    }
    default: return false;
  }
}

}  // namespace

std::vector<Box> selection_boxes(hid_t space) {
  const H5S_sel_type type = H5Sget_select_type(space);
  throw_if_negative(type, "cannot read the selection's type");
  if (type == H5S_SEL_NONE) return {};
  std::vector<Box> boxes;
  if (type != H5S_SEL_POINTS) {
    H5SPARSE_FAIL_IF(!region_boxes(space, boxes), ErrorCode::unsupported,
                     "a region of more than 2^20 hyperslab blocks: select fewer, larger blocks");
    return boxes;
  }
  const std::size_t rank = extent_of(space).size();
  const hssize_t n = H5Sget_select_elem_npoints(space);
  throw_if_negative(n, "cannot count the selected points");
  std::vector<hsize_t> points(std::size_t(n) * rank);
  throw_if_negative(H5Sget_select_elem_pointlist(space, 0, hsize_t(n), points.data()), "cannot list the selected points");
  return boxes_of(points, std::size_t(n), rank, false);
}

std::vector<ChunkPiece> stored_pieces(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel) {
  std::vector<Box> boxes;
  if (region_boxes(sel.space, boxes)) return engine.stored_region_pieces(store, sel.grid, boxes);
  return selection_pieces(sel.space, sel.grid);
}

PointSpaces point_spaces(const std::vector<std::uint64_t>& dims, std::size_t n, const hsize_t* coords) {
  const std::vector<hsize_t> extent(dims.begin(), dims.end());
  const hsize_t count = n;
  PointSpaces spaces{checked(H5Screate_simple(int(extent.size()), extent.data(), nullptr), "cannot create a dataspace"),
                     checked(H5Screate_simple(1, &count, nullptr), "cannot describe the values")};
  throw_if_negative(n == 0 ? H5Sselect_none(spaces.file.get())
                           : H5Sselect_elements(spaces.file.get(), H5S_SELECT_SET, n, coords),
                    "cannot select the coordinates");
  return spaces;
}

void erase_selection(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel) {
  std::vector<Box> boxes;
  if (H5Sget_select_type(sel.space) == H5S_SEL_POINTS && !engine.params().is_var()) {
    const std::vector<hsize_t> coords = point_list(sel.space, std::size_t(sel.npoints), sel.grid.rank());
    engine.erase_coordinates(store, sel.grid, reinterpret_cast<const std::uint64_t*>(coords.data()),
                             std::size_t(sel.npoints));
  } else if (region_boxes(sel.space, boxes)) {
    engine.erase_region(store, sel.grid, boxes);
  } else {
    engine.erase(store, sel.grid, selection_pieces(sel.space, sel.grid));
  }
}

}  // namespace h5sparse::hdf5
