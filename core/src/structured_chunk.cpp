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
#include "h5sparse/kept_memory.hpp"
#include "h5sparse/varint.hpp"

namespace h5sparse {
namespace {

// Version 1 (read only): a fixed 60-byte header behind the magic "H5SC".
constexpr std::uint8_t kMagic[4] = {'H', '5', 'S', 'C'};
constexpr std::size_t kV1HeaderSize = 60;
constexpr std::size_t kV1SectionInfoSize = 24;
constexpr std::size_t kV1HeaderChecksumOffset = 56;
// Version 2: version byte, flags, then varint sizes and 32-bit checksums (docs/FORMAT.md).
constexpr std::uint8_t kFlagFiltered[2] = {1, 2};
constexpr std::uint8_t kFlagPadding = 4;
constexpr const char* kSectionNames[2] = {"section 0 (selection)", "section 1 (values)"};

void put_u32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = std::uint8_t(v >> (8 * i));
}
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

const SectionPipeline& pipeline_of(std::size_t s, const ChunkLayout& layout) {
  return s == 0 ? layout.selection_pipeline : layout.values_pipeline;
}

// The filter mask of a section no filter of `pipeline` ran on: every filter skipped.
std::uint32_t all_skipped(const SectionPipeline& pipeline) {
  return pipeline.size() >= 32 ? 0xFFFFFFFFu : (std::uint32_t(1) << pipeline.size()) - 1;
}

// Whether the unfiltered bytes hash to what the header records: all 64 bits in version 1,
// the low 32 in version 2.
bool unfiltered_checksum_matches(const ChunkHeader& header, const SectionInfo& info, std::uint64_t hash) {
  return header.version == 1 ? hash == info.checksum : std::uint32_t(hash) == info.checksum;
}

void put_varint(std::uint8_t*& p, std::uint32_t v) { p = write_varint(p, v); }

std::uint32_t checked_u32(std::size_t size, const char* what) {
  H5SPARSE_FAIL_IF(size > 0xFFFFFFFFu, ErrorCode::unsupported, std::string(what) + " exceeds 4 GiB");
  return std::uint32_t(size);
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

// One section on its way to storage: its header fields, and where its stored bytes are (the
// unfiltered bytes themselves, or a pipeline's output in scratch buffers).
struct PreparedSection {
  SectionInfo info{};
  const std::uint8_t* stored = nullptr;
  std::array<Bytes, 2> own;  // scratch of a section too large to keep per thread
};

// Pipeline output buffers per thread and section, reused from chunk to chunk (a fresh output
// buffer per chunk cost a zeroing pass and page faults); a section above kKeptScratch bytes
// uses buffers of its own, so a thread never keeps more than that, and all threads together
// no more than the kept-memory budget (kept_memory.hpp).
constexpr std::size_t kKeptScratch = std::size_t(8) << 20;

struct SectionScratch final : Keeper {
  std::array<std::array<Bytes, 2>, 2> kept;
  std::size_t held() const noexcept override {
    std::size_t bytes = 0;
    for (const auto& section : kept)
      for (const Bytes& b : section) bytes += b.capacity();
    return bytes;
  }
  void free_buffers() noexcept override {
    for (auto& section : kept)
      for (Bytes& b : section) Bytes().swap(b);
  }
};

std::array<Bytes, 2>& section_scratch(std::size_t section, std::size_t size, PreparedSection& out) {
  thread_local SectionScratch scratch;
  if (size > kKeptScratch) return out.own;
  if (section == 0) scratch.settle();  // a chunk starts with section 0: the last chunk's are done with
  return scratch.kept[section];
}

void prepare_section(std::size_t section, const std::uint8_t* data, std::size_t size, const SectionPipeline& pipeline,
                     std::size_t element_size, PreparedSection& out) {
  out.info.unfiltered_size = checked_u32(size, "section");
  out.info.checksum = xxh3_64(data, size);
  if (pipeline.empty()) {  // stored = unfiltered: no copy, one hash
    out.stored = data;
    out.info.filter_mask = 0;
    out.info.stored_checksum = std::uint32_t(out.info.checksum);
    out.info.stored_size = out.info.unfiltered_size;
    return;
  }
  const ByteView filtered = apply_pipeline_to(pipeline, data, size, element_size, &out.info.filter_mask,
                                              section_scratch(section, size, out));
  out.stored = filtered.data;
  out.info.stored_checksum = filtered.data == data ? std::uint32_t(out.info.checksum)
                                                   : std::uint32_t(xxh3_64(filtered.data, filtered.size));
  out.info.stored_size = checked_u32(filtered.size, "filtered section");
}

// Writes the version 2 header of `header` (whose `size` it ignores) and returns its size.
std::size_t write_header(const ChunkHeader& header, const ChunkLayout& layout, std::uint8_t* out) {
  std::uint8_t* p = out + 2;
  std::uint8_t flags = header.padding ? kFlagPadding : 0;
  for (std::size_t s = 0; s < 2; ++s) {
    const SectionInfo& info = header.sections[s];
    const bool filtered = info.filter_mask != all_skipped(pipeline_of(s, layout));
    if (filtered) flags |= kFlagFiltered[s];
    put_varint(p, info.stored_size);
    if (filtered) {
      put_varint(p, info.filter_mask);
      put_varint(p, info.unfiltered_size);
    }
    put_u32(p, info.stored_checksum);
    p += 4;
    if (filtered) {
      put_u32(p, std::uint32_t(info.checksum));
      p += 4;
    }
  }
  if (header.padding) put_varint(p, header.padding);
  out[0] = ChunkHeader::kVersion;
  out[1] = flags;
  put_u32(p, std::uint32_t(xxh3_64(out, std::size_t(p - out))));
  return std::size_t(p + 4 - out);
}

}  // namespace

namespace {

Bytes encode_sections(const Bytes& selection, const Bytes& values, const ChunkLayout& layout) {
  PreparedSection sections[2];
  prepare_section(0, selection.data(), selection.size(), layout.selection_pipeline, 1, sections[0]);
  prepare_section(1, values.data(), values.size(), layout.values_pipeline, layout.element_size, sections[1]);
  ChunkHeader header;
  header.sections = {sections[0].info, sections[1].info};
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
  prepare_section(0, selection.data(), selection.size(), layout.selection_pipeline, 1, sections[0]);
  prepare_section(1, buffer + values_offset, values_size, layout.values_pipeline, layout.element_size, sections[1]);
  ChunkHeader header;
  header.sections = {sections[0].info, sections[1].info};
  std::uint8_t head[ChunkHeader::kMaxSize];
  const std::size_t head_size = write_header(header, layout, head);
  const std::size_t front = head_size + sections[0].info.stored_size;
  if (sections[1].stored != buffer + values_offset || front > values_offset) {
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

// Reads the header fields of version 2 with bounds checks; throws corrupt_data.
class HeaderReader {
 public:
  HeaderReader(const std::uint8_t* data, std::size_t size) : p_(data), start_(data), end_(data + size) {}
  std::uint32_t varint() {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
      need(1);
      const std::uint8_t byte = *p_++;
      v |= std::uint64_t(byte & 0x7F) << shift;
      if (!(byte & 0x80)) {
        H5SPARSE_FAIL_IF(v > 0xFFFFFFFFu, ErrorCode::corrupt_data, "structured chunk header: varint above 32 bits");
        return std::uint32_t(v);
      }
    }
    throw Error(ErrorCode::corrupt_data, "structured chunk header: varint longer than 5 bytes");
  }
  std::uint32_t u32() {
    need(4);
    const std::uint32_t v = get_u32(p_);
    p_ += 4;
    return v;
  }
  std::size_t offset() const { return std::size_t(p_ - start_); }

 private:
  void need(std::size_t n) {
    H5SPARSE_FAIL_IF(std::size_t(end_ - p_) < n, ErrorCode::corrupt_data,
                     "structured chunk of " + std::to_string(end_ - start_) + " bytes is shorter than its header");
  }
  const std::uint8_t* p_;
  const std::uint8_t* start_;
  const std::uint8_t* end_;
};

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
  H5SPARSE_FAIL_IF(size < 2, ErrorCode::corrupt_data, "structured chunk of 1 byte");
  const std::uint8_t flags = data[1];
  HeaderReader fields(data + 2, size - 2);
  ChunkHeader header{};
  header.version = 2;
  for (std::size_t s = 0; s < 2; ++s) {
    SectionInfo& info = header.sections[s];
    const bool filtered = flags & kFlagFiltered[s];
    info.stored_size = fields.varint();
    info.filter_mask = filtered ? fields.varint() : all_skipped(pipeline_of(s, layout));
    info.unfiltered_size = filtered ? fields.varint() : info.stored_size;
    info.stored_checksum = fields.u32();
    info.checksum = filtered ? fields.u32() : info.stored_checksum;
  }
  if (flags & kFlagPadding) header.padding = fields.varint();
  header.size = 2 + fields.offset();
  H5SPARSE_FAIL_IF(std::uint32_t(xxh3_64(data, header.size)) != fields.u32(), ErrorCode::corrupt_data,
                   "structured chunk header checksum mismatch");
  header.size += 4;
  // Checked only now, under the checksum: a flipped flag is a checksum mismatch above.
  H5SPARSE_FAIL_IF(flags & ~(kFlagFiltered[0] | kFlagFiltered[1] | kFlagPadding), ErrorCode::corrupt_data,
                   "structured chunk header: unknown flags " + std::to_string(flags));
  H5SPARSE_FAIL_IF((flags & kFlagPadding) && header.padding == 0, ErrorCode::corrupt_data,
                   "structured chunk header: padding flag with no padding");
  for (std::size_t s = 0; s < 2; ++s) {
    if (!(flags & kFlagFiltered[s])) continue;
    const SectionPipeline& pipeline = pipeline_of(s, layout);
    const std::uint32_t mask = header.sections[s].filter_mask;
    H5SPARSE_FAIL_IF(mask == all_skipped(pipeline) || (pipeline.size() < 32 && (mask >> pipeline.size()) != 0),
                     ErrorCode::corrupt_data,
                     std::string(kSectionNames[s]) + ": filter mask " + std::to_string(mask) +
                         " does not name a filter of its " + std::to_string(pipeline.size()) + "-filter pipeline");
  }
  return header;
}

}  // namespace

ChunkHeader read_chunk_header(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout) {
  H5SPARSE_FAIL_IF(size == 0, ErrorCode::corrupt_data, "structured chunk of 0 bytes");
  ChunkHeader header;
  if (data[0] == kMagic[0]) {
    header = read_v1_header(data, size);
  } else {
    H5SPARSE_FAIL_IF(data[0] != ChunkHeader::kVersion, ErrorCode::unsupported,
                     "structured chunk format version " + std::to_string(data[0]) + " is unknown to this reader (1 and 2)");
    header = read_v2_header(data, size, layout);
  }
  const std::uint64_t total =
      std::uint64_t(header.size) + header.padding + header.sections[0].stored_size + header.sections[1].stored_size;
  H5SPARSE_FAIL_IF(total != size, ErrorCode::corrupt_data,
          "structured chunk sections add up to " + std::to_string(total) + " bytes, stored chunk has " +
              std::to_string(size));
  H5SPARSE_FAIL_IF(std::any_of(data + size - header.padding, data + size, [](std::uint8_t b) { return b != 0; }),
          ErrorCode::corrupt_data, "structured chunk padding is not zero");
  return header;
}

ByteView unfilter_section_to(std::size_t s, const std::uint8_t* stored, const SectionInfo& info,
                             const ChunkLayout& layout, std::array<Bytes, 2>& scratch) {
  const SectionPipeline& pipeline = pipeline_of(s, layout);
  if (pipeline.empty()) {  // stored bytes are the section
    if (info.filter_mask != 0 || info.stored_size != info.unfiltered_size)
      throw Error(ErrorCode::corrupt_data, std::string(kSectionNames[s]) +
                                               ": no section pipeline, yet filter mask or sizes say filtered");
    return {stored, info.stored_size};
  }
  try {
    return reverse_pipeline_to(pipeline, {stored, info.stored_size}, info.filter_mask,
                               s == 0 ? 1 : layout.element_size, info.unfiltered_size, scratch);
  } catch (const Error& e) {
    throw Error(ErrorCode::corrupt_data, std::string(kSectionNames[s]) + ": " + e.what());
  }
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
  for (std::size_t s = 0; s < 2; ++s) {
    const SectionInfo& info = header.sections[s];
    const std::uint64_t stored_hash = xxh3_64(p, info.stored_size);
    // Catches any flipped stored byte, also one a codec would silently decode the same.
    if (std::uint32_t(stored_hash) != info.stored_checksum)
      throw Error(ErrorCode::corrupt_data, std::string(kSectionNames[s]) + " stored-bytes checksum mismatch");
    const bool unfiltered = (s == 0 ? layout.selection_pipeline : layout.values_pipeline).empty();
    if (unfiltered) {  // one hash serves both checksums; the stored bytes are the section
      if (info.filter_mask != 0 || info.stored_size != info.unfiltered_size)
        throw Error(ErrorCode::corrupt_data, std::string(kSectionNames[s]) +
                                                 ": no section pipeline, yet filter mask or sizes say filtered");
      if (!unfiltered_checksum_matches(header, info, stored_hash))
        throw Error(ErrorCode::corrupt_data, std::string(kSectionNames[s]) + " checksum mismatch");
      out.bytes[s] = p;
    } else {
      std::array<Bytes, 2> scratch;
      const ByteView section =
          unfilter_section_to(s, p, info, layout, s == 1 && values_scratch ? *values_scratch : scratch);
      if (!unfiltered_checksum_matches(header, info, xxh3_64(section.data, section.size)))
        throw Error(ErrorCode::corrupt_data, std::string(kSectionNames[s]) + " checksum mismatch");
      if (s == 0 || !values_scratch) out.owned[s] = detach_result(section, scratch);
      out.bytes[s] = out.owned[s].empty() ? section.data : out.owned[s].data();
    }
    p += info.stored_size;
  }
  if (header.version == 1 && header.sections[0].unfiltered_size > 0 &&
      out.bytes[0][0] == std::uint8_t(SelectionEncoding::rice_offsets))
    throw Error(ErrorCode::corrupt_data,
                std::string(kSectionNames[0]) + ": encoding tag 6 (rice offsets) in a format version 1 chunk");
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
