// Direct chunk I/O in the core: split -> assemble reproduces a stored chunk byte for byte for
// every pipeline; assembling refuses every inconsistent input with invalid_argument.
#include <gtest/gtest.h>

#include <random>

#include "h5sparse/direct_chunk.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"
#include "test_layouts.hpp"

using namespace h5sparse;

namespace {

StructuredChunk chunk_of(const ChunkLayout& l, double density, unsigned seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution pick(density);
  StructuredChunk c = StructuredChunk::empty(l);
  for (std::uint64_t i = 0; i < l.element_count(); ++i) {
    if (!pick(rng)) continue;
    c.defined.set(i);
    const std::uint32_t v = std::uint32_t(i % 7);
    c.values.insert(c.values.end(), reinterpret_cast<const std::uint8_t*>(&v),
                    reinterpret_cast<const std::uint8_t*>(&v) + 4);
  }
  return c;
}

ErrorCode assemble_error(const std::array<SectionBytes, 2>& sections, const ChunkLayout& l) {
  try {
    assemble_chunk(sections, l);
  } catch (const Error& e) {
    return e.code();
  }
  return ErrorCode(0);
}

}  // namespace

TEST(DirectChunk, SplitThenAssembleIsByteExact) {
  const SectionPipeline pipelines[] = {
      {},
      {{kFilterDeflate, 0, {6}}},
      {{kFilterShuffle, 0, {}}, {kFilterLzf, kFilterFlagOptional, {}}},
      {{kFilterBlosc, kFilterFlagOptional, {2, 2, 0, 0, 5, 2, 5}}},
  };
  for (const auto& sp : pipelines)
    for (const auto& vp : pipelines)
      for (double density : {0.0, 0.05, 0.5, 1.0}) {
        const ChunkLayout l = layout_with(sp, vp);
        const Bytes stored = encode_chunk(chunk_of(l, density, 3), l);
        const auto sections = split_chunk(stored.data(), stored.size(), l);
        const ChunkHeader header = read_chunk_header(stored.data(), stored.size(), l);
        EXPECT_EQ(header.size + sections[0].stored_size + sections[1].stored_size + header.padding, stored.size());
        EXPECT_EQ(assemble_chunk(sections, l), stored);
      }
}

TEST(DirectChunk, SplitVerifiesStoredChecksums) {
  const ChunkLayout l = layout_with({}, {{kFilterDeflate, 0, {6}}});
  Bytes stored = encode_chunk(chunk_of(l, 0.3, 4), l);
  stored.back() ^= 1;
  EXPECT_THROW(split_chunk(stored.data(), stored.size(), l), Error);
}

TEST(DirectChunk, AssembleRefusesInconsistentSections) {
  const ChunkLayout l = layout_with({{kFilterDeflate, 0, {6}}}, {{kFilterShuffle, 0, {}}, {kFilterDeflate, 0, {6}}});
  const Bytes stored = encode_chunk(chunk_of(l, 0.3, 5), l);
  const auto good = split_chunk(stored.data(), stored.size(), l);
  auto bad = good;
  bad[1].unfiltered_size += 4;  // one element more than the selection defines
  EXPECT_EQ(assemble_error(bad, l), ErrorCode::invalid_argument);
  bad = good;
  bad[0].filter_mask = 1;  // deflate stream taken as raw selection bytes
  EXPECT_EQ(assemble_error(bad, l), ErrorCode::invalid_argument);
  bad = good;
  bad[1].filter_mask = 4;  // names a third filter
  EXPECT_EQ(assemble_error(bad, l), ErrorCode::invalid_argument);
  bad = good;
  bad[1].stored_size -= 1;  // truncated stream
  EXPECT_EQ(assemble_error(bad, l), ErrorCode::invalid_argument);
  bad = good;
  std::swap(bad[0], bad[1]);  // sections exchanged
  EXPECT_EQ(assemble_error(bad, l), ErrorCode::invalid_argument);
  bad = good;
  bad[1].data = nullptr;
  EXPECT_EQ(assemble_error(bad, l), ErrorCode::invalid_argument);
  // Values of another element size: same bytes, wrong count for 8-byte elements.
  ChunkLayout wide = l;
  wide.element_size = 8;
  EXPECT_EQ(assemble_error(good, wide), ErrorCode::invalid_argument);
}

TEST(DirectChunk, EmptySectionMustLookAsAWriterStoresIt) {
  const ChunkLayout l = layout_with({}, {{kFilterShuffle, 0, {}}, {kFilterDeflate, 0, {6}}});
  const Bytes stored = encode_chunk(StructuredChunk::empty(l), l);
  const auto good = split_chunk(stored.data(), stored.size(), l);
  EXPECT_EQ(good[1].filter_mask, 3u);
  EXPECT_EQ(assemble_chunk(good, l), stored);
  auto bad = good;
  bad[1].filter_mask = 0;
  EXPECT_EQ(assemble_error(bad, l), ErrorCode::invalid_argument);
}
