// Reading a structured chunk into a caller's buffer without a dense intermediate: the defined
// values go straight to their places in selection order, the fill value to the others, each
// destination element written once. What a sparse read costs then grows with the defined elements,
// not with the chunk size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/structured_chunk.hpp"

namespace h5sparse {

/// Writes `fill` (element_size bytes; null means zeros) into `count` consecutive elements.
void fill_elements(std::uint8_t* dest, std::uint64_t count, const std::uint8_t* fill, std::size_t element_size);

/// True when the pieces (all of one chunk) are ascending and disjoint in the chunk, which is
/// what scatter_chunk needs; a selection of points in arbitrary order is not.
bool pieces_ascending(const ChunkPiece* pieces, std::size_t count);

/// For each piece, writes dest[(piece.source + k) * element_size] (k = offset in the piece):
/// the chunk's value where element piece.in_chunk_start + k is defined in `defined`, `fill`
/// (as fill_elements) elsewhere, so that each destination element is written once. `values`
/// holds the defined elements' values in order (`values_size` bytes: the kernels that read
/// whole vectors stay inside them). The pieces must satisfy pieces_ascending.
/// `streaming`: `dest` gets streaming stores (stream_store.hpp; element sizes 1, 2, 4 and 8,
/// others ordinary ones); the caller calls stream_fence after the last chunk. `word_ranks`:
/// defined_before_words(defined), when the caller keeps it (pieces far into the chunk then
/// cost no count of the words before them); null: counted.
void scatter_chunk(const ChunkSelection& defined, const std::uint8_t* values, std::size_t values_size,
                   const ChunkPiece* pieces, std::size_t count, std::size_t element_size, const std::uint8_t* fill,
                   std::uint8_t* dest, bool streaming = false, const std::uint32_t* word_ranks = nullptr);

/// For each 64-element word of `defined`, the defined elements before it, and the total last
/// (words + 1 entries).
std::vector<std::uint32_t> defined_before_words(const ChunkSelection& defined);

/// Writes `fill` into every element of the pieces (a chunk with nothing defined).
void fill_pieces(const ChunkPiece* pieces, std::size_t count, std::size_t element_size, const std::uint8_t* fill,
                 std::uint8_t* dest, bool streaming = false);

}  // namespace h5sparse
