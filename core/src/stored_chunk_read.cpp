#include "h5sparse/stored_chunk_read.hpp"

#include <cstring>

#include "h5sparse/chunk_scatter.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse {

StructuredChunk decode_stored_chunk(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                                    const ChunkLayout& layout) {
  if (filter_mask & 1) {
    H5SPARSE_FAIL_IF(size != layout.element_count() * layout.element_size, ErrorCode::corrupt_data,
                     "unfiltered chunk has the wrong size");
    return from_dense(data, layout, nullptr);
  }
  return decode_chunk(data, size, layout);
}

void ChunkReadScratch::trim(std::size_t keep) {
  for (Bytes& b : values)
    if (b.capacity() > keep) Bytes().swap(b);
  if (dense.capacity() > keep) Bytes().swap(dense);
  if (pieces.capacity() * sizeof(ChunkPiece) > keep) std::vector<ChunkPiece>().swap(pieces);
}

void read_chunk_pieces(const StructuredChunk* chunk, const ChunkLayout& layout, const ChunkPiece* pieces,
                       std::size_t count, const std::uint8_t* fill, std::uint8_t* dest, bool streaming,
                       ChunkReadScratch& scratch) {
  const std::size_t es = layout.element_size;
  if (chunk == nullptr) {
    fill_pieces(pieces, count, es, fill, dest, streaming);
    return;
  }
  if (pieces_ascending(pieces, count)) {
    scatter_chunk(chunk->defined, chunk->values.data(), chunk->values.size(), pieces, count, es, fill, dest, streaming);
    return;
  }
  scratch.dense.resize(std::size_t(layout.element_count()) * es);
  expand_to_dense(*chunk, layout, fill, scratch.dense.data());
  for (std::size_t i = 0; i < count; ++i)
    std::memcpy(dest + pieces[i].source * es, &scratch.dense[pieces[i].in_chunk_start * es], pieces[i].length * es);
}

void read_stored_chunk_pieces(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                              const ChunkLayout& layout, const ChunkPiece* pieces, std::size_t count,
                              const std::uint8_t* fill, std::uint8_t* dest, bool streaming,
                              ChunkReadScratch& scratch) {
  if (data == nullptr) {
    read_chunk_pieces(nullptr, layout, pieces, count, fill, dest, streaming, scratch);
    return;
  }
  if (filter_mask == 0 && pieces_ascending(pieces, count)) {  // values scattered straight from the stored bytes when unfiltered
    const ChunkView view = decode_chunk_view(data, size, layout, &scratch.values);
    scatter_chunk(view.defined, view.values, view.values_size, pieces, count, layout.element_size, fill, dest,
                  streaming);
    return;
  }
  const StructuredChunk chunk = decode_stored_chunk(data, size, filter_mask, layout);
  read_chunk_pieces(&chunk, layout, pieces, count, fill, dest, streaming, scratch);
}

}  // namespace h5sparse
