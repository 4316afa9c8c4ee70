// Variable-length structured chunks (format version 3) and their elements in memory
// (var_chunk.hpp). Sections go through section_io.hpp, as the fixed-size chunks' do.
#include "h5sparse/var_chunk.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "h5sparse/error.hpp"
#include "h5sparse/selection_codec.hpp"
#include "h5sparse/varint.hpp"
#include "offset_merge.hpp"
#include "section_io.hpp"

namespace h5sparse {
namespace {

constexpr std::size_t kSections = 4;
constexpr const char* kNames[kSections] = {"section 0 (selection)", "section 1 (values)", "section 2 (lengths)",
                                           "section 3 (data)"};

std::array<detail::SectionKind, kSections> kinds_of(const ChunkLayout& layout) {
  const VarType& t = layout.var;
  return {detail::SectionKind{&layout.selection_pipeline, 1, kNames[0]},
          detail::SectionKind{&layout.values_pipeline, std::max<std::size_t>(t.fixed_size, 1), kNames[1]},
          detail::SectionKind{&layout.lengths_pipeline, 1, kNames[2]},
          detail::SectionKind{&layout.data_pipeline, t.data_element_size(), kNames[3]}};
}

void require_var_layout(const ChunkLayout& layout) {
  H5SPARSE_FAIL_IF(!layout.is_var(), ErrorCode::invalid_argument, "the layout has no variable-length members");
  for (std::size_t base : layout.var.slot_base_sizes)
    H5SPARSE_FAIL_IF(base == 0 || base > 0xFFFFFFFFu, ErrorCode::invalid_argument,
                     "a variable-length member's base size must be 1 to 2^32-1 bytes");
}

void check_offsets(const std::vector<std::uint32_t>& offsets, std::uint64_t element_count) {
  for (std::size_t i = 0; i < offsets.size(); ++i)
    H5SPARSE_FAIL_IF(offsets[i] >= element_count || (i > 0 && offsets[i] <= offsets[i - 1]),
                     ErrorCode::invalid_argument, "chunk element offsets must ascend inside the chunk");
}

// --- encoding -----------------------------------------------------------------------------

// Section 2: slot by slot, each element's length + 1 in base elements (0: NULL), as varints.
Bytes lengths_section(const VarValues& v, std::size_t count, const VarType& type) {
  Bytes out;
  out.reserve(count * type.slots());
  std::uint8_t buf[10];
  for (std::size_t m = 0; m < type.slots(); ++m) {
    for (std::size_t e = 0; e < count; ++e) {
      const std::size_t k = e * type.slots() + m;
      const std::uint64_t length = (v.ends[k] - v.begin(k)) / type.slot_base_sizes[m];
      H5SPARSE_FAIL_IF(length >= 0xFFFFFFFFu, ErrorCode::unsupported,
                       "a variable-length value of 2^32-1 or more base elements");
      out.insert(out.end(), buf, write_varint(buf, v.null[k] ? 0 : length + 1));
    }
  }
  return out;
}

// Section 3: slot by slot, the payloads in element order.
Bytes data_section(const VarValues& v, std::size_t count, const VarType& type) {
  Bytes out;
  out.reserve(v.data.size());
  for (std::size_t m = 0; m < type.slots(); ++m) {
    for (std::size_t e = 0; e < count; ++e) {
      const std::size_t k = e * type.slots() + m;
      out.insert(out.end(), v.data.begin() + std::ptrdiff_t(v.begin(k)), v.data.begin() + std::ptrdiff_t(v.ends[k]));
    }
  }
  return out;
}

Bytes assemble(const detail::PreparedSection (&sections)[kSections], const ChunkLayout& layout,
               std::uint32_t padding) {
  SectionInfo infos[kSections];
  std::uint64_t stored = 0;
  for (std::size_t s = 0; s < kSections; ++s) {
    infos[s] = sections[s].info;
    stored += infos[s].stored_size;
  }
  // The chunk's size class first, then the caller's extra padding (section_io.hpp).
  std::uint8_t head[detail::compact_header_bound(kSections)];
  const auto kinds = kinds_of(layout);
  const std::size_t bare = detail::write_compact_header(kVarChunkVersion, infos, kinds.data(), kSections, 0, head);
  padding += detail::size_class_padding(infos, kinds.data(), kSections, bare + stored);
  const std::size_t head_size =
      detail::write_compact_header(kVarChunkVersion, infos, kinds.data(), kSections, padding, head);
  stored += padding;
  H5SPARSE_FAIL_IF(head_size + stored > kMaxChunkBytes, ErrorCode::unsupported,
                   "a structured chunk of " + std::to_string(head_size + stored) +
                       " bytes exceeds HDF5's 4 GiB chunk limit");
  Bytes out;
  out.reserve(head_size + std::size_t(stored));
  out.insert(out.end(), head, head + head_size);
  for (const detail::PreparedSection& s : sections)
    if (s.info.stored_size) out.insert(out.end(), s.stored, s.stored + s.info.stored_size);
  out.resize(out.size() + padding, 0);
  return out;
}

// --- decoding -----------------------------------------------------------------------------

void check_version(const std::uint8_t* data, std::size_t size) {
  H5SPARSE_FAIL_IF(size == 0, ErrorCode::corrupt_data, "structured chunk of 0 bytes");
  H5SPARSE_FAIL_IF(data[0] == 2 || data[0] == 'H', ErrorCode::corrupt_data,
                   "a fixed-size structured chunk (format version 1 or 2) in a variable-length dataset");
  H5SPARSE_FAIL_IF(data[0] != kVarChunkVersion, ErrorCode::unsupported,
                   "structured chunk format version " + std::to_string(data[0]) + " is unknown to this reader (1-3)");
}

// The four sections of a stored chunk, verified and unfiltered.
struct VarSections {
  std::array<ByteView, kSections> bytes{ByteView(nullptr, 0), ByteView(nullptr, 0), ByteView(nullptr, 0),
                                        ByteView(nullptr, 0)};
  std::array<std::array<Bytes, 2>, kSections> scratch;
};

void unfilter_all(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout, VarSections& out) {
  const VarChunkHeader header = read_var_chunk_header(data, size, layout);
  const auto kinds = kinds_of(layout);
  const std::uint8_t* p = data + header.size;
  for (std::size_t s = 0; s < kSections; ++s) {
    out.bytes[s] = detail::unfilter_verified(p, header.sections[s], kinds[s], kVarChunkVersion, out.scratch[s]);
    p += header.sections[s].stored_size;
  }
}

std::vector<std::uint32_t> decode_offsets(ByteView section, const ChunkLayout& layout) {
  std::vector<std::uint32_t> offsets;
  try {
    decode_selection_offsets(section.data, section.size, layout.dims, offsets);
  } catch (const Error& e) {
    throw Error(ErrorCode::corrupt_data, std::string(kNames[0]) + ": " + e.what());
  }
  return offsets;
}

// Reads section 2 into `v.ends` (each slot's byte length, element-major) and `v.null`;
// returns each slot's total payload bytes, which must add up to the data section's size.
std::vector<std::uint64_t> read_lengths(ByteView lengths, std::uint64_t data_size, std::size_t count,
                                        const VarType& type, VarValues& v) {
  const std::size_t slots = type.slots();
  // Every length takes a byte at least: a short section cannot make us allocate much.
  H5SPARSE_FAIL_IF(lengths.size < std::uint64_t(count) * slots, ErrorCode::corrupt_data,
                   std::string(kNames[2]) + " holds " + std::to_string(lengths.size) + " bytes for " +
                       std::to_string(count * slots) + " lengths");
  v.ends.assign(count * slots, 0);
  v.null.assign(count * slots, 0);
  std::vector<std::uint64_t> totals(slots, 0);
  std::uint64_t used = 0;
  const std::uint8_t* p = lengths.data;
  const std::uint8_t* end = lengths.data + lengths.size;
  for (std::size_t m = 0; m < slots; ++m) {
    for (std::size_t e = 0; e < count; ++e) {
      const std::uint32_t word = read_varint32(p, end, kNames[2]);
      const std::uint64_t bytes = word == 0 ? 0 : std::uint64_t(word - 1) * type.slot_base_sizes[m];
      H5SPARSE_FAIL_IF(bytes > data_size - used, ErrorCode::corrupt_data,
                       std::string(kNames[2]) + ": the lengths exceed the " + std::to_string(data_size) +
                           " bytes of section 3 (data)");
      used += bytes;
      totals[m] += bytes;
      v.ends[e * slots + m] = bytes;
      v.null[e * slots + m] = word == 0;
    }
  }
  H5SPARSE_FAIL_IF(p != end, ErrorCode::corrupt_data,
                   std::string(kNames[2]) + " has " + std::to_string(end - p) + " bytes after its last length");
  H5SPARSE_FAIL_IF(used != data_size, ErrorCode::corrupt_data,
                   std::string(kNames[2]) + ": the lengths add up to " + std::to_string(used) + " bytes, section 3 (data) holds " +
                       std::to_string(data_size));
  return totals;
}

// Reorders the data section (slot by slot) into element order, turning the byte lengths in
// `v.ends` into ends.
void gather_payloads(ByteView data, const std::vector<std::uint64_t>& totals, const VarType& type, VarValues& v) {
  const std::size_t slots = type.slots();
  std::vector<std::uint64_t> cursor(slots, 0);
  for (std::size_t m = 1; m < slots; ++m) cursor[m] = cursor[m - 1] + totals[m - 1];
  v.data.resize(data.size);
  std::uint64_t at = 0;
  for (std::size_t k = 0; k < v.ends.size(); ++k) {
    const std::size_t m = k % slots;
    const std::uint64_t bytes = v.ends[k];
    if (bytes) std::memcpy(v.data.data() + at, data.data + cursor[m], std::size_t(bytes));
    cursor[m] += bytes;
    at += bytes;
    v.ends[k] = at;
  }
}

// Removes the elements `erased(offset)` is true for, moving the kept ones forward in place.
template <typename Erased>
std::size_t compact(ChunkVarElements& chunk, const VarType& type, Erased&& erased) {
  VarValues& v = chunk.values;
  const std::size_t slots = type.slots(), fs = type.fixed_size, count = chunk.offsets.size();
  std::size_t keep = 0;
  std::uint64_t read_at = 0, write_at = 0;  // payload bytes before the current element, before and after
  for (std::size_t e = 0; e < count; ++e) {
    const std::uint64_t element_end = v.ends[e * slots + slots - 1];
    if (erased(chunk.offsets[e])) {
      read_at = element_end;
      continue;
    }
    chunk.offsets[keep] = chunk.offsets[e];
    if (fs && keep != e) std::memmove(&v.fixed[keep * fs], &v.fixed[e * fs], fs);
    if (write_at != read_at)
      std::memmove(v.data.data() + write_at, v.data.data() + read_at, std::size_t(element_end - read_at));
    for (std::size_t m = 0; m < slots; ++m) {
      v.ends[keep * slots + m] = v.ends[e * slots + m] - read_at + write_at;
      v.null[keep * slots + m] = v.null[e * slots + m];
    }
    write_at += element_end - read_at;
    read_at = element_end;
    ++keep;
  }
  const std::size_t removed = count - keep;
  chunk.offsets.resize(keep);
  v.fixed.resize(keep * fs);
  v.ends.resize(keep * slots);
  v.null.resize(keep * slots);
  v.data.resize(std::size_t(write_at));
  return removed;
}

}  // namespace

std::size_t VarType::data_element_size() const {
  if (slot_base_sizes.empty()) return 1;
  const bool shared = std::all_of(slot_base_sizes.begin(), slot_base_sizes.end(),
                                  [&](std::size_t b) { return b == slot_base_sizes[0]; });
  return shared ? slot_base_sizes[0] : 1;
}

VarPayload VarValues::payload(std::size_t k) const {
  return VarPayload{data.data() + begin(k), std::size_t(ends[k] - begin(k)), null[k] != 0};
}

void VarValues::append(const VarType& type, const std::uint8_t* fixed_part, const VarPayload* slots) {
  fixed.insert(fixed.end(), fixed_part, fixed_part + type.fixed_size);
  for (std::size_t m = 0; m < type.slots(); ++m) {
    H5SPARSE_FAIL_IF(slots[m].null && slots[m].size, ErrorCode::invalid_argument, "a NULL value with a payload");
    if (slots[m].size) data.insert(data.end(), slots[m].data, slots[m].data + slots[m].size);
    ends.push_back(data.size());
    null.push_back(slots[m].null);
  }
}

void VarValues::append_element(const VarValues& from, std::size_t e, const VarType& type) {
  append_elements(from, e, 1, type);
}

void VarValues::append_elements(const VarValues& from, std::size_t first, std::size_t count, const VarType& type) {
  if (count == 0) return;
  const std::size_t slots = type.slots(), fs = type.fixed_size;
  const std::uint8_t* f = from.fixed.data() + first * fs;
  fixed.insert(fixed.end(), f, f + count * fs);
  const std::uint64_t begin_at = from.begin(first * slots), end_at = from.ends[(first + count) * slots - 1];
  const std::uint64_t shift = data.size() - begin_at;
  data.insert(data.end(), from.data.begin() + std::ptrdiff_t(begin_at), from.data.begin() + std::ptrdiff_t(end_at));
  const std::size_t slot = first * slots, n = count * slots;
  for (std::size_t k = 0; k < n; ++k) ends.push_back(from.ends[slot + k] + shift);
  null.insert(null.end(), from.null.begin() + std::ptrdiff_t(slot), from.null.begin() + std::ptrdiff_t(slot + n));
}

void VarValues::append_values(const VarValues& from) {
  const std::uint64_t shift = data.size();
  fixed.insert(fixed.end(), from.fixed.begin(), from.fixed.end());
  data.insert(data.end(), from.data.begin(), from.data.end());
  null.insert(null.end(), from.null.begin(), from.null.end());
  for (const std::uint64_t end : from.ends) ends.push_back(end + shift);
}

void check_var_values(const VarValues& v, std::size_t count, const VarType& type) {
  const std::size_t slots = type.slots();
  H5SPARSE_FAIL_IF(v.fixed.size() != count * type.fixed_size || v.ends.size() != count * slots ||
                       v.null.size() != count * slots,
                   ErrorCode::invalid_argument, "variable-length values do not hold their elements' parts");
  for (std::size_t k = 0; k < v.ends.size(); ++k) {
    const std::uint64_t begin = v.begin(k);
    H5SPARSE_FAIL_IF(v.ends[k] < begin || v.ends[k] > v.data.size(), ErrorCode::invalid_argument,
                     "variable-length values: payload ends out of order");
    H5SPARSE_FAIL_IF(v.null[k] && v.ends[k] != begin, ErrorCode::invalid_argument, "a NULL value with a payload");
    H5SPARSE_FAIL_IF((v.ends[k] - begin) % type.slot_base_sizes[k % slots] != 0, ErrorCode::invalid_argument,
                     "a variable-length value that is not a whole number of base elements");
  }
  H5SPARSE_FAIL_IF((v.ends.empty() ? 0 : v.ends.back()) != v.data.size(), ErrorCode::invalid_argument,
                   "variable-length values: data past the last payload");
}

void check_var_section_sizes(const std::array<std::uint64_t, 4>& sizes) {
  for (std::size_t s = 0; s < kSections; ++s)
    H5SPARSE_FAIL_IF(sizes[s] > kMaxChunkBytes, ErrorCode::unsupported,
                     std::string(kNames[s]) + " of " + std::to_string(sizes[s]) +
                         " bytes exceeds the 4 GiB a structured chunk can hold");
}

Bytes encode_var_chunk(const ChunkVarElements& chunk, const ChunkLayout& layout, std::uint32_t padding) {
  require_var_layout(layout);
  const VarType& type = layout.var;
  const std::size_t count = chunk.offsets.size();
  check_offsets(chunk.offsets, layout.element_count());
  check_var_values(chunk.values, count, type);
  const Bytes selection = encode_selection(chunk.offsets.data(), count, layout.dims);
  const Bytes lengths = lengths_section(chunk.values, count, type);
  check_var_section_sizes({selection.size(), chunk.values.fixed.size(), lengths.size(), chunk.values.data.size()});
  // One slot: the payloads are already in section 3's order.
  const Bytes gathered = type.slots() == 1 ? Bytes() : data_section(chunk.values, count, type);
  const Bytes& data = type.slots() == 1 ? chunk.values.data : gathered;
  const auto kinds = kinds_of(layout);
  detail::PreparedSection sections[kSections];
  const ByteView parts[kSections] = {selection, chunk.values.fixed, lengths, data};
  for (std::size_t s = 0; s < kSections; ++s) detail::prepare_section(s, parts[s].data, parts[s].size, kinds[s], sections[s]);
  return assemble(sections, layout, padding);
}

VarChunkHeader read_var_chunk_header(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout) {
  require_var_layout(layout);
  check_version(data, size);
  VarChunkHeader header;
  const detail::CompactHeader compact =
      detail::read_compact_header(data, size, header.sections.data(), kinds_of(layout).data(), kSections);
  header.size = compact.size;
  header.padding = compact.padding;
  return header;
}

ChunkVarElements decode_var_chunk(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout) {
  require_var_layout(layout);
  const VarType& type = layout.var;
  VarSections sections;
  unfilter_all(data, size, layout, sections);
  ChunkVarElements chunk;
  chunk.offsets = decode_offsets(sections.bytes[0], layout);
  const std::size_t count = chunk.offsets.size();
  H5SPARSE_FAIL_IF(sections.bytes[1].size != std::uint64_t(count) * type.fixed_size, ErrorCode::corrupt_data,
                   std::string(kNames[1]) + " holds " + std::to_string(sections.bytes[1].size) + " bytes for " +
                       std::to_string(count) + " defined elements");
  chunk.values.fixed.assign(sections.bytes[1].data, sections.bytes[1].data + sections.bytes[1].size);
  const std::vector<std::uint64_t> totals =
      read_lengths(sections.bytes[2], sections.bytes[3].size, count, type, chunk.values);
  gather_payloads(sections.bytes[3], totals, type, chunk.values);
  return chunk;
}

ChunkVarElements merge_var_elements(const ChunkVarElements& base, const ChunkVarElements& written,
                                    const VarType& type) {
  ChunkVarElements out;
  out.offsets.reserve(base.offsets.size() + written.offsets.size());
  detail::merge_offsets(base.offsets, written.offsets, [&](bool from_written, std::size_t at) {
    const ChunkVarElements& from = from_written ? written : base;
    out.offsets.push_back(from.offsets[at]);
    out.values.append_element(from.values, at, type);
  });
  return out;
}

std::size_t erase_var_elements(ChunkVarElements& chunk, const std::vector<std::uint32_t>& offsets,
                               const VarType& type) {
  std::size_t j = 0;
  return compact(chunk, type, [&](std::uint32_t offset) {
    while (j < offsets.size() && offsets[j] < offset) ++j;
    return j < offsets.size() && offsets[j] == offset;
  });
}

std::size_t erase_var_elements(ChunkVarElements& chunk, const ChunkSelection& erased, const VarType& type) {
  return compact(chunk, type, [&](std::uint32_t offset) { return offset < erased.element_count() && erased.test(offset); });
}

}  // namespace h5sparse
