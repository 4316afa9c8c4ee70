// Structured chunks: round trips through every section pipeline, merge/erase semantics
// against a dense model, dense conversion, cd_values forms, and corruption detection.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <random>

#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"
#include "h5sparse/sparse_layout.hpp"
#include "h5sparse/structured_chunk.hpp"
#include "h5sparse/varint.hpp"
#include "test_layouts.hpp"

using namespace h5sparse;

namespace {

const SectionPipeline kPipelines[] = {
    {},
    {{kFilterDeflate, 0, {6}}},
    {{kFilterShuffle, 0, {}}, {kFilterDeflate, 0, {4}}},
    {{kFilterLzf, kFilterFlagOptional, {}}},
    {{kFilterShuffle, 0, {}}, {kFilterLzf, kFilterFlagOptional, {}}},
    {{kFilterBlosc, kFilterFlagOptional, {2, 2, 0, 0, 5, 1, 1}}},
    {{kFilterBlosc, kFilterFlagOptional, {2, 2, 0, 0, 5, 2, 5}}},
    {{kFilterBlosc, kFilterFlagOptional, {2, 2, 0, 0, 9, 1, 4}}, {kFilterDeflate, 0, {1}}},
};

// A dense model of one chunk: value per element and whether it is defined.
struct Model {
  std::vector<std::uint32_t> value;
  std::vector<bool> defined;
};

StructuredChunk random_chunk(const ChunkLayout& l, double density, std::mt19937& rng) {
  StructuredChunk c = StructuredChunk::empty(l);
  std::bernoulli_distribution pick(density);
  for (std::uint64_t i = 0; i < l.element_count(); ++i) {
    if (!pick(rng)) continue;
    c.defined.set(i);
    const std::uint32_t v = std::uint32_t(i * 3 + 7);
    c.values.insert(c.values.end(), reinterpret_cast<const std::uint8_t*>(&v),
                    reinterpret_cast<const std::uint8_t*>(&v) + 4);
  }
  return c;
}

// Calls f(layout, chunk, its encoding) with a random chunk of every pair of pipelines at
// densities from empty to full.
template <typename F>
void for_every_pipeline_pair(std::mt19937& rng, F&& f) {
  for (const auto& selection : kPipelines) {
    for (const auto& values : kPipelines) {
      const ChunkLayout l = layout_with(selection, values);
      for (double density : {0.0, 0.05, 0.5, 1.0}) {
        const StructuredChunk c = random_chunk(l, density, rng);
        f(l, c, encode_chunk(c, l));
      }
    }
  }
}

}  // namespace

TEST(StructuredChunk, RoundTripsThroughEveryPipeline) {
  std::mt19937 rng(1);
  for_every_pipeline_pair(rng, [](const ChunkLayout& l, const StructuredChunk& c, const Bytes& stored) {
    const StructuredChunk back = decode_chunk(stored.data(), stored.size(), l);
    EXPECT_EQ(back.defined, c.defined);
    EXPECT_EQ(back.values, c.values);
    const ChunkHeader h = read_chunk_header(stored.data(), stored.size(), l);
    EXPECT_EQ(h.sections[1].unfiltered_size, c.values.size());
  });
}

TEST(StructuredChunk, InPlaceEncodingEqualsTheCopyingOne) {
  std::mt19937 rng(2);
  for (const auto& selection : kPipelines) {
    for (const auto& values : kPipelines) {
      const ChunkLayout l = layout_with(selection, values);
      for (double density : {0.0, 0.05, 0.5, 1.0}) {
        const StructuredChunk c = random_chunk(l, density, rng);
        Bytes buffer(values_offset_in_place(l) + c.values.size() + 3, 0xAB);
        std::copy(c.values.begin(), c.values.end(), buffer.begin() + long(values_offset_in_place(l)));
        Bytes spill;
        const ByteView view = encode_chunk_in_place(c.defined, buffer.data(), c.values.size(), l, spill);
        const Bytes copied = encode_chunk(c, l);
        ASSERT_EQ(Bytes(view.data, view.data + view.size), copied);
        // Values a filter changed: assembled in `spill`; values stored as they are (no values
        // pipeline, or every filter skipped) and section 0: in the buffer, around the values (a
        // mandatory section-0 filter may grow section 0 past the room).
        const std::uint32_t mask = read_chunk_header(copied.data(), copied.size(), l).sections[1].filter_mask;
        const bool values_changed = !values.empty() && mask != (1u << values.size()) - 1;
        if (values_changed) {
          EXPECT_EQ(view.data, spill.data());
        }
        if (!values_changed && selection.empty()) {
          EXPECT_TRUE(view.data >= buffer.data() && view.data < buffer.data() + buffer.size());
        }
      }
    }
  }
}

TEST(StructuredChunk, MergeAndEraseFollowTheModel) {
  const ChunkLayout l = layout_with({}, {{kFilterShuffle, 0, {}}, {kFilterDeflate, 0, {1}}});
  const std::uint64_t n = l.element_count();
  std::mt19937 rng(2);
  Model model{std::vector<std::uint32_t>(n, 0), std::vector<bool>(n, false)};
  StructuredChunk chunk = StructuredChunk::empty(l);
  for (int step = 0; step < 300; ++step) {
    ChunkSelection sel(n);
    std::bernoulli_distribution pick(std::uniform_real_distribution<double>(0, 0.3)(rng));
    std::vector<std::uint32_t> written;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (!pick(rng)) continue;
      sel.set(i);
      written.push_back(std::uint32_t(rng()));
    }
    if (step % 3 == 2) {
      erase(chunk, sel, 4);
      for (std::uint64_t i = 0; i < n; ++i)
        if (sel.test(i)) model.defined[i] = false;
    } else {
      merge_write(chunk, sel, reinterpret_cast<const std::uint8_t*>(written.data()), 4);
      std::size_t k = 0;
      for (std::uint64_t i = 0; i < n; ++i)
        if (sel.test(i)) model.value[i] = written[k++], model.defined[i] = true;
    }
    const Bytes stored = encode_chunk(chunk, l);
    chunk = decode_chunk(stored.data(), stored.size(), l);
    const std::uint32_t fill = 0xDEADBEEF;
    std::vector<std::uint32_t> dense(n);
    expand_to_dense(chunk, l, reinterpret_cast<const std::uint8_t*>(&fill),
                    reinterpret_cast<std::uint8_t*>(dense.data()));
    for (std::uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(chunk.defined.test(i), model.defined[i]) << "step " << step << " element " << i;
      ASSERT_EQ(dense[i], model.defined[i] ? model.value[i] : fill) << "step " << step << " element " << i;
    }
  }
}

TEST(StructuredChunk, FromDense) {
  const ChunkLayout l = layout_with({}, {});
  std::vector<std::uint32_t> dense(l.element_count(), 0);
  dense[5] = 9;
  dense[300] = 1;
  const std::uint32_t zero = 0;
  const StructuredChunk sparse = from_dense(reinterpret_cast<const std::uint8_t*>(dense.data()), l,
                                            reinterpret_cast<const std::uint8_t*>(&zero));
  EXPECT_EQ(sparse.defined.defined_count(), 2u);
  EXPECT_TRUE(sparse.defined.test(5) && sparse.defined.test(300));
  const StructuredChunk full = from_dense(reinterpret_cast<const std::uint8_t*>(dense.data()), l, nullptr);
  EXPECT_TRUE(full.defined.all());
}

namespace {

void expect_every_flip_detected(const Bytes& stored, const ChunkLayout& l) {
  for (std::size_t pos = 0; pos < stored.size(); ++pos) {
    for (std::uint8_t flip : {std::uint8_t(1), std::uint8_t(0x80), std::uint8_t(0xFF)}) {
      Bytes bad = stored;
      bad[pos] ^= flip;
      try {
        decode_chunk(bad.data(), bad.size(), l);
        FAIL() << "flip at " << pos << " went undetected";
      } catch (const Error& e) {
        EXPECT_TRUE(e.code() == ErrorCode::corrupt_data || e.code() == ErrorCode::unsupported) << e.what();
      }
    }
  }
  for (std::size_t cut = 0; cut < stored.size(); ++cut) EXPECT_THROW(decode_chunk(stored.data(), cut, l), Error);
}

}  // namespace

TEST(StructuredChunk, EveryFlippedByteIsDetected) {
  std::mt19937 rng(3);
  // Filtered sections (both checksums and the masks in the header), unfiltered ones, padding.
  for (const ChunkLayout& l :
       {layout_with({{kFilterDeflate, 0, {5}}}, {{kFilterBlosc, kFilterFlagOptional, {2, 2, 0, 0, 5, 1, 1}}}),
        layout_with({}, {})}) {
    for (double density : {0.0, 0.02, 0.3}) {
      const Bytes stored = encode_chunk(random_chunk(l, density, rng), l);
      EXPECT_EQ(stored[0], 2);
      expect_every_flip_detected(stored, l);
      Bytes padded = stored;
      avoid_chunk_size(padded, stored.size(), l);
      expect_every_flip_detected(padded, l);
    }
  }
}

namespace {

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

// Format version 1 chunks (written by h5sparse before version 2, kept in test/fuzz/seeds_v1:
// one prefix byte picking the pipelines as fuzz_chunk.cpp does, then the chunk) stay readable
// with every check, and a padded rewrite turns them into version 2.
TEST(StructuredChunk, ReadsFormatVersion1) {
  const SectionPipeline pipelines[] = {
      {},
      {{kFilterDeflate, 0, {6}}},
      {{kFilterShuffle, 0, {}}, {kFilterLzf, kFilterFlagOptional, {}}},
      {{kFilterBlosc, kFilterFlagOptional, {2, 2, 0, 0, 5, 1, 1}}},
  };
  for (unsigned prefix = 0; prefix < 16; ++prefix) {
    const Bytes file = read_file(std::string(H5SPARSE_V1_CHUNKS) + "/c" + std::to_string(prefix));
    ASSERT_GT(file.size(), 61u) << prefix;
    ASSERT_EQ(file[0], prefix);
    const Bytes stored(file.begin() + 1, file.end());
    ASSERT_EQ(Bytes(stored.begin(), stored.begin() + 5), (Bytes{'H', '5', 'S', 'C', 1}));
    ChunkLayout l = layout_with(pipelines[prefix & 3], pipelines[(prefix >> 2) & 3]);
    l.dims = {8, 6};
    StructuredChunk expected = StructuredChunk::empty(l);
    for (std::uint64_t i = 0; i < 48; i += 1 + prefix % 3) {
      expected.defined.set(i);
      for (int b = 0; b < 4; ++b) expected.values.push_back(std::uint8_t(i * 7 + b));
    }
    const StructuredChunk back = decode_chunk(stored.data(), stored.size(), l);
    EXPECT_EQ(back.defined, expected.defined) << prefix;
    EXPECT_EQ(back.values, expected.values) << prefix;
    const ChunkHeader h = read_chunk_header(stored.data(), stored.size(), l);
    EXPECT_EQ(h.version, 1);
    EXPECT_EQ(h.size, 60u);
    expect_every_flip_detected(stored, l);
    Bytes moved = stored;
    avoid_chunk_size(moved, stored.size(), l);
    EXPECT_EQ(moved[0], 2);
    EXPECT_NE(moved.size(), stored.size());
    EXPECT_EQ(read_chunk_header(moved.data(), moved.size(), l).padding, 1u);
    const StructuredChunk again = decode_chunk(moved.data(), moved.size(), l);
    EXPECT_EQ(again.values, expected.values);
    Bytes fresh(expected.values.rbegin(), expected.values.rend());
    const Bytes replaced = replace_chunk_values(stored.data(), stored.size(), fresh, l);
    EXPECT_EQ(replaced[0], 2);
    const StructuredChunk updated = decode_chunk(replaced.data(), replaced.size(), l);
    EXPECT_EQ(updated.defined, expected.defined) << prefix;
    EXPECT_EQ(updated.values, fresh) << prefix;
  }
}

TEST(SparseLayout, RequestAndCompleteForms) {
  SparseParams p;
  p.options = kOptionFillIsUndefined;
  p.layout = layout_with({{kFilterDeflate, 0, {9}}}, {{kFilterShuffle, 0, {}}, {kFilterLzf, 1, {}}});
  p.fill = {1, 2, 3, 4};
  const std::vector<unsigned> request = to_request(p);
  const SparseParams parsed = parse_request(request);
  EXPECT_EQ(parsed.options, p.options);
  EXPECT_EQ(parsed.layout.selection_pipeline, p.layout.selection_pipeline);
  EXPECT_EQ(parsed.layout.values_pipeline, p.layout.values_pipeline);
  const std::vector<unsigned> complete = to_cd_values(p);
  EXPECT_TRUE(is_complete_form(complete.data(), complete.size()));
  const SparseParams back = from_cd_values(complete.data(), complete.size());
  EXPECT_EQ(back.layout.dims, p.layout.dims);
  EXPECT_EQ(back.layout.element_size, 4u);
  EXPECT_EQ(back.fill, p.fill);
  EXPECT_EQ(back.layout.values_pipeline, p.layout.values_pipeline);
  EXPECT_EQ(parse_request({}).options, 0u);
}

TEST(SparseLayout, BadParametersAreRefused) {
  EXPECT_THROW(parse_request({4}), Error);                       // unknown option bit
  EXPECT_THROW(parse_request({0, 1, 307, 0, 0}), Error);         // bzip2: not a section filter
  EXPECT_THROW(parse_request({0, 1, 1, 0, 1, 12}), Error);       // deflate level 12
  EXPECT_THROW(parse_request({0, 1, 1, 0}), Error);              // truncated filter
  EXPECT_THROW(parse_request({0, 0, 0, 7}), Error);              // trailing values
  EXPECT_THROW(parse_request({0, 0, 1, 32001, 1, 7, 0, 0, 0, 0, 5, 3, 1}), Error);  // blosc shuffle 3
  const std::vector<unsigned> truncated = {kSparseParamsMagic, 0, 4, 2, 16};
  EXPECT_THROW(from_cd_values(truncated.data(), truncated.size()), Error);
}

// A rewrite of unchanged size would be done in place by HDF5; avoid_chunk_size gives the
// same content in another size (so an SWMR writer's flushed copy is never overwritten).
namespace {

// The stored bytes of section 0 of a chunk.
Bytes stored_selection(const Bytes& chunk, const ChunkLayout& l) {
  const ChunkHeader h = read_chunk_header(chunk.data(), chunk.size(), l);
  return Bytes(chunk.begin() + std::ptrdiff_t(h.size), chunk.begin() + std::ptrdiff_t(h.size + h.sections[0].stored_size));
}

}  // namespace

// New values for the same elements: section 0 stays byte for byte, section 1 is re-encoded.
TEST(StructuredChunk, ReplacedValuesKeepTheStoredSelection) {
  std::mt19937 rng(8);
  for_every_pipeline_pair(rng, [&](const ChunkLayout& l, const StructuredChunk& c, const Bytes& stored) {
    Bytes fresh(c.values.size());
    for (std::uint8_t& b : fresh) b = std::uint8_t(rng());
    const Bytes replaced = replace_chunk_values(stored.data(), stored.size(), fresh, l);
    const StructuredChunk back = decode_chunk(replaced.data(), replaced.size(), l);
    EXPECT_EQ(back.defined, c.defined);
    EXPECT_EQ(back.values, fresh);
    EXPECT_EQ(stored_selection(replaced, l), stored_selection(stored, l));
    Bytes wrong = fresh;
    wrong.push_back(0);
    EXPECT_THROW(replace_chunk_values(stored.data(), stored.size(), wrong, l), Error);
    Bytes corrupt = stored;
    corrupt[1] ^= 0x40;
    EXPECT_THROW(replace_chunk_values(corrupt.data(), corrupt.size(), fresh, l), Error);
  });
}

TEST(StructuredChunk, ResizedEncodingKeepsTheContentAndChangesTheSize) {
  std::mt19937 rng(7);
  for (const auto& selection : kPipelines) {
    const ChunkLayout l = layout_with(selection, {});
    for (double density : {0.0, 0.05, 0.5, 1.0}) {
      const StructuredChunk c = random_chunk(l, density, rng);
      const Bytes usual = encode_chunk(c, l);
      Bytes moved = usual;
      avoid_chunk_size(moved, usual.size() + 1, l);
      EXPECT_EQ(moved, usual) << "no need to change: the usual encoding";
      avoid_chunk_size(moved, usual.size(), l);
      EXPECT_NE(moved.size(), usual.size()) << "density " << density;
      const StructuredChunk back = decode_chunk(moved.data(), moved.size(), l);
      EXPECT_EQ(back.defined.words(), c.defined.words());
      EXPECT_EQ(back.values, c.values);
      const std::uint32_t class_padding = read_chunk_header(usual.data(), usual.size(), l).padding;
      EXPECT_EQ(read_chunk_header(moved.data(), moved.size(), l).padding, class_padding + 1);
      Bytes dirty = moved;  // padding must be zero
      dirty.back() = 1;
      EXPECT_THROW(decode_chunk(dirty.data(), dirty.size(), l), Error);
      Bytes cut(moved.begin(), moved.end() - 1);  // the header promises the padding
      EXPECT_THROW(decode_chunk(cut.data(), cut.size(), l), Error);
      Bytes twice = moved;  // padding again: two bytes
      avoid_chunk_size(twice, moved.size(), l);
      EXPECT_EQ(read_chunk_header(twice.data(), twice.size(), l).padding, class_padding + 2);
      EXPECT_EQ(decode_chunk(twice.data(), twice.size(), l).values, c.values);
    }
  }
}

TEST(StructuredChunk, ChunksWithAFilteredSectionArePaddedToTheirSizeClass) {
  std::mt19937 rng(11);
  for_every_pipeline_pair(rng, [](const ChunkLayout& l, const StructuredChunk& c, const Bytes& stored) {
    const ChunkHeader header = read_chunk_header(stored.data(), stored.size(), l);
    const bool filtered = header.sections[0].filter_mask != (1u << l.selection_pipeline.size()) - 1 ||
                          header.sections[1].filter_mask != (1u << l.values_pipeline.size()) - 1;
    const std::uint64_t p = header.padding, size = stored.size();
    const std::uint64_t unpadded = size - p - (p ? varint_size(p) : 0);
    if (!filtered) {
      EXPECT_EQ(p, 0u) << "an unfiltered chunk's size follows from what it defines";
      return;
    }
    EXPECT_EQ(size, class_size_of(unpadded)) << unpadded;
    EXPECT_LE(size - unpadded, unpadded / 16 + 2) << "at most two class steps";
    EXPECT_EQ(decode_chunk(stored.data(), stored.size(), l).values, c.values);
  });
}

// The element count a stored chunk states: its selection's count when unfiltered and of a tag
// that has one (empty, offsets, Rice and Elias-Fano offsets), nothing otherwise.
TEST(StructuredChunk, StatedElementCountIsTheSelectionsOwn) {
  std::mt19937 rng(9);
  std::size_t stated_counts = 0;
  for_every_pipeline_pair(rng, [&](const ChunkLayout& l, const StructuredChunk& c, const Bytes& stored) {
    const std::optional<std::uint64_t> stated = stated_element_count(stored.data(), stored.size(), l);
    const ChunkHeader h = read_chunk_header(stored.data(), stored.size(), l);
    bool unfiltered = true;
    for (std::size_t i = 0; i < l.selection_pipeline.size(); ++i)
      unfiltered = unfiltered && (h.sections[0].filter_mask >> i & 1);
    const std::uint8_t tag = stored[h.size];
    if (unfiltered && (tag == 0 || tag == 3 || tag == 6 || tag == 7)) {
      ASSERT_TRUE(stated.has_value());
      EXPECT_EQ(*stated, c.defined.defined_count());
      stated_counts += *stated > 0;
    } else {
      EXPECT_FALSE(stated.has_value()) << int(tag);
    }
  });
  EXPECT_GT(stated_counts, 0u);
}
