// One stored chunk of a sparse dataset, as H5Dread_chunk returns it, decoded into the pieces
// of a read: the work a read does per chunk apart from the HDF5 calls, so that it can run on
// any thread (chunk_threads.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/structured_chunk.hpp"
#include "h5sparse/var_chunk.hpp"

namespace h5sparse {

/// The structured chunk of stored bytes with their filter mask: bit 0 set means the chunk was
/// stored around the structured-chunk filter (a dense chunk, every element defined).
/// Error(corrupt_data) as decode_chunk; the caller adds which dataset and chunk.
StructuredChunk decode_stored_chunk(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                                    const ChunkLayout& layout);

/// decode_stored_chunk into the chunk's elements (a dense chunk: all defined).
ChunkElements decode_stored_elements(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                                     const ChunkLayout& layout);

/// decode_stored_elements of the elements inside `ranges` (decode_chunk_elements_in).
ChunkElements decode_stored_elements_in(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                                        const ChunkLayout& layout, const std::vector<OffsetRange>& ranges);

/// True when a stored chunk states (stated_element_count) fewer elements than a bitmap of it
/// has words: decoding its offsets then costs less than a bitmap of the chunk.
bool holds_few(const std::uint8_t* data, std::size_t size, unsigned filter_mask, const ChunkLayout& layout);

/// A variable-length dataset's stored chunk decoded into its elements (decode_var_chunk); a
/// dense carrier chunk of zeros, stored around the filter, holds none, and any other is
/// Error(corrupt_data).
ChunkVarElements decode_stored_var_elements(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                                            const ChunkLayout& layout);

/// Buffers one thread reuses from chunk to chunk of a read (a fresh buffer per chunk cost a
/// zeroing pass and page faults per chunk).
struct ChunkReadScratch {
  std::array<Bytes, 2> values;  ///< decoded values of a filtered chunk (decode_chunk_view)
  Bytes dense;                  ///< one dense chunk, for pieces in arbitrary order (points)
  std::vector<ChunkPiece> pieces;  ///< the pieces of a chunk read whole
  /// Gives back buffers that grew beyond `keep` bytes.
  void trim(std::size_t keep);
  /// The bytes the buffers hold.
  std::size_t held() const noexcept;
};

/// decode_stored_chunk without copying an unfiltered values section (as decode_chunk_view,
/// whose rules for `data` and `values_scratch` apply).
ChunkView decode_stored_view(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                             const ChunkLayout& layout, std::array<Bytes, 2>* values_scratch = nullptr);

/// Writes one chunk's pieces of a read into `dest` (as read_stored_chunk_pieces) from the
/// chunk decoded already (`chunk` null: nothing stored, all fill). `word_ranks`: as
/// scatter_chunk's.
void read_chunk_pieces(const ChunkView* chunk, const ChunkLayout& layout, const ChunkPiece* pieces,
                       std::size_t count, const std::uint8_t* fill, std::uint8_t* dest, bool streaming,
                       ChunkReadScratch& scratch, const std::uint32_t* word_ranks = nullptr);

/// Writes one chunk's pieces of a read into `dest` (as scatter_chunk: piece.source indexes
/// `dest` in elements): the defined values of the chunk stored as `data` (`size` bytes, with
/// `filter_mask`), the fill value elsewhere; `data` null: nothing stored, all fill. The pieces
/// are all of this chunk, in any order (a later piece wins). `fill` null means zeros.
void read_stored_chunk_pieces(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                              const ChunkLayout& layout, const ChunkPiece* pieces, std::size_t count,
                              const std::uint8_t* fill, std::uint8_t* dest, bool streaming,
                              ChunkReadScratch& scratch);

}  // namespace h5sparse
