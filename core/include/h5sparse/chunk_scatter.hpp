// Reading a structured chunk into a caller's buffer without a dense intermediate: the defined
// values go straight to their places in selection order, the rest of the destination holds the
// fill value written beforehand. What a sparse read costs then grows with the defined elements,
// not with the chunk size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/structured_chunk.hpp"

namespace h5sparse {

/// Writes `fill` (element_size bytes; null means zeros) into `count` consecutive elements.
void fill_elements(std::uint8_t* dest, std::uint64_t count, const std::uint8_t* fill, std::size_t element_size);

/// True when the pieces (all of one chunk) are ascending and disjoint in the chunk, which is
/// what scatter_defined needs; a selection of points in arbitrary order is not.
bool pieces_ascending(const ChunkPiece* pieces, std::size_t count);

/// For each piece, copies the chunk's defined values inside it to
/// dest[(piece.source + k) * element_size] (k = offset in the piece). Undefined elements are
/// left as they are. The pieces must satisfy pieces_ascending.
void scatter_defined(const StructuredChunk& chunk, const ChunkPiece* pieces, std::size_t count,
                     std::size_t element_size, std::uint8_t* dest);

}  // namespace h5sparse
