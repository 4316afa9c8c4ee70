// The parallel write's owner merge, as steps without MPI or HDF5 in them (the connector's
// parallel_write.cpp moves the messages between ranks and stores the result with one collective
// H5Dwrite). Each chunk has one owner rank; every rank routes its pieces to the owners, each
// owner applies what the ranks sent in ascending rank order (a higher rank wins where writes
// overlap) to the stored chunk, encodes it, and splits its chunks into rounds whose dense images
// identify their encodings (filters/pre_encoded_chunks.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/piece_merge.hpp"
#include "h5sparse/sparse_layout.hpp"

namespace h5sparse {

enum class OwnerOp { write, erase };

/// The owner of chunk `chunk` among `ranks`: contiguous runs of the chunk order (rank r owns
/// chunks [r*C/P, (r+1)*C/P)), so that ranks writing bands of rows mostly own what they write.
std::size_t chunk_owner(std::uint64_t chunk, std::uint64_t chunk_count, std::size_t ranks);

/// What one rank asks the owner to do to one chunk: pieces (`source` indexes `values` in
/// elements) and their values (null for erases).
struct Contribution {
  std::vector<ChunkPiece> pieces;
  const std::uint8_t* values = nullptr;
};

/// Step 1, on every rank: its pieces (grouped by chunk) and values, as one message per other
/// rank and the contributions to the chunks this rank owns itself (values used in place).
/// Message: per chunk [chunk, piece count, (start, length) per piece, values of a write], u64
/// in the machine's order (all ranks run one build).
struct RoutedPieces {
  std::vector<Bytes> messages;  ///< by destination rank (empty for `self`)
  std::vector<Contribution> own;
};
RoutedPieces route_to_owners(const std::vector<ChunkPiece>& pieces, const std::uint8_t* values,
                             std::size_t element_size, std::uint64_t chunk_count, std::size_t ranks,
                             std::size_t self);

/// Step 2, on every owner: the contributions by chunk, rank by rank in ascending order
/// (`received[r]`: rank r's message; `own` goes in at `self`). Values point into the messages.
/// Throws Error(corrupt_data) on a malformed message.
std::map<std::uint64_t, std::vector<Contribution>> gather_contributions(const std::vector<ByteView>& received,
                                                                        std::vector<Contribution> own,
                                                                        std::size_t self, std::uint64_t chunk_count,
                                                                        std::size_t element_size, OwnerOp op);

/// The chunk as its owner stores it this time: the dense image HDF5 will hand the filter and
/// the structured chunk the filter must return for it.
struct OwnedChunk {
  std::uint64_t chunk;
  Bytes dense;
  Bytes encoded;
  int round = 0;
};

/// Step 3, on an owner: applies `contributions` in order to `chunk` (what is stored there,
/// decoded; `stored`: whether anything is). Nothing when nothing was stored and nothing is
/// defined now. `zero_new_edges`: a new edge chunk's image is zero outside the extent (HDF5
/// zero-fills it there when fill values are never written).
std::optional<OwnedChunk> merge_contributions(const SparseParams& params, const ChunkGrid& grid, std::uint64_t index,
                                              StructuredChunk chunk, bool stored,
                                              const std::vector<Contribution>& contributions, OwnerOp op,
                                              bool zero_new_edges, PieceMerger& merger);

/// Step 4, on an owner: within one collective write a rank's dense images must identify their
/// encodings, so chunks whose images are equal byte for byte but whose encodings differ (one
/// erased chunk and one whose defined elements all hold the fill value) go into different
/// rounds. Sets each chunk's round; returns the number of rounds.
int assign_rounds(std::vector<OwnedChunk>& owned);

/// Copies a chunk's dense image (full chunk dimensions `chunk_dims`) into a row-major box of
/// dimensions `box`: the image's first `count` elements in each dimension go to the box
/// position `at`. Rows along the last dimension are copied whole.
void copy_image_into_box(const std::uint8_t* image, const std::vector<std::uint64_t>& chunk_dims,
                         const std::vector<std::uint64_t>& count, const std::vector<std::uint64_t>& at,
                         const std::vector<std::uint64_t>& box, std::size_t element_size, std::uint8_t* dest);

}  // namespace h5sparse
