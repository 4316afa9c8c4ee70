#include "selection_boxes.hpp"

#include "error_stack.hpp"

namespace h5sparse::hdf5 {
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

std::vector<Box> selection_boxes(hid_t space) {
  const int ndims = H5Sget_simple_extent_ndims(space);
  throw_if_negative(ndims, "cannot read the selection's rank");
  const std::size_t rank = std::size_t(ndims);
  std::vector<hsize_t> dims(rank);
  throw_if_negative(H5Sget_simple_extent_dims(space, dims.data(), nullptr), "cannot read the selection's extent");
  switch (H5Sget_select_type(space)) {
    case H5S_SEL_NONE: return {};
    case H5S_SEL_ALL: return {Box{Coords(rank, 0), Coords(dims.begin(), dims.end())}};
    case H5S_SEL_HYPERSLABS: {
      std::vector<Box> boxes;
      if (as_one_box(space, rank, boxes)) return boxes;
      const hssize_t n = H5Sget_select_hyper_nblocks(space);
      throw_if_negative(n, "cannot count the selection's blocks");
      H5SPARSE_FAIL_IF(n > kMaxBlocks, ErrorCode::unsupported,
                       "a region of " + std::to_string(n) + " hyperslab blocks (more than 2^20): select fewer, larger blocks");
      std::vector<hsize_t> corners(std::size_t(n) * 2 * rank);
      throw_if_negative(H5Sget_select_hyper_blocklist(space, 0, hsize_t(n), corners.data()),
                        "cannot list the selection's blocks");
      return boxes_of(corners, std::size_t(n), rank, true);
    }
    case H5S_SEL_POINTS: {
      const hssize_t n = H5Sget_select_elem_npoints(space);
      throw_if_negative(n, "cannot count the selected points");
      std::vector<hsize_t> points(std::size_t(n) * rank);
      throw_if_negative(H5Sget_select_elem_pointlist(space, 0, hsize_t(n), points.data()),
                        "cannot list the selected points");
      return boxes_of(points, std::size_t(n), rank, false);
    }
    default: throw Error(ErrorCode::hdf5_call, "cannot read the selection's type");
  }
}

}  // namespace h5sparse::hdf5
