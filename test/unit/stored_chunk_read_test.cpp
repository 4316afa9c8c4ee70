// stored_chunk_read.hpp: one stored chunk into the pieces of a read, as a thread of a parallel
// read runs it: every kind of stored chunk (unfiltered, filtered, written around the filter,
// none; dense or holding few elements) and pieces in order or not, of the whole chunk or of a
// part of it (two rows, a column: decoded by ranges) give the dense expansion; corrupt bytes
// throw corrupt_data without naming a chunk (the connector adds that on the calling thread).
#include "h5sparse/stored_chunk_read.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"
#include "test_layouts.hpp"

using namespace h5sparse;

namespace {

// Each element defined with probability 1 / one_in.
StructuredChunk random_chunk(const ChunkLayout& layout, std::mt19937_64& rng, unsigned one_in = 3) {
  StructuredChunk chunk = StructuredChunk::empty(layout);
  for (std::uint64_t i = 0; i < layout.element_count(); ++i)
    if (rng() % one_in == 0) chunk.defined.set(i);
  chunk.values.resize(chunk.defined.defined_count() * layout.element_size);
  for (auto& b : chunk.values) b = std::uint8_t(rng() | 1);
  return chunk;
}

// The pieces of every element of the chunk: rows in order, or reversed (not ascending).
std::vector<ChunkPiece> row_pieces(bool reversed) {
  std::vector<ChunkPiece> pieces;
  for (std::uint64_t r = 0; r < 16; ++r) pieces.push_back({0, r * 24, 24, r * 24});
  if (reversed)
    for (std::size_t i = 0; i < pieces.size(); ++i) pieces[i].source = (15 - i) * 24;
  return pieces;
}

// Parts of the 16 x 24 chunk, in order: rows 3 and 9 (an eighth of it), column 5, and two
// single elements.
std::vector<std::vector<ChunkPiece>> part_pieces() {
  std::vector<ChunkPiece> column;
  for (std::uint64_t r = 0; r < 16; ++r) column.push_back({0, r * 24 + 5, 1, r});
  return {{{0, 3 * 24, 24, 0}, {0, 9 * 24, 24, 24}}, column, {{0, 0, 1, 1}, {0, 383, 1, 0}}};
}

void expect_read(const ChunkLayout& layout, const std::uint8_t* data, std::size_t size, unsigned mask,
                 const std::vector<std::uint8_t>& dense, const std::uint8_t* fill) {
  std::vector<std::vector<ChunkPiece>> reads{row_pieces(false), row_pieces(true)};
  for (const std::vector<ChunkPiece>& part : part_pieces()) reads.push_back(part);
  for (const std::vector<ChunkPiece>& pieces : reads) {
    const bool reversed = pieces.size() == 16 && pieces[0].source != 0;
    std::vector<std::uint8_t> out(dense.size(), 0xEE);
    ChunkReadScratch scratch;
    read_stored_chunk_pieces(data, size, mask, layout, pieces.data(), pieces.size(), fill, out.data(), false, scratch);
    for (const ChunkPiece& p : pieces)
      ASSERT_EQ(std::memcmp(&out[p.source * 4], &dense[p.in_chunk_start * 4], p.length * 4), 0) << reversed;
  }
}

}  // namespace

TEST(StoredChunkRead, EveryKindOfStoredChunkGivesTheDenseExpansion) {
  std::mt19937_64 rng(7);
  const std::uint8_t fill[4] = {1, 2, 3, 4};
  // Dense enough for a bitmap, and sparse enough (under one element per 64) to be read from
  // the chunk's elements when its selection is unfiltered.
  for (unsigned one_in : {3u, 150u, 100000u})
  for (const ChunkLayout& layout : {layout_with({}, {}), layout_with({{kFilterDeflate, 0, {4}}}, {{kFilterShuffle, 0, {}}, {kFilterDeflate, 0, {4}}})}) {
    const StructuredChunk chunk = random_chunk(layout, rng, one_in);
    std::vector<std::uint8_t> dense(layout.element_count() * 4);
    expand_to_dense(chunk, layout, fill, dense.data());
    const Bytes stored = encode_chunk(chunk, layout);
    expect_read(layout, stored.data(), stored.size(), 0, dense, fill);
    // Written around the structured-chunk filter (mask bit 0): the bytes are the dense chunk.
    expect_read(layout, dense.data(), dense.size(), 1, dense, fill);
    // Nothing stored: the fill value.
    std::vector<std::uint8_t> all_fill(dense.size());
    for (std::size_t i = 0; i < all_fill.size(); i += 4) std::memcpy(&all_fill[i], fill, 4);
    expect_read(layout, nullptr, 0, 0, all_fill, fill);
  }
}

TEST(StoredChunkRead, CorruptBytesThrowCorruptDataWithoutAChunkName) {
  std::mt19937_64 rng(8);
  const ChunkLayout layout = layout_with({}, {});
  Bytes stored;
  for (unsigned one_in : {3u, 150u}) {  // read through a bitmap, and from the elements
    stored = encode_chunk(random_chunk(layout, rng, one_in), layout);
    stored[stored.size() / 2] ^= 0x40;
    const std::vector<ChunkPiece> pieces = row_pieces(false);
    std::vector<std::uint8_t> out(layout.element_count() * 4);
    ChunkReadScratch scratch;
    try {
      read_stored_chunk_pieces(stored.data(), stored.size(), 0, layout, pieces.data(), pieces.size(), nullptr,
                               out.data(), false, scratch);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::corrupt_data);
      EXPECT_EQ(std::string(e.what()).find("chunk at"), std::string::npos) << e.what();
    }
  }
  // Written around the filter with the wrong size.
  EXPECT_THROW(decode_stored_chunk(stored.data(), 10, 1, layout), Error);
}
