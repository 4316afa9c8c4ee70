// A dataset's file selection (an HDF5 dataspace) in the sparse engine's terms: chunk pieces
// (core's chunk_grid.hpp) in the order H5Dread/H5Dwrite pair file and memory elements, and
// back: the selection of a list of elements or of whole chunks.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/engine/coordinates.hpp"
#include "handle.hpp"

namespace h5sparse {
class SparseEngine;
}

namespace h5sparse::hdf5 {

/// A simple dataspace's dimensions.
std::vector<std::uint64_t> extent_of(hid_t space);

/// Refuses a file dataspace whose extent is not `dims` or whose selection lies outside it;
/// `context` (empty, or ending in ": ") starts the message.
void check_file_selection(hid_t space, const std::vector<std::uint64_t>& dims, const std::string& context = "");

/// A transfer's file selection resolved against the dataset's current extent.
struct FileSelection {
  Handle full;  ///< the dataset's current dataspace
  hid_t space;  ///< the selection to use (full or the caller's)
  ChunkGrid grid;
  hssize_t npoints;
};
/// `file_space` (H5S_ALL: every element) checked against `full`, the dataset's dataspace, of
/// a dataset of chunks `chunk_dims`.
FileSelection resolve_selection(Handle full, hid_t file_space, const std::vector<std::uint64_t>& chunk_dims);

/// The memory dataspace of a transfer (H5S_ALL: the file selection), checked to select as
/// many elements as the file selection.
hid_t memory_space_for(hid_t mem_space, const FileSelection& sel);

/// True when the selection is every element of the extent: all, or a hyperslab selection with as
/// many elements (a hyperslab never selects an element twice; its order is row-major).
bool selects_everything(hid_t space, const ChunkGrid& grid, std::uint64_t npoints);

/// The selection's pieces grouped by chunk, in selection order inside each chunk (`source`
/// numbers the elements in the order H5Dread/H5Dwrite pair them with memory elements).
std::vector<ChunkPiece> selection_pieces(hid_t space, const ChunkGrid& grid);

/// The coordinates (n x rank) of a point selection of n points, in selection order.
std::vector<hsize_t> point_list(hid_t space, std::size_t n, std::size_t rank);

/// The selected elements as boxes, for the region of a coordinate read: "all" is the extent,
/// a hyperslab its blocks (a contiguous regular hyperslab, as h5py selects a slice, one box),
/// points one box each, "none" no box. More than 2^20 blocks: Error(unsupported).
std::vector<Box> selection_boxes(hid_t space);

/// The selection's pieces in the chunks `store` holds, for erase, get-defined and
/// check_chunks (SparseEngine::stored_region_pieces): "all" and hyperslabs of up to 2^20
/// blocks look up only the stored chunks they meet, so their cost follows those, not the
/// selection's size; other selections give selection_pieces.
std::vector<ChunkPiece> stored_pieces(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel);

/// A coordinate list as H5Dwrite takes it: the file dataspace (extent `dims`) with the `n`
/// points selected (none when n is 0) and a memory dataspace of n values.
struct PointSpaces {
  Handle file, memory;
};
PointSpaces point_spaces(const std::vector<std::uint64_t>& dims, std::size_t n, const hsize_t* coords);

/// Makes the selected elements undefined: points by coordinates, "all" and hyperslabs of up to
/// 2^20 blocks as a region (SparseEngine::erase_region), others by their pieces.
void erase_selection(const SparseEngine& engine, ChunkStore& store, const FileSelection& sel);

/// Selects (replacing the selection of `space`, whose extent is `dims`) the elements at the
/// row-major linear offsets `linear`.
void select_linear_elements(hid_t space, const std::vector<std::uint64_t>& dims,
                            const std::vector<std::uint64_t>& linear);


/// Selects (replacing the selection of `space`) the part inside the extent of each chunk.
void select_chunks(hid_t space, const ChunkGrid& grid, const std::vector<std::uint64_t>& chunks);

}  // namespace h5sparse::hdf5
