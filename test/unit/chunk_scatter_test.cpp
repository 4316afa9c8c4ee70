// Scattering a chunk into selection order (defined values, fill elsewhere) agrees with the
// dense expansion read element by element (zero and patterned fill values), for random bitmaps (incl. full 64-element words), random ascending
// pieces that skip defined elements, and element sizes with and without a fixed-width path,
// with ordinary and streaming stores at every destination alignment.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "h5sparse/chunk_scatter.hpp"
#include "h5sparse/stream_store.hpp"

using namespace h5sparse;

namespace {

void check_scatter(std::size_t es, double density, std::uint32_t seed, bool streaming, bool ranked) {
  std::mt19937_64 rng(seed);
  ChunkLayout layout;
  layout.dims = {300};
  layout.element_size = es;
  StructuredChunk chunk = StructuredChunk::empty(layout);
  std::bernoulli_distribution defined(density);
  for (std::uint64_t i = 0; i < 300; ++i)
    if (defined(rng) || (i >= 64 && i < 192)) chunk.defined.set(i);  // two full words
  chunk.values.resize(chunk.defined.defined_count() * es);
  for (auto& b : chunk.values) b = std::uint8_t(rng() | 1);  // never the zero fill
  std::vector<std::uint8_t> fill(es);
  for (auto& b : fill) b = std::uint8_t(seed % 2 ? rng() : 0);
  std::vector<std::uint8_t> dense(300 * es);
  expand_to_dense(chunk, layout, fill.data(), dense.data());

  std::vector<ChunkPiece> pieces;
  std::uint64_t source = 0;
  for (std::uint64_t at = std::uint64_t(rng() % 7); at < 300;) {
    const std::uint64_t length = std::min<std::uint64_t>(1 + rng() % 90, 300 - at);
    pieces.push_back({0, at, length, source});
    source += length;
    at += length + rng() % 5;  // gaps hold defined elements that must be skipped
  }
  ASSERT_TRUE(pieces_ascending(pieces.data(), pieces.size()));
  // Every element must be written; a misaligned start puts streamed 16-byte blocks across elements.
  std::vector<std::uint8_t> storage(source * es + 16, 0xEE);
  std::uint8_t* out = storage.data() + seed % 16;
  const std::vector<std::uint32_t> ranks = defined_before_words(chunk.defined);
  scatter_chunk(chunk.defined, chunk.values.data(), chunk.values.size(), pieces.data(), pieces.size(), es, fill.data(),
                out, streaming, ranked ? ranks.data() : nullptr);
  if (streaming) stream_fence();
  for (const ChunkPiece& p : pieces)
    ASSERT_EQ(std::memcmp(&out[p.source * es], &dense[p.in_chunk_start * es], p.length * es), 0)
        << "es " << es << " density " << density << " piece at " << p.in_chunk_start << " ranked " << ranked;
}

}  // namespace

TEST(ChunkScatter, MatchesDenseExpansion) {
  for (std::size_t es : {1u, 2u, 3u, 4u, 8u, 12u})
    for (double density : {0.0, 0.01, 0.3, 0.9, 1.0})
      for (std::uint32_t seed = 0; seed < 20; ++seed)
        for (bool streaming : {false, true})
          for (bool ranked : {false, true}) check_scatter(es, density, seed, streaming, ranked);
}

TEST(ChunkScatter, DefinedBeforeWordsCountsEachWordsPredecessors) {
  ChunkSelection s(200);  // 4 words, the last one partial
  for (std::uint64_t i : {0u, 5u, 63u, 64u, 130u, 199u}) s.set(i);
  EXPECT_EQ(defined_before_words(s), (std::vector<std::uint32_t>{0, 3, 4, 5, 6}));
  EXPECT_EQ(defined_before_words(ChunkSelection(64)), (std::vector<std::uint32_t>{0, 0}));
}

TEST(ChunkScatter, FillPiecesWritesEveryElementOfThePieces) {
  const ChunkPiece pieces[2] = {{0, 0, 3, 0}, {0, 10, 2, 5}};
  const std::uint8_t fill[2] = {4, 5};
  std::vector<std::uint8_t> out(2 * 8, 0xEE);
  fill_pieces(pieces, 2, 2, fill, out.data());
  const std::vector<std::uint8_t> expected{4, 5, 4, 5, 4, 5, 0xEE, 0xEE, 0xEE, 0xEE, 4, 5, 4, 5, 0xEE, 0xEE};
  EXPECT_EQ(out, expected);
}

TEST(ChunkScatter, FillRepeatsAnyPattern) {
  const std::uint8_t fill[3] = {1, 2, 3};
  std::vector<std::uint8_t> out(3 * 1001);
  fill_elements(out.data(), 1001, fill, 3);
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], fill[i % 3]);
  const std::uint8_t same[4] = {7, 7, 7, 7};
  fill_elements(out.data(), 10, same, 4);
  for (std::size_t i = 0; i < 40; ++i) ASSERT_EQ(out[i], 7);
}

TEST(ChunkScatter, PiecesOutOfOrderAreNotAscending) {
  const ChunkPiece pieces[2] = {{0, 10, 5, 0}, {0, 12, 1, 5}};
  EXPECT_FALSE(pieces_ascending(pieces, 2));
}

TEST(StreamStore, CopyAndFillMatchOrdinaryStoresAtEveryAlignment) {
  std::mt19937_64 rng(7);
  std::vector<std::uint8_t> source(3000);
  for (auto& b : source) b = std::uint8_t(rng());
  for (std::size_t misalign = 0; misalign < 16; ++misalign)
    for (std::size_t bytes : {0u, 1u, 63u, 64u, 65u, 100u, 1024u, 2999u}) {
      std::vector<std::uint8_t> out(3100, 0xEE);
      stream_copy(out.data() + misalign, source.data() + 1, bytes);
      stream_fence();
      ASSERT_EQ(std::memcmp(out.data() + misalign, source.data() + 1, bytes), 0) << misalign << " " << bytes;
      ASSERT_EQ(out[misalign + bytes], 0xEE);
      if (misalign) {
        ASSERT_EQ(out[misalign - 1], 0xEE);
      }
    }
  for (std::size_t es : {1u, 2u, 3u, 4u, 8u, 12u, 16u})
    for (std::size_t misalign = 0; misalign < 16; ++misalign)
      for (std::uint64_t count : {0u, 1u, 5u, 64u, 333u})
        for (bool zero : {false, true}) {
          std::vector<std::uint8_t> fill(es);
          for (auto& b : fill) b = std::uint8_t(rng() | 1);
          std::vector<std::uint8_t> expected(count * es + 32, 0xEE), out(count * es + 32, 0xEE);
          fill_elements(expected.data() + misalign, count, zero ? nullptr : fill.data(), es);
          stream_fill(out.data() + misalign, count, zero ? nullptr : fill.data(), es);
          stream_fence();
          ASSERT_EQ(out, expected) << "es " << es << " misalign " << misalign << " count " << count;
        }
}

// Whole-word pieces (rows of a 64 x 256 chunk, what a full read scatters), where the vector
// kernel expands mixed words: every density, element sizes 4 and 8 (kernel) and 2 (not), fill
// zero or patterned, ordinary and streaming stores at 16- and 32-byte aligned destinations
// and a misaligned one (ordinary stores only, as the connector never streams misaligned).
TEST(ChunkScatter, WholeWordRowsMatchDenseExpansion) {
  std::mt19937_64 rng(11);
  for (std::size_t es : {2u, 4u, 8u})
    for (double density : {0.001, 0.05, 0.1, 0.3, 0.5, 0.9, 0.999})
      for (std::size_t misalign : {0u, 16u, 32u, 4u}) {
        ChunkLayout layout;
        layout.dims = {64, 256};
        layout.element_size = es;
        StructuredChunk chunk = StructuredChunk::empty(layout);
        std::bernoulli_distribution defined(density);
        for (std::uint64_t i = 0; i < 64 * 256; ++i)
          if (defined(rng)) chunk.defined.set(i);
        chunk.values.resize(chunk.defined.defined_count() * es);  // exactly: no room past the values
        for (auto& b : chunk.values) b = std::uint8_t(rng() | 1);
        std::vector<std::uint8_t> fill(es, 0);
        if (misalign % 32 == 16)
          for (auto& b : fill) b = std::uint8_t(rng());
        std::vector<std::uint8_t> dense(64 * 256 * es);
        expand_to_dense(chunk, layout, fill.data(), dense.data());
        // Rows of 256 elements placed 300 elements apart in the destination.
        std::vector<ChunkPiece> pieces;
        for (std::uint64_t r = 0; r < 64; ++r) pieces.push_back({0, r * 256, 256, r * 300});
        for (bool streaming : {false, true}) {
          if (streaming && misalign % 16) continue;
          std::vector<std::uint8_t> storage(64 * 300 * es + 64, 0xEE);
          std::uint8_t* base = storage.data() + (32 - reinterpret_cast<std::uintptr_t>(storage.data()) % 32) % 32;
          std::uint8_t* out = base + misalign;
          if (streaming && (300 * es) % 16) continue;  // rows would start misaligned
          scatter_chunk(chunk.defined, chunk.values.data(), chunk.values.size(), pieces.data(), pieces.size(), es,
                        fill.data(), out, streaming);
          if (streaming) stream_fence();
          for (const ChunkPiece& p : pieces)
            ASSERT_EQ(std::memcmp(&out[p.source * es], &dense[p.in_chunk_start * es], p.length * es), 0)
                << "es " << es << " density " << density << " misalign " << misalign << " streaming " << streaming;
        }
      }
}
