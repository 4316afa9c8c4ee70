// One chunk of an ordinary (dense) Blosc dataset, encoded and decoded outside HDF5's filter
// pipeline, and moved between the chunk and a selection's elements: the per-chunk work of the
// connector's chunk-parallel dense reads and writes, free of HDF5 so any thread may run it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/codecs.hpp"

namespace h5sparse {

/// Decodes the chunk HDF5 stored (`size` bytes, with `filter_mask`: bit 0 set means stored
/// raw, the Blosc filter skipped) into `out`, exactly `chunk_bytes` bytes, on this thread.
/// Error(corrupt_data) when the bytes are not one chunk (truncated or inconsistent frame,
/// wrong decoded size, raw chunk of the wrong size), as the filter fails on them.
void decode_dense_chunk(const std::uint8_t* data, std::size_t size, unsigned filter_mask, std::size_t chunk_bytes,
                        std::uint8_t* out);

/// Encodes `chunk_bytes` bytes of `chunk` as the Blosc filter would (params.nthreads is
/// ignored: one thread per chunk) into `dst` (capacity chunk_bytes). Returns the frame size, or
/// 0 when compression does not pay (the filter returns 0: HDF5 stores an optional filter's
/// chunk raw with filter-mask bit 0 set).
std::size_t encode_dense_chunk(std::uint8_t* dst, const std::uint8_t* chunk, std::size_t chunk_bytes,
                               const BloscParams& params);

/// Copies each piece's elements out of a decoded chunk: dest[(piece.source + k) * element_size]
/// = chunk element piece.in_chunk_start + k. Pieces in any order.
void copy_pieces_out(const std::uint8_t* chunk, const ChunkPiece* pieces, std::size_t count, std::size_t element_size,
                     std::uint8_t* dest);

/// The reverse: chunk element piece.in_chunk_start + k = source[(piece.source + k) * element_size].
void copy_pieces_in(const std::uint8_t* source, const ChunkPiece* pieces, std::size_t count, std::size_t element_size,
                    std::uint8_t* chunk);

}  // namespace h5sparse
