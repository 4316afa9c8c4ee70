#include "h5sparse/stored_chunk_read.hpp"

#include <algorithm>
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

ChunkElements decode_stored_elements(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                                     const ChunkLayout& layout) {
  if ((filter_mask & 1) == 0) return decode_chunk_elements(data, size, layout);
  const std::uint64_t n = layout.element_count();
  H5SPARSE_FAIL_IF(size != n * layout.element_size, ErrorCode::corrupt_data, "unfiltered chunk has the wrong size");
  H5SPARSE_FAIL_IF(n > (std::uint64_t(1) << 32), ErrorCode::unsupported,
                   "chunks of more than 2^32 elements have no offset list");
  ChunkElements chunk;
  chunk.offsets.resize(std::size_t(n));
  for (std::uint64_t i = 0; i < n; ++i) chunk.offsets[std::size_t(i)] = std::uint32_t(i);
  chunk.values.assign(data, data + size);
  return chunk;
}

ChunkElements decode_stored_elements_in(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                                        const ChunkLayout& layout, const std::vector<OffsetRange>& ranges) {
  if ((filter_mask & 1) == 0) return decode_chunk_elements_in(data, size, layout, ranges);
  const std::size_t es = layout.element_size;
  H5SPARSE_FAIL_IF(size != layout.element_count() * es, ErrorCode::corrupt_data, "unfiltered chunk has the wrong size");
  ChunkElements chunk;  // a dense chunk: every element of the ranges
  for (const OffsetRange& r : ranges) {
    for (std::uint64_t i = r.first; i < r.end; ++i) chunk.offsets.push_back(std::uint32_t(i));
    chunk.values.insert(chunk.values.end(), data + r.first * es, data + r.end * es);
  }
  return chunk;
}

ChunkVarElements decode_stored_var_elements(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                                            const ChunkLayout& layout) {
  if (filter_mask & 1u) {
    H5SPARSE_FAIL_IF(std::any_of(data, data + size, [](std::uint8_t b) { return b != 0; }), ErrorCode::corrupt_data,
                     "a dense carrier chunk with data in a variable-length dataset");
    return ChunkVarElements{};
  }
  return decode_var_chunk(data, size, layout);
}

std::size_t ChunkReadScratch::held() const noexcept {
  return values[0].capacity() + values[1].capacity() + dense.capacity() + pieces.capacity() * sizeof(ChunkPiece);
}

void ChunkReadScratch::trim(std::size_t keep) {
  for (Bytes& b : values)
    if (b.capacity() > keep) Bytes().swap(b);
  if (dense.capacity() > keep) Bytes().swap(dense);
  if (pieces.capacity() * sizeof(ChunkPiece) > keep) std::vector<ChunkPiece>().swap(pieces);
}

ChunkView decode_stored_view(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                             const ChunkLayout& layout, std::array<Bytes, 2>* values_scratch) {
  if ((filter_mask & 1) == 0) return decode_chunk_view(data, size, layout, values_scratch);
  StructuredChunk dense = decode_stored_chunk(data, size, filter_mask, layout);
  ChunkView view;
  view.defined = std::move(dense.defined);
  view.owned = std::move(dense.values);
  view.values = view.owned.data();
  view.values_size = view.owned.size();
  return view;
}

void read_chunk_pieces(const ChunkView* chunk, const ChunkLayout& layout, const ChunkPiece* pieces,
                       std::size_t count, const std::uint8_t* fill, std::uint8_t* dest, bool streaming,
                       ChunkReadScratch& scratch, const std::uint32_t* word_ranks) {
  const std::size_t es = layout.element_size;
  if (chunk == nullptr) {
    fill_pieces(pieces, count, es, fill, dest, streaming);
    return;
  }
  if (pieces_ascending(pieces, count)) {
    scatter_chunk(chunk->defined, chunk->values, chunk->values_size, pieces, count, es, fill, dest, streaming,
                  word_ranks);
    return;
  }
  // Pieces in any order (points): the whole chunk expanded once, then copied piece by piece.
  const std::uint64_t n = layout.element_count();
  scratch.dense.resize(std::size_t(n) * es);
  const ChunkPiece whole{0, 0, n, 0};
  scatter_chunk(chunk->defined, chunk->values, chunk->values_size, &whole, 1, es, fill, scratch.dense.data(), false,
                word_ranks);
  for (std::size_t i = 0; i < count; ++i)
    std::memcpy(dest + pieces[i].source * es, &scratch.dense[pieces[i].in_chunk_start * es], pieces[i].length * es);
}

bool holds_few(const std::uint8_t* data, std::size_t size, unsigned filter_mask, const ChunkLayout& layout) {
  if (filter_mask & 1) return false;  // a dense chunk
  const std::optional<std::uint64_t> held = stated_element_count(data, size, layout);
  return held && *held < layout.element_count() / 64;
}


namespace {

// The pieces from the chunk's elements: the fill value, then each piece's defined elements
// found by bisection.
void read_element_pieces(const ChunkElements& e, std::size_t es, const ChunkPiece* pieces, std::size_t count,
                         const std::uint8_t* fill, std::uint8_t* dest, bool streaming) {
  fill_pieces(pieces, count, es, fill, dest, streaming);
  for (std::size_t i = 0; i < count; ++i) {
    const ChunkPiece& p = pieces[i];
    auto at = std::lower_bound(e.offsets.begin(), e.offsets.end(), p.in_chunk_start);
    for (; at != e.offsets.end() && *at < p.in_chunk_start + p.length; ++at)
      std::memcpy(dest + (p.source + *at - p.in_chunk_start) * es, &e.values[std::size_t(at - e.offsets.begin()) * es],
                  es);
  }
}

// A read takes part of a chunk when its pieces hold at most 1/kPartShare of the chunk's elements:
// a few rows of a matrix chunk, a column. Only the elements inside them are then decoded where
// the selection's encoding allows (decode_stored_elements_in), not a bitmap of the chunk.
constexpr std::uint64_t kPartShare = 4;

bool takes_part(const ChunkPiece* pieces, std::size_t count, const ChunkLayout& layout) {
  std::uint64_t elements = 0;
  for (std::size_t i = 0; i < count; ++i) elements += pieces[i].length;
  return elements * kPartShare <= layout.element_count() && pieces_ascending(pieces, count);
}

std::vector<OffsetRange> piece_ranges(const ChunkPiece* pieces, std::size_t count) {
  std::vector<OffsetRange> ranges(count);
  for (std::size_t i = 0; i < count; ++i)
    ranges[i] = {pieces[i].in_chunk_start, pieces[i].in_chunk_start + pieces[i].length};
  return ranges;
}

}  // namespace

void read_stored_chunk_pieces(const std::uint8_t* data, std::size_t size, unsigned filter_mask,
                              const ChunkLayout& layout, const ChunkPiece* pieces, std::size_t count,
                              const std::uint8_t* fill, std::uint8_t* dest, bool streaming,
                              ChunkReadScratch& scratch) {
  if (data == nullptr) {
    read_chunk_pieces(nullptr, layout, pieces, count, fill, dest, streaming, scratch);
    return;
  }
  // A chunk holding few elements: read from its elements, so the work follows what it holds;
  // a bitmap of the chunk costs its size (a one-element chunk of 2^20 elements: 128 KiB zeroed
  // and scanned for each point read).
  if (holds_few(data, size, filter_mask, layout)) {
    read_element_pieces(decode_chunk_elements(data, size, layout), layout.element_size, pieces, count, fill, dest,
                        streaming);
    return;
  }
  if (takes_part(pieces, count, layout)) {
    read_element_pieces(decode_stored_elements_in(data, size, filter_mask, layout, piece_ranges(pieces, count)),
                        layout.element_size, pieces, count, fill, dest, streaming);
    return;
  }
  // Values scattered straight from the stored bytes when their section is unfiltered.
  const ChunkView view = decode_stored_view(data, size, filter_mask, layout, &scratch.values);
  read_chunk_pieces(&view, layout, pieces, count, fill, dest, streaming, scratch);
}

}  // namespace h5sparse
