// Applying one write or erase to one structured chunk, given as the pieces of a selection
// that fall into that chunk (core/chunk_grid) and the values in selection order. The parallel
// connector's chunk owners apply what each rank sent them with it, rank by rank. (The serial
// write path, SparseEngine::write (engine/sparse_write.cpp), has its own vectorised variant of the same rule that
// encodes new chunks in place; the model tests hold both to the RFC semantics.)
#pragma once

#include <cstdint>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/structured_chunk.hpp"

namespace h5sparse {

class PieceMerger {
 public:
  /// `fill`: element_size bytes (null means zeros); `fill_is_undefined`: the dataset option
  /// under which written fill values leave elements undefined.
  PieceMerger(const ChunkLayout& layout, const std::uint8_t* fill, bool fill_is_undefined);

  /// Define-by-write: pieces [first, last) all lie in one chunk, in selection order; piece p
  /// takes its values from `source + p.source * element_size`. A later duplicate of an
  /// element wins.
  void write(StructuredChunk& chunk, const ChunkPiece* first, const ChunkPiece* last, const std::uint8_t* source);
  /// Makes the elements of pieces [first, last) undefined.
  void erase(StructuredChunk& chunk, const ChunkPiece* first, const ChunkPiece* last) const;

 private:
  std::uint64_t chunk_elements_;
  std::size_t element_size_;
  Bytes fill_;
  bool skip_fill_;
  Bytes staging_, packed_;  // scratch, one chunk each
};

}  // namespace h5sparse
