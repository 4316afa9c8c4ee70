// Structured chunk serialization, validation, and the dense/merge/erase transformations.
#include "h5sparse/structured_chunk.hpp"

#include "h5sparse/chunk_scatter.hpp"


#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "h5sparse/checksum.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/fill_scan.hpp"
#include "h5sparse/varint.hpp"
#include "section_io.hpp"

namespace h5sparse {
namespace {

// Version 1 (read only): a fixed 60-byte header behind the magic "H5SC".
constexpr std::uint8_t kMagic[4] = {'H', '5', 'S', 'C'};
constexpr std::size_t kV1HeaderSize = 60;
constexpr std::size_t kV1SectionInfoSize = 24;
constexpr std::size_t kV1HeaderChecksumOffset = 56;
// Version 2: version byte, flags, then varint sizes and 32-bit checksums (docs/FORMAT.md), in
// the compact header of section_io.hpp.
constexpr const char* kSectionNames[2] = {"section 0 (selection)", "section 1 (values)"};

std::uint32_t get_u32(const std::uint8_t* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t(p[i]) << (8 * i);
  return v;
}
std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t(p[i]) << (8 * i);
  return v;
}

// The two sections of a fixed-size chunk for the compact header code.
std::array<detail::SectionKind, 2> kinds_of(const ChunkLayout& layout) {
  return {detail::SectionKind{&layout.selection_pipeline, 1, kSectionNames[0]},
          detail::SectionKind{&layout.values_pipeline, layout.element_size, kSectionNames[1]}};
}

// A variable-length layout has four sections (var_chunk.hpp); these functions handle two.
void refuse_var_layout(const ChunkLayout& layout) {
  H5SPARSE_FAIL_IF(layout.is_var(), ErrorCode::invalid_argument,
                   "a variable-length dataset's chunks are encoded and decoded by var_chunk.hpp");
}

// Gathers, for each defined element, which one of the chunk's elements it is (row-major).
template <typename F>
void for_each_defined(const ChunkSelection& s, F&& f) {
  s.for_each_run([&](std::uint64_t first, std::uint64_t length) {
    for (std::uint64_t i = first; i < first + length; ++i) f(i);
  });
}

}  // namespace

std::uint64_t ChunkLayout::element_count() const {
  std::uint64_t n = 1;
  for (std::uint64_t d : dims) n *= d;
  return n;
}

StructuredChunk StructuredChunk::empty(const ChunkLayout& layout) {
  return StructuredChunk{ChunkSelection(layout.element_count()), {}};
}

namespace {

using detail::PreparedSection;

void prepare_sections(const std::uint8_t* selection, std::size_t selection_size, const std::uint8_t* values,
                      std::size_t values_size, const ChunkLayout& layout, PreparedSection (&out)[2]) {
  refuse_var_layout(layout);
  const auto kinds = kinds_of(layout);
  detail::prepare_section(0, selection, selection_size, kinds[0], out[0]);
  detail::prepare_section(1, values, values_size, kinds[1], out[1]);
}

// Writes the version 2 header of `header` (whose `size` it ignores) and returns its size.
std::size_t write_header(const ChunkHeader& header, const ChunkLayout& layout, std::uint8_t* out) {
  return detail::write_compact_header(ChunkHeader::kVersion, header.sections.data(), kinds_of(layout).data(), 2,
                                      header.padding, out);
}

}  // namespace

void pad_to_size_class(ChunkHeader& header, const ChunkLayout& layout) {
  header.padding = 0;
  std::uint8_t head[ChunkHeader::kMaxSize];
  const std::uint64_t size =
      write_header(header, layout, head) + std::uint64_t(header.sections[0].stored_size) + header.sections[1].stored_size;
  header.padding = detail::size_class_padding(header.sections.data(), kinds_of(layout).data(), 2, size);
}

namespace {

Bytes encode_sections(const Bytes& selection, const Bytes& values, const ChunkLayout& layout) {
  PreparedSection sections[2];
  prepare_sections(selection.data(), selection.size(), values.data(), values.size(), layout, sections);
  ChunkHeader header;
  header.sections = {sections[0].info, sections[1].info};
  pad_to_size_class(header, layout);
  return serialize_chunk(header, {sections[0].stored, sections[1].stored}, layout);
}

}  // namespace

Bytes encode_chunk(const StructuredChunk& chunk, const ChunkLayout& layout) {
  H5SPARSE_FAIL_IF(chunk.values.size() != chunk.defined.defined_count() * layout.element_size, ErrorCode::invalid_argument,
          "chunk values do not match its defined elements");
  return encode_sections(encode_selection(chunk.defined, layout.dims), chunk.values, layout);
}

Bytes encode_chunk(const ChunkElements& chunk, const ChunkLayout& layout) {
  H5SPARSE_FAIL_IF(chunk.values.size() != chunk.offsets.size() * layout.element_size, ErrorCode::invalid_argument,
                   "chunk values do not match its defined elements");
  return encode_sections(encode_selection(chunk.offsets.data(), chunk.offsets.size(), layout.dims), chunk.values,
                         layout);
}

Bytes replace_chunk_values(const std::uint8_t* stored, std::size_t size, const Bytes& values,
                           const ChunkLayout& layout) {
  refuse_var_layout(layout);
  ChunkHeader header = read_chunk_header(stored, size, layout);
  H5SPARSE_FAIL_IF(values.size() != header.sections[1].unfiltered_size, ErrorCode::invalid_argument,
                   "new values do not match the stored chunk's defined elements");
  PreparedSection section;
  detail::prepare_section(1, values.data(), values.size(), kinds_of(layout)[1], section);
  header.version = ChunkHeader::kVersion;
  header.sections[1] = section.info;
  pad_to_size_class(header, layout);
  return serialize_chunk(header, {stored + header.size, section.stored}, layout);
}

std::size_t values_offset_in_place(const ChunkLayout& layout) {
  // Room for the header and section 0 up to the size of the bitmap encoding (tag + one bit per
  // element), which the encoder's choice never exceeds. Only a mandatory section-0 filter that
  // grows its input goes past it; encode_chunk_in_place then spills.
  return ChunkHeader::kMaxSize + 1 + std::size_t((layout.element_count() + 7) / 8);
}

ByteView encode_chunk_in_place(const ChunkSelection& defined, std::uint8_t* buffer, std::size_t values_size,
                               const ChunkLayout& layout, Bytes& spill) {
  H5SPARSE_FAIL_IF(values_size != defined.defined_count() * layout.element_size, ErrorCode::invalid_argument,
          "chunk values do not match its defined elements");
  const std::size_t values_offset = values_offset_in_place(layout);
  const Bytes selection = encode_selection(defined, layout.dims);
  PreparedSection sections[2];
  prepare_sections(selection.data(), selection.size(), buffer + values_offset, values_size, layout, sections);
  ChunkHeader header;
  header.sections = {sections[0].info, sections[1].info};
  pad_to_size_class(header, layout);
  std::uint8_t head[ChunkHeader::kMaxSize];
  const std::size_t head_size = write_header(header, layout, head);
  const std::size_t front = head_size + sections[0].info.stored_size;
  if (sections[1].stored != buffer + values_offset || front > values_offset || header.padding != 0) {
    serialize_chunk_into(header, {sections[0].stored, sections[1].stored}, layout, spill);
    return spill;
  }
  std::uint8_t* start = buffer + values_offset - front;
  std::memcpy(start, head, head_size);
  if (sections[0].info.stored_size) std::memcpy(start + head_size, sections[0].stored, sections[0].info.stored_size);
  return {start, front + values_size};
}

void serialize_chunk_into(const ChunkHeader& header, const std::array<const std::uint8_t*, 2>& stored,
                          const ChunkLayout& layout, Bytes& out) {
  const std::size_t size0 = header.sections[0].stored_size, size1 = header.sections[1].stored_size;
  std::uint8_t head[ChunkHeader::kMaxSize];
  const std::size_t head_size = write_header(header, layout, head);
  // Appended, not sized and overwritten: no zeroing pass over the chunk first.
  out.clear();
  out.reserve(head_size + size0 + size1 + header.padding);
  out.insert(out.end(), head, head + head_size);
  if (size0) out.insert(out.end(), stored[0], stored[0] + size0);
  if (size1) out.insert(out.end(), stored[1], stored[1] + size1);
  out.insert(out.end(), header.padding, 0);
}

Bytes serialize_chunk(const ChunkHeader& header, const std::array<const std::uint8_t*, 2>& stored,
                      const ChunkLayout& layout) {
  Bytes out;
  serialize_chunk_into(header, stored, layout, out);
  return out;
}

void avoid_chunk_size(Bytes& chunk, std::size_t size, const ChunkLayout& layout) {
  if (chunk.size() != size) return;
  ChunkHeader header = read_chunk_header(chunk.data(), chunk.size(), layout);
  H5SPARSE_FAIL_IF(header.padding == 0xFFFFFFFFu, ErrorCode::unsupported, "structured chunk padding is full");
  // The header records the padding, under its checksum (docs/FORMAT.md). Rewritten as
  // version 2, it grows by at least the padding byte.
  ++header.padding;
  const Bytes old = std::move(chunk);
  const std::uint8_t* p0 = old.data() + header.size;
  serialize_chunk_into(header, {p0, p0 + header.sections[0].stored_size}, layout, chunk);
}

namespace {

ChunkHeader read_v1_header(const std::uint8_t* data, std::size_t size) {
  H5SPARSE_FAIL_IF(size < kV1HeaderSize, ErrorCode::corrupt_data,
          "structured chunk of " + std::to_string(size) + " bytes is shorter than its 60-byte header");
  H5SPARSE_FAIL_IF(std::memcmp(data, kMagic, 4) != 0, ErrorCode::corrupt_data, "structured chunk has no H5SC magic");
  H5SPARSE_FAIL_IF(std::uint32_t(xxh3_64(data, kV1HeaderChecksumOffset)) != get_u32(data + kV1HeaderChecksumOffset),
          ErrorCode::corrupt_data, "structured chunk header checksum mismatch");
  H5SPARSE_FAIL_IF(data[4] != 1, ErrorCode::unsupported,
          "structured chunk format version " + std::to_string(data[4]) + " after the H5SC magic is unknown (1 is)");
  H5SPARSE_FAIL_IF(data[5] != 2, ErrorCode::corrupt_data, "structured chunk header: unexpected section count");
  ChunkHeader header{};
  header.version = 1;
  header.size = kV1HeaderSize;
  header.padding = std::uint32_t(data[6] | data[7] << 8);
  for (int s = 0; s < 2; ++s) {
    const std::uint8_t* p = data + 8 + kV1SectionInfoSize * std::size_t(s);
    SectionInfo& info = header.sections[std::size_t(s)];
    info.stored_size = get_u32(p);
    info.unfiltered_size = get_u32(p + 4);
    info.filter_mask = get_u32(p + 8);
    info.stored_checksum = get_u32(p + 12);
    info.checksum = get_u64(p + 16);
  }
  return header;
}

ChunkHeader read_v2_header(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout) {
  ChunkHeader header{};
  header.version = 2;
  const detail::CompactHeader compact =
      detail::read_compact_header(data, size, header.sections.data(), kinds_of(layout).data(), 2);
  header.size = compact.size;
  header.padding = compact.padding;
  return header;
}

}  // namespace

ChunkHeader read_chunk_header(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout) {
  H5SPARSE_FAIL_IF(size == 0, ErrorCode::corrupt_data, "structured chunk of 0 bytes");
  refuse_var_layout(layout);
  if (data[0] == ChunkHeader::kVersion) return read_v2_header(data, size, layout);
  H5SPARSE_FAIL_IF(data[0] == kVarChunkVersion, ErrorCode::corrupt_data,
                   "a variable-length structured chunk (format version 3) in a fixed-size dataset");
  H5SPARSE_FAIL_IF(data[0] != kMagic[0], ErrorCode::unsupported,
                   "structured chunk format version " + std::to_string(data[0]) + " is unknown to this reader (1-3)");
  const ChunkHeader header = read_v1_header(data, size);
  detail::check_chunk_total(data, size, header.size, header.padding, header.sections.data(), 2);
  return header;
}

ByteView unfilter_section_to(std::size_t s, const std::uint8_t* stored, const SectionInfo& info,
                             const ChunkLayout& layout, std::array<Bytes, 2>& scratch) {
  return detail::unfilter_stored(stored, info, kinds_of(layout)[s], scratch);
}

Bytes unfilter_section(std::size_t s, const std::uint8_t* stored, const SectionInfo& info, const ChunkLayout& layout) {
  std::array<Bytes, 2> scratch;
  return detach_result(unfilter_section_to(s, stored, info, layout, scratch), scratch);
}

StructuredChunk chunk_from_sections(Bytes selection, Bytes values, const ChunkLayout& layout) {
  StructuredChunk chunk;
  try {
    chunk.defined = decode_selection(selection.data(), selection.size(), layout.dims);
  } catch (const Error& e) {
    throw Error(ErrorCode::corrupt_data, std::string(kSectionNames[0]) + ": " + e.what());
  }
  if (values.size() != chunk.defined.defined_count() * layout.element_size)
    throw Error(ErrorCode::corrupt_data, "section 1 (values) holds " + std::to_string(values.size()) +
                                             " bytes for " + std::to_string(chunk.defined.defined_count()) +
                                             " defined elements");
  chunk.values = std::move(values);
  return chunk;
}

namespace {

// A stored chunk's two sections, verified and unfiltered: borrowed from the stored bytes when
// their pipeline is empty (stored = unfiltered), else decoded into `owned` (section 1 with
// values_scratch: into the caller's buffers).
struct UnfilteredSections {
  ChunkHeader header;
  std::array<const std::uint8_t*, 2> bytes{};
  std::array<Bytes, 2> owned;
};

UnfilteredSections unfilter_sections(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout,
                                     std::array<Bytes, 2>* values_scratch) {
  UnfilteredSections out;
  out.header = read_chunk_header(data, size, layout);
  const ChunkHeader& header = out.header;
  const std::uint8_t* p = data + header.size;
  const auto kinds = kinds_of(layout);
  for (std::size_t s = 0; s < 2; ++s) {
    const SectionInfo& info = header.sections[s];
    std::array<Bytes, 2> scratch;
    std::array<Bytes, 2>& into = s == 1 && values_scratch ? *values_scratch : scratch;
    const ByteView section = detail::unfilter_verified(p, info, kinds[s], header.version, into);
    if (section.data != p && &into == &scratch) out.owned[s] = detach_result(section, scratch);
    out.bytes[s] = out.owned[s].empty() ? section.data : out.owned[s].data();
    p += info.stored_size;
  }
  if (header.version == 1 && header.sections[0].unfiltered_size > 0 &&
      out.bytes[0][0] >= std::uint8_t(SelectionEncoding::rice_offsets))
    throw Error(ErrorCode::corrupt_data, std::string(kSectionNames[0]) + ": encoding tag " +
                                             std::to_string(out.bytes[0][0]) + " in a format version 1 chunk");
  return out;
}

// Section 1 must hold one value per defined element.
void check_value_count(const ChunkHeader& header, std::uint64_t defined, const ChunkLayout& layout) {
  const std::size_t values_size = header.sections[1].unfiltered_size;
  if (values_size != defined * layout.element_size)
    throw Error(ErrorCode::corrupt_data, "section 1 (values) holds " + std::to_string(values_size) +
                                             " bytes for " + std::to_string(defined) + " defined elements");
}

template <typename Decode>
void decode_section0(Decode&& decode) {
  try {
    decode();
  } catch (const Error& e) {
    throw Error(ErrorCode::corrupt_data, std::string(kSectionNames[0]) + ": " + e.what());
  }
}

}  // namespace

ChunkView decode_chunk_view(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout,
                            std::array<Bytes, 2>* values_scratch) {
  UnfilteredSections sections = unfilter_sections(data, size, layout, values_scratch);
  const ChunkHeader& header = sections.header;
  ChunkView view;
  std::uint64_t defined = 0;
  decode_section0([&] {
    view.defined = decode_selection(sections.bytes[0], header.sections[0].unfiltered_size, layout.dims, &defined);
  });
  check_value_count(header, defined, layout);
  view.values_size = header.sections[1].unfiltered_size;
  view.owned = std::move(sections.owned[1]);  // a moved vector keeps its buffer: bytes[1] stays valid
  view.values = sections.bytes[1];
  return view;
}

std::optional<std::uint64_t> stated_element_count(const std::uint8_t* data, std::size_t size,
                                                  const ChunkLayout& layout) {
  const ChunkHeader h = read_chunk_header(data, size, layout);
  const SectionInfo& selection = h.sections[0];
  for (std::size_t i = 0; i < layout.selection_pipeline.size(); ++i)
    if (i >= 32 || !(selection.filter_mask >> i & 1)) return std::nullopt;  // filtered
  const std::uint8_t* p = data + h.size;
  const std::uint8_t* const end = p + selection.stored_size;
  if (p == end) return std::nullopt;
  const std::uint8_t tag = *p++;
  if (tag == 0) return 0;
  if (tag != 3 && tag != 6 && tag != 7) return std::nullopt;
  try {
    return read_varint32(p, end, "selection count");
  } catch (const Error&) {
    return std::nullopt;  // the decode says what is wrong
  }
}

ChunkElements decode_chunk_elements(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout) {
  UnfilteredSections sections = unfilter_sections(data, size, layout, nullptr);
  const ChunkHeader& header = sections.header;
  ChunkElements chunk;
  decode_section0([&] {
    decode_selection_offsets(sections.bytes[0], header.sections[0].unfiltered_size, layout.dims, chunk.offsets);
  });
  check_value_count(header, chunk.offsets.size(), layout);
  if (!sections.owned[1].empty())
    chunk.values = std::move(sections.owned[1]);
  else
    chunk.values.assign(sections.bytes[1], sections.bytes[1] + header.sections[1].unfiltered_size);
  return chunk;
}

ChunkElements decode_chunk_elements_in(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout,
                                       const std::vector<OffsetRange>& ranges) {
  UnfilteredSections sections = unfilter_sections(data, size, layout, nullptr);
  const ChunkHeader& header = sections.header;
  ChunkElements chunk;
  std::vector<RankRun> runs;
  std::uint64_t defined = 0;
  decode_section0([&] {
    defined = decode_selection_in(sections.bytes[0], header.sections[0].unfiltered_size, layout.dims, ranges,
                                  chunk.offsets, runs);
  });
  check_value_count(header, defined, layout);
  const std::size_t es = layout.element_size;
  chunk.values.resize(chunk.offsets.size() * es);
  std::uint8_t* to = chunk.values.data();
  for (const RankRun& run : runs) {
    std::memcpy(to, sections.bytes[1] + run.rank * es, run.count * es);
    to += run.count * es;
  }
  return chunk;
}

StructuredChunk decode_chunk(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout) {
  ChunkView view = decode_chunk_view(data, size, layout);
  StructuredChunk chunk;
  chunk.defined = std::move(view.defined);
  if (!view.owned.empty())
    chunk.values = std::move(view.owned);
  else if (view.values_size)
    chunk.values.assign(view.values, view.values + view.values_size);
  return chunk;
}

void expand_to_dense(const StructuredChunk& chunk, const ChunkLayout& layout, const std::uint8_t* fill,
                     std::uint8_t* dense) {
  const std::size_t es = layout.element_size;
  const std::uint64_t n = layout.element_count();
  fill_elements(dense, n, fill, es);
  const std::uint8_t* v = chunk.values.data();
  // Short runs dominate random selections: copy them with fixed-size moves, not a memcpy call.
  auto scatter = [&](auto width) {
    constexpr std::size_t W = decltype(width)::value;
    // Walk the set bits word by word (ctz), whole words at once when full: no per-run calls.
    const auto& words = chunk.defined.words();
    for (std::size_t wi = 0; wi < words.size(); ++wi) {
      std::uint64_t w = words[wi];
      std::uint8_t* base = dense + wi * 64 * W;
      if (w == ~std::uint64_t(0)) {
        std::memcpy(base, v, 64 * W);
        v += 64 * W;
        continue;
      }
      while (w) {
        std::memcpy(base + std::size_t(__builtin_ctzll(w)) * W, v, W);
        v += W;
        w &= w - 1;
      }
    }
  };
  switch (es) {
    case 1: scatter(std::integral_constant<std::size_t, 1>{}); break;
    case 2: scatter(std::integral_constant<std::size_t, 2>{}); break;
    case 4: scatter(std::integral_constant<std::size_t, 4>{}); break;
    case 8: scatter(std::integral_constant<std::size_t, 8>{}); break;
    default:
      chunk.defined.for_each_run([&](std::uint64_t first, std::uint64_t length) {
        std::memcpy(dense + first * es, v, length * es);
        v += length * es;
      });
  }
}

StructuredChunk from_dense(const std::uint8_t* dense, const ChunkLayout& layout,
                           const std::uint8_t* undefined_value) {
  const std::size_t es = layout.element_size;
  const std::uint64_t n = layout.element_count();
  StructuredChunk chunk = StructuredChunk::empty(layout);
  if (undefined_value == nullptr) {
    chunk.defined.set_range(0, n);
    chunk.values.assign(dense, dense + n * es);
    return chunk;
  }
  // The connector's vectorised scan (fill_scan.hpp); it may store up to kPackSlack bytes past
  // the last value.
  chunk.values.resize(std::size_t(n) * es + kPackSlack);
  const std::uint8_t* end =
      pack_differing(dense, n, 0, undefined_value, es, chunk.defined, chunk.values.data());
  chunk.values.resize(std::size_t(end - chunk.values.data()));
  return chunk;
}

void merge_write(StructuredChunk& chunk, const ChunkSelection& written, const std::uint8_t* values,
                 std::size_t element_size) {
  ChunkSelection merged = chunk.defined;
  merged |= written;
  Bytes out;
  out.reserve(merged.defined_count() * element_size);
  const std::uint8_t* old_value = chunk.values.data();
  const std::uint8_t* new_value = values;
  for_each_defined(merged, [&](std::uint64_t i) {
    const bool was = chunk.defined.test(i);
    if (written.test(i)) {
      out.insert(out.end(), new_value, new_value + element_size);
      new_value += element_size;
    } else {
      out.insert(out.end(), old_value, old_value + element_size);
    }
    if (was) old_value += element_size;
  });
  chunk.defined = std::move(merged);
  chunk.values = std::move(out);
}

void erase(StructuredChunk& chunk, const ChunkSelection& erased, std::size_t element_size) {
  Bytes out;
  out.reserve(chunk.values.size());
  const std::uint8_t* value = chunk.values.data();
  for_each_defined(chunk.defined, [&](std::uint64_t i) {
    if (!erased.test(i)) out.insert(out.end(), value, value + element_size);
    value += element_size;
  });
  chunk.defined.subtract(erased);
  chunk.values = std::move(out);
}

}  // namespace h5sparse
