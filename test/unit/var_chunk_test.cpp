// Variable-length structured chunks (format version 3): random writes and erases against a
// model through every kind of section pipeline, NULL against empty, empty chunks, a forged
// chunk per decoder check, every flipped byte, the 4 GiB limits, and the exact bytes of the
// example in docs/FORMAT.md.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>

#include "h5sparse/checksum.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"
#include "h5sparse/sparse_layout.hpp"
#include "h5sparse/var_chunk.hpp"
#include "h5sparse/varint.hpp"
#include "test_layouts.hpp"

using namespace h5sparse;

namespace {

const SectionPipeline kPipelines[] = {
    {},
    {{kFilterDeflate, 0, {6}}},
    {{kFilterShuffle, 0, {}}, {kFilterLzf, kFilterFlagOptional, {}}},
    {{kFilterBlosc, kFilterFlagOptional, {2, 2, 0, 0, 5, 1, 5}}},
};

// A compound {3 fixed bytes, a string, a sequence of 4-byte integers} and a plain string.
ChunkLayout compound_layout(std::size_t p = 0) {
  ChunkLayout l;
  l.dims = {12, 10};
  l.element_size = 16;
  l.var.fixed_size = 3;
  l.var.slot_base_sizes = {1, 4};
  l.selection_pipeline = kPipelines[p % 4];
  l.values_pipeline = kPipelines[(p + 1) % 4];
  l.lengths_pipeline = kPipelines[(p + 2) % 4];
  l.data_pipeline = kPipelines[(p + 3) % 4];
  return l;
}
ChunkLayout string_layout() {
  ChunkLayout l;
  l.dims = {4};
  l.element_size = 16;
  l.var.slot_base_sizes = {1};
  return l;
}

using Slot = std::optional<Bytes>;  // nullopt: NULL
struct Element {
  Bytes fixed;
  std::vector<Slot> slots;
};
using Model = std::map<std::uint32_t, Element>;

Element random_element(const VarType& t, std::mt19937& rng) {
  Element e;
  for (std::size_t b = 0; b < t.fixed_size; ++b) e.fixed.push_back(std::uint8_t(rng()));
  for (std::size_t base : t.slot_base_sizes) {
    const unsigned kind = rng() % 6;
    if (kind == 0) {
      e.slots.push_back(std::nullopt);
      continue;
    }
    Bytes payload((kind == 1 ? 0 : rng() % (kind == 5 ? 300 : 12)) * base);
    for (auto& byte : payload) byte = std::uint8_t('a' + rng() % 4);
    e.slots.push_back(payload);
  }
  return e;
}

ChunkVarElements elements_of(const Model& model, const VarType& t) {
  ChunkVarElements c;
  for (const auto& [offset, e] : model) {
    std::vector<VarPayload> slots;
    for (const Slot& s : e.slots) slots.push_back(s ? VarPayload{s->data(), s->size(), false} : VarPayload{nullptr, 0, true});
    c.offsets.push_back(offset);
    c.values.append(t, e.fixed.data(), slots.data());
  }
  return c;
}

void expect_equal(const ChunkVarElements& c, const Model& model, const VarType& t) {
  ASSERT_EQ(c.offsets.size(), model.size());
  check_var_values(c.values, c.offsets.size(), t);
  std::size_t e = 0;
  for (const auto& [offset, want] : model) {
    EXPECT_EQ(c.offsets[e], offset);
    EXPECT_EQ(Bytes(c.values.fixed.begin() + std::ptrdiff_t(e * t.fixed_size),
                    c.values.fixed.begin() + std::ptrdiff_t((e + 1) * t.fixed_size)),
              want.fixed);
    for (std::size_t m = 0; m < t.slots(); ++m) {
      const VarPayload got = c.values.payload(e * t.slots() + m);
      ASSERT_EQ(got.null, !want.slots[m].has_value()) << "element " << offset << " slot " << m;
      if (want.slots[m]) {
        EXPECT_EQ(Bytes(got.data, got.data + got.size), *want.slots[m]);
      }
    }
    ++e;
  }
}

ChunkVarElements round_trip(const ChunkVarElements& c, const ChunkLayout& l) {
  const Bytes stored = encode_var_chunk(c, l);
  return decode_var_chunk(stored.data(), stored.size(), l);
}

// A version-3 chunk written by hand from its four unfiltered sections (docs/FORMAT.md), so
// that each content check of the decoder can be reached behind valid checksums.
Bytes forge(const std::array<Bytes, 4>& sections) {
  Bytes out{kVarChunkVersion, 0};
  std::uint8_t buf[10];
  for (const Bytes& s : sections) {
    out.insert(out.end(), buf, write_varint(buf, s.size()));
    const std::uint32_t sum = std::uint32_t(xxh3_64(s.data(), s.size()));
    for (int i = 0; i < 4; ++i) out.push_back(std::uint8_t(sum >> (8 * i)));
  }
  const std::uint32_t sum = std::uint32_t(xxh3_64(out.data(), out.size()));
  for (int i = 0; i < 4; ++i) out.push_back(std::uint8_t(sum >> (8 * i)));
  for (const Bytes& s : sections) out.insert(out.end(), s.begin(), s.end());
  return out;
}

void expect_corrupt(const Bytes& chunk, const ChunkLayout& l, const std::string& says) {
  try {
    decode_var_chunk(chunk.data(), chunk.size(), l);
    ADD_FAILURE() << "decoded: " << says;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::corrupt_data) << e.what();
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(VarChunk, RandomWritesAndErasesFollowTheModel) {
  std::mt19937 rng(21);
  for (std::size_t p = 0; p < 4; ++p) {
    const ChunkLayout l = compound_layout(p);
    const VarType& t = l.var;
    Model model;
    ChunkVarElements chunk;
    for (int step = 0; step < 60; ++step) {
      const unsigned n = unsigned(l.element_count());
      if (rng() % 3) {  // write: new elements and overwrites, longer or shorter than before
        Model written;
        for (unsigned k = rng() % 20; k > 0; --k) written[rng() % n] = random_element(t, rng);
        chunk = merge_var_elements(chunk, elements_of(written, t), t);
        for (auto& [o, e] : written) model[o] = e;
      } else if (rng() % 2) {
        std::vector<std::uint32_t> erased;
        for (unsigned o = 0; o < n; ++o)
          if (rng() % 4 == 0) erased.push_back(o);
        std::size_t held = 0;
        for (std::uint32_t o : erased) held += model.erase(o);
        EXPECT_EQ(erase_var_elements(chunk, erased, t), held);
      } else {
        ChunkSelection erased(n);
        const unsigned first = rng() % n;
        erased.set_range(first, std::min<unsigned>(n - first, 1 + rng() % 30));
        std::size_t held = 0;
        for (unsigned o = 0; o < n; ++o)
          if (erased.test(o)) held += model.erase(o);
        EXPECT_EQ(erase_var_elements(chunk, erased, t), held);
      }
      expect_equal(chunk, model, t);
      chunk = round_trip(chunk, l);
      expect_equal(chunk, model, t);
    }
  }
}

TEST(VarChunk, ChunksWithAFilteredSectionArePaddedToTheirSizeClass) {
  std::mt19937 rng(5);
  for (std::size_t p = 0; p < 4; ++p) {
    const ChunkLayout l = compound_layout(p);  // each has filtered sections
    Model model;
    for (int step = 0; step < 20; ++step) {
      for (unsigned k = 1 + rng() % 20; k > 0; --k) model[rng() % l.element_count()] = random_element(l.var, rng);
      const ChunkVarElements elements = elements_of(model, l.var);
      const Bytes chunk = encode_var_chunk(elements, l);
      const std::uint32_t padding = read_var_chunk_header(chunk.data(), chunk.size(), l).padding;
      const std::uint64_t unpadded = chunk.size() - padding - (padding ? varint_size(padding) : 0);
      EXPECT_EQ(chunk.size(), class_size_of(unpadded)) << unpadded;
      const Bytes more = encode_var_chunk(elements, l, 1);  // an SWMR rewrite: one byte more
      EXPECT_EQ(read_var_chunk_header(more.data(), more.size(), l).padding, padding + 1);
      EXPECT_NE(more.size(), chunk.size());
      expect_equal(decode_var_chunk(more.data(), more.size(), l), model, l.var);
    }
  }
}

TEST(VarChunk, NullAndEmptyStayDistinct) {
  const ChunkLayout l = string_layout();
  Model model;
  model[0] = Element{{}, {std::nullopt}};
  model[1] = Element{{}, {Bytes{}}};
  model[3] = Element{{}, {Bytes{'h', 'i'}}};
  const ChunkVarElements back = round_trip(elements_of(model, l.var), l);
  expect_equal(back, model, l.var);
  EXPECT_TRUE(back.values.payload(0).null);
  EXPECT_FALSE(back.values.payload(1).null);
}

TEST(VarChunk, EmptyChunksAndEmptyPayloads) {
  for (std::size_t p = 0; p < 4; ++p) {
    const ChunkLayout l = compound_layout(p);
    expect_equal(round_trip(ChunkVarElements{}, l), Model{}, l.var);
    Model empties;  // every element defined, every payload empty: a data section of 0 bytes
    for (std::uint32_t o = 0; o < l.element_count(); ++o) empties[o] = Element{{1, 2, 3}, {Bytes{}, Bytes{}}};
    expect_equal(round_trip(elements_of(empties, l.var), l), empties, l.var);
  }
}

// The example of docs/FORMAT.md, byte for byte: strings "ab", NULL, "" at offsets 0, 1, 3.
TEST(VarChunk, FormatExample) {
  const ChunkLayout l = string_layout();
  Model model;
  model[0] = Element{{}, {Bytes{'a', 'b'}}};
  model[1] = Element{{}, {std::nullopt}};
  model[3] = Element{{}, {Bytes{}}};
  const Bytes chunk = encode_var_chunk(elements_of(model, l.var), l);
  // The selection (tag 3 offsets: 3 elements, gaps 0 0 1; the bitmap 02 0b is smaller).
  const Bytes selection{2, 0x0b}, lengths{3, 0, 1}, data{'a', 'b'};
  EXPECT_EQ(chunk, forge({selection, Bytes{}, lengths, data}));
}

TEST(VarChunk, ForgedContentIsCorrupt) {
  const ChunkLayout l = string_layout();
  const Bytes sel{2, 0x0b};  // elements 0, 1, 3
  expect_corrupt(forge({sel, {}, {3, 0}, {'a', 'b'}}), l, "section 2 (lengths) holds 2 bytes for 3 lengths");
  expect_corrupt(forge({sel, {}, {3, 0, 1, 1}, {'a', 'b'}}), l, "bytes after its last length");
  expect_corrupt(forge({sel, {}, {4, 0, 1}, {'a', 'b'}}), l, "exceed the 2 bytes of section 3");
  expect_corrupt(forge({sel, {}, {2, 0, 1}, {'a', 'b'}}), l, "add up to 1 bytes");
  expect_corrupt(forge({sel, {}, {0x83, 0x80, 0x80, 0x80, 0x80, 0x01, 0, 1}, {'a', 'b'}}), l, "longer than 5 bytes");
  expect_corrupt(forge({sel, {}, {0x83, 0x80, 0x80, 0x80, 0x70, 0, 1}, {'a', 'b'}}), l, "above 32 bits");
  expect_corrupt(forge({sel, {7}, {3, 0, 1}, {'a', 'b'}}), l, "section 1 (values) holds 1 bytes");
  expect_corrupt(forge({Bytes{2, 0xff}, Bytes{}, Bytes{1, 1, 1}, Bytes{}}), l, "section 0 (selection)");
}

TEST(VarChunk, OtherFormatsAreRefused) {
  const ChunkLayout l = string_layout();
  Bytes chunk = encode_var_chunk(ChunkVarElements{}, l);
  ChunkLayout fixed = l;
  fixed.var = VarType{};
  fixed.element_size = 4;
  try {  // a fixed-size reader meeting a variable-length chunk
    decode_chunk(chunk.data(), chunk.size(), fixed);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::corrupt_data) << e.what();
  }
  const Bytes fixed_chunk = encode_chunk(StructuredChunk::empty(fixed), fixed);
  expect_corrupt(fixed_chunk, l, "fixed-size structured chunk");
  chunk[0] = 4;
  try {
    decode_var_chunk(chunk.data(), chunk.size(), l);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported) << e.what();
  }
  EXPECT_THROW(encode_chunk(StructuredChunk::empty(l), l), Error);  // the fixed-size encoder refuses VL layouts
  EXPECT_THROW(encode_var_chunk(ChunkVarElements{}, fixed), Error);
}

TEST(VarChunk, EveryFlippedByteIsDetected) {
  std::mt19937 rng(5);
  for (std::size_t p = 0; p < 4; ++p) {
    const ChunkLayout l = compound_layout(p);
    Model model;
    for (int k = 0; k < 15; ++k) model[rng() % 120] = random_element(l.var, rng);
    const Bytes good = encode_var_chunk(elements_of(model, l.var), l);
    for (std::size_t i = 0; i < good.size(); ++i) {
      Bytes bad = good;
      bad[i] ^= std::uint8_t(1 + rng() % 255);
      EXPECT_THROW(decode_var_chunk(bad.data(), bad.size(), l), Error) << "byte " << i << " pipelines " << p;
    }
    for (std::size_t cut = 0; cut < good.size(); ++cut)
      EXPECT_THROW(decode_var_chunk(good.data(), cut, l), Error) << "cut at " << cut;
  }
}

TEST(VarChunk, InconsistentValuesAreRefusedOnEncode) {
  const ChunkLayout l = compound_layout();
  ChunkVarElements c;
  c.offsets = {5};
  const std::uint8_t fixed[3] = {1, 2, 3};
  const std::uint8_t odd[3] = {1, 2, 3};
  VarPayload slots[2] = {{nullptr, 0, true}, {odd, 3, false}};  // 3 bytes of 4-byte integers
  c.values.append(l.var, fixed, slots);
  EXPECT_THROW(encode_var_chunk(c, l), Error);
  VarPayload null_with_bytes[2] = {{odd, 2, true}, {nullptr, 0, false}};
  EXPECT_THROW(c.values.append(l.var, fixed, null_with_bytes), Error);
  ChunkVarElements unordered = elements_of(Model{{1, Element{{1, 2, 3}, {Bytes{}, Bytes{}}}},
                                                 {2, Element{{1, 2, 3}, {Bytes{}, Bytes{}}}}},
                                           l.var);
  std::swap(unordered.offsets[0], unordered.offsets[1]);
  EXPECT_THROW(encode_var_chunk(unordered, l), Error);
}

TEST(VarChunk, SectionsNearFourGiBAreRefused) {
  EXPECT_NO_THROW(check_var_section_sizes({0, 0, 0, kMaxChunkBytes}));
  try {
    check_var_section_sizes({0, 0, 0, kMaxChunkBytes + 1});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("section 3 (data) of 4294967296 bytes exceeds"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_var_section_sizes({0, 0, std::uint64_t(1) << 33, 0}), Error);
}

// Parameters version 2 (docs/FORMAT.md): four pipelines, the element's parts, the true type.
SparseParams var_params() {
  SparseParams p;
  p.options = kOptionFillIsUndefined;
  p.layout = compound_layout(1);
  p.slot_kinds = {SlotKind::utf8, SlotKind::sequence};
  p.true_type = {3, 1, 0x36, 0, 0, 0, 7};  // any bytes: only the connector decodes them
  return p;
}

TEST(VarParams, CompleteFormRoundTrips) {
  const SparseParams p = var_params();
  const std::vector<unsigned> complete = to_cd_values(p);
  EXPECT_EQ(complete[0], kVarParamsMagic);
  ASSERT_TRUE(is_complete_form(complete.data(), complete.size()));
  const SparseParams back = from_cd_values(complete.data(), complete.size());
  EXPECT_TRUE(back.is_var());
  EXPECT_EQ(back.options, p.options);
  EXPECT_EQ(back.layout.dims, p.layout.dims);
  EXPECT_EQ(back.layout.element_size, kVarCarrierSize);
  EXPECT_EQ(back.layout.var, p.layout.var);
  EXPECT_EQ(back.layout.lengths_pipeline, p.layout.lengths_pipeline);
  EXPECT_EQ(back.layout.data_pipeline, p.layout.data_pipeline);
  EXPECT_EQ(back.slot_kinds, p.slot_kinds);
  EXPECT_EQ(back.true_type, p.true_type);
  EXPECT_TRUE(back.fill.empty());
  // The request form carries the four pipelines.
  const SparseParams request = parse_request(to_request(p));
  EXPECT_EQ(request.layout.data_pipeline, p.layout.data_pipeline);
  EXPECT_EQ(request.layout.lengths_pipeline, p.layout.lengths_pipeline);
  // Sections 2-3 named before the datatype is known (a DCPL) survive the request form.
  SparseParams before_type;
  before_type.layout.data_pipeline = p.layout.data_pipeline;
  EXPECT_EQ(parse_request(to_request(before_type)).layout.data_pipeline, p.layout.data_pipeline);
}

TEST(VarParams, BadParametersAreRefused) {
  SparseParams no_type = var_params();
  no_type.true_type.clear();
  EXPECT_THROW(to_cd_values(no_type), Error);
  SparseParams wide_string = var_params();
  wide_string.layout.var.slot_base_sizes[0] = 2;  // a string's base size is 1
  EXPECT_THROW(to_cd_values(wide_string), Error);
  SparseParams with_fill = var_params();
  with_fill.fill.assign(kVarCarrierSize, 1);
  EXPECT_THROW(to_cd_values(with_fill), Error);
  SparseParams fixed_with_data = var_params();
  fixed_with_data.layout.var = VarType{};
  EXPECT_THROW(to_cd_values(fixed_with_data), Error);  // sections 2-3 pipelines on a fixed-size type
  const std::vector<unsigned> good = to_cd_values(var_params());
  for (std::size_t n = 1; n < good.size(); ++n) EXPECT_THROW(from_cd_values(good.data(), n), Error) << n;
  std::vector<unsigned> bad_kind = good;
  const std::size_t slots_at = good.size() - 2 - 1 - 4 - 1;  // ... M, 2 x (kind, base), t, 2 words
  ASSERT_EQ(bad_kind[slots_at], 2u);
  bad_kind[slots_at + 1] = 3;  // a kind from a newer writer
  try {
    from_cd_values(bad_kind.data(), bad_kind.size());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
  }
}

TEST(VarParams, DataPipelineChosenByTheDatatypeWhenTheRequestSaysSo) {
  SparseParams request;
  request.options = kOptionFillIsUndefined | kOptionVarDataByType;
  const SparseParams parsed = parse_request(to_request(request));
  EXPECT_EQ(parsed.options, request.options);
  EXPECT_TRUE(parsed.layout.data_pipeline.empty());
  // Strings: Blosc zstd level 1; any sequence slot: level 3 (cd_values[4]); byte shuffle.
  const std::map<std::vector<SlotKind>, unsigned> level_of{
      {{SlotKind::ascii}, 1}, {{SlotKind::utf8, SlotKind::ascii}, 1}, {{SlotKind::sequence}, 3},
      {{SlotKind::utf8, SlotKind::sequence}, 3}};
  for (const auto& [kinds, level] : level_of) {
    SparseParams p = var_params();
    p.options = parsed.options;
    p.slot_kinds = kinds;
    p.layout.var.slot_base_sizes.assign(kinds.size(), 1);
    choose_var_data_pipeline(p);
    EXPECT_EQ(p.options, unsigned(kOptionFillIsUndefined)) << "the bit is not stored";
    ASSERT_EQ(p.layout.data_pipeline.size(), 1u);
    EXPECT_EQ(p.layout.data_pipeline[0].id, kFilterBlosc);
    EXPECT_EQ(p.layout.data_pipeline[0].cd_values, (std::vector<unsigned>{0, 0, 0, 0, level, 1, 5}));
    const std::vector<unsigned> complete = to_cd_values(p);
    EXPECT_EQ(from_cd_values(complete.data(), complete.size()).layout.data_pipeline, p.layout.data_pipeline);
  }
  // Without the bit, the request's own pipeline (here none) stays.
  SparseParams given = var_params();
  choose_var_data_pipeline(given);
  EXPECT_EQ(given.layout.data_pipeline, var_params().layout.data_pipeline);
}

TEST(VarParams, DataByTypeIsRefusedWhereItCannotApply) {
  SparseParams both;
  both.options = kOptionVarDataByType;
  both.layout.data_pipeline = {SectionFilter{kFilterLzf, 0, {}}};
  EXPECT_THROW(parse_request(to_request(both)), Error);  // a pipeline and the bit
  SparseParams unresolved = var_params();
  unresolved.options |= kOptionVarDataByType;
  EXPECT_THROW(to_cd_values(unresolved), Error);  // never stored
  SparseParams fixed;
  fixed.options = kOptionVarDataByType;
  fixed.layout.dims = {4};
  fixed.layout.element_size = 4;
  EXPECT_THROW(to_cd_values(fixed), Error);  // a fixed-size datatype has no section 3
  EXPECT_THROW(parse_request({4}), Error);   // an unknown bit
}
