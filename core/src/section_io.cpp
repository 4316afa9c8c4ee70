// Sections of structured chunks with a compact header (versions 2 and 3): preparing them for
// storage, the header, and verifying and unfiltering them again (section_io.hpp).
#include "section_io.hpp"

#include <algorithm>
#include <string>

#include "h5sparse/checksum.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/kept_memory.hpp"
#include "h5sparse/varint.hpp"

namespace h5sparse::detail {
namespace {

void put_u32(std::uint8_t*& p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) *p++ = std::uint8_t(v >> (8 * i));
}

// Pipeline output buffers per thread and section, reused from chunk to chunk (a fresh output
// buffer per chunk cost a zeroing pass and page faults); a section above kKeptScratch bytes
// uses buffers of its own, so a thread never keeps more than that per section, and all
// threads together no more than the kept-memory budget (kept_memory.hpp).
constexpr std::size_t kKeptScratch = std::size_t(8) << 20;
constexpr std::size_t kMaxSections = 4;

struct SectionScratch final : Keeper {
  std::array<std::array<Bytes, 2>, kMaxSections> kept;
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

std::array<Bytes, 2>& section_scratch(std::size_t index, std::size_t size, PreparedSection& out) {
  thread_local SectionScratch scratch;
  if (size > kKeptScratch || index >= kMaxSections) return out.own;
  if (index == 0) scratch.settle();  // a chunk starts with section 0: the last chunk's are done with
  return scratch.kept[index];
}

// Reads the header fields with bounds checks; throws corrupt_data.
class HeaderReader {
 public:
  HeaderReader(const std::uint8_t* data, std::size_t size) : p_(data), start_(data), end_(data + size) {}
  std::uint32_t varint() { return read_varint32(p_, end_, "structured chunk header"); }
  std::uint32_t u32() {
    H5SPARSE_FAIL_IF(std::size_t(end_ - p_) < 4, ErrorCode::corrupt_data,
                     "structured chunk of " + std::to_string(end_ - start_ + 2) + " bytes is shorter than its header");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= std::uint32_t(p_[i]) << (8 * i);
    p_ += 4;
    return v;
  }
  std::size_t offset() const { return std::size_t(p_ - start_); }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* start_;
  const std::uint8_t* end_;
};

void check_masks(const SectionInfo* infos, const SectionKind* kinds, std::size_t n, std::uint8_t flags) {
  for (std::size_t s = 0; s < n; ++s) {
    if (!(flags & (1u << s))) continue;
    const SectionPipeline& pipeline = *kinds[s].pipeline;
    const std::uint32_t mask = infos[s].filter_mask;
    H5SPARSE_FAIL_IF(mask == all_skipped(pipeline) || (pipeline.size() < 32 && (mask >> pipeline.size()) != 0),
                     ErrorCode::corrupt_data,
                     std::string(kinds[s].name) + ": filter mask " + std::to_string(mask) +
                         " does not name a filter of its " + std::to_string(pipeline.size()) + "-filter pipeline");
  }
}

}  // namespace

void check_chunk_total(const std::uint8_t* data, std::size_t size, std::size_t header_size, std::uint32_t padding,
                       const SectionInfo* infos, std::size_t n) {
  std::uint64_t total = std::uint64_t(header_size) + padding;
  for (std::size_t s = 0; s < n; ++s) total += infos[s].stored_size;
  H5SPARSE_FAIL_IF(total != size, ErrorCode::corrupt_data,
                   "structured chunk sections add up to " + std::to_string(total) + " bytes, stored chunk has " +
                       std::to_string(size));
  H5SPARSE_FAIL_IF(std::any_of(data + size - padding, data + size, [](std::uint8_t b) { return b != 0; }),
                   ErrorCode::corrupt_data, "structured chunk padding is not zero");
}

std::uint32_t all_skipped(const SectionPipeline& pipeline) {
  return pipeline.size() >= 32 ? 0xFFFFFFFFu : (std::uint32_t(1) << pipeline.size()) - 1;
}

std::uint32_t checked_u32(std::size_t size, const char* what) {
  H5SPARSE_FAIL_IF(size > 0xFFFFFFFFu, ErrorCode::unsupported, std::string(what) + " exceeds 4 GiB");
  return std::uint32_t(size);
}

void prepare_section(std::size_t index, const std::uint8_t* data, std::size_t size, const SectionKind& kind,
                     PreparedSection& out) {
  out.info.unfiltered_size = checked_u32(size, kind.name);
  out.info.checksum = xxh3_64(data, size);
  if (kind.pipeline->empty()) {  // stored = unfiltered: no copy, one hash
    out.stored = data;
    out.info.filter_mask = 0;
    out.info.stored_checksum = std::uint32_t(out.info.checksum);
    out.info.stored_size = out.info.unfiltered_size;
    return;
  }
  const ByteView filtered = apply_pipeline_to(*kind.pipeline, data, size, kind.element_size, &out.info.filter_mask,
                                              section_scratch(index, size, out));
  out.stored = filtered.data;
  out.info.stored_checksum = filtered.data == data ? std::uint32_t(out.info.checksum)
                                                   : std::uint32_t(xxh3_64(filtered.data, filtered.size));
  out.info.stored_size = checked_u32(filtered.size, kind.name);
}

std::size_t write_compact_header(std::uint8_t version, const SectionInfo* infos, const SectionKind* kinds,
                                 std::size_t n, std::uint32_t padding, std::uint8_t* out) {
  std::uint8_t* p = out + 2;
  unsigned flags = padding ? 1u << n : 0;  // bit s: section s filtered; bit n: padding
  for (std::size_t s = 0; s < n; ++s) {
    const SectionInfo& info = infos[s];
    const bool filtered = info.filter_mask != all_skipped(*kinds[s].pipeline);
    if (filtered) flags |= 1u << s;
    p = write_varint(p, info.stored_size);
    if (filtered) {
      p = write_varint(p, info.filter_mask);
      p = write_varint(p, info.unfiltered_size);
    }
    put_u32(p, info.stored_checksum);
    if (filtered) put_u32(p, std::uint32_t(info.checksum));
  }
  if (padding) p = write_varint(p, padding);
  out[0] = version;
  out[1] = std::uint8_t(flags);
  put_u32(p, std::uint32_t(xxh3_64(out, std::size_t(p - out))));
  return std::size_t(p - out);
}

namespace {

int floor_log2(std::uint64_t size) {
  int k = 0;
  while ((size >> k) > 1) ++k;
  return k;
}

bool any_filtered(const SectionInfo* infos, const SectionKind* kinds, std::size_t n) {
  for (std::size_t s = 0; s < n; ++s)
    if (infos[s].filter_mask != all_skipped(*kinds[s].pipeline)) return true;
  return false;
}

}  // namespace

std::uint32_t size_class_padding(const SectionInfo* infos, const SectionKind* kinds, std::size_t n,
                                 std::uint64_t size) {
  if (size == 0 || !any_filtered(infos, kinds, n)) return 0;
  // Sizes in [2^k, 2^(k+1)) go up to a multiple of 2^(k-5), 32 classes a doubling: a chunk
  // gains about 1/64 of its size on average, at most two steps (1/16).
  const int k = floor_log2(size);
  const std::uint64_t step = k > 5 ? std::uint64_t(1) << (k - 5) : 1;
  // Padding p costs its varint too: the first class size reachable as size + varint + p. It
  // stays below 2^(k+1): HDF5 records a filtered chunk's size in as many bytes as the nominal
  // chunk size needs, and padding must not make a chunk it could record one it cannot.
  for (std::uint64_t target = (size + step - 1) / step * step; target < (std::uint64_t(2) << k); target += step) {
    const std::uint64_t gap = target - size;
    if (gap == 0) return 0;
    for (std::size_t len = 1; len <= 5 && len < gap; ++len)
      if (varint_size(gap - len) == len) return std::uint32_t(gap - len);
  }
  return 0;
}

CompactHeader read_compact_header(const std::uint8_t* data, std::size_t size, SectionInfo* infos,
                                  const SectionKind* kinds, std::size_t n) {
  H5SPARSE_FAIL_IF(size < 2, ErrorCode::corrupt_data, "structured chunk of 1 byte");
  const std::uint8_t flags = data[1];
  const unsigned padding_flag = 1u << n;
  HeaderReader fields(data + 2, size - 2);
  for (std::size_t s = 0; s < n; ++s) {
    SectionInfo& info = infos[s];
    const bool filtered = flags & (1u << s);
    info.stored_size = fields.varint();
    info.filter_mask = filtered ? fields.varint() : all_skipped(*kinds[s].pipeline);
    info.unfiltered_size = filtered ? fields.varint() : info.stored_size;
    info.stored_checksum = fields.u32();
    info.checksum = filtered ? fields.u32() : info.stored_checksum;
  }
  CompactHeader header;
  if (flags & padding_flag) header.padding = fields.varint();
  header.size = 2 + fields.offset();
  H5SPARSE_FAIL_IF(std::uint32_t(xxh3_64(data, header.size)) != fields.u32(), ErrorCode::corrupt_data,
                   "structured chunk header checksum mismatch");
  header.size += 4;
  // Checked only now, under the checksum: a flipped flag is a checksum mismatch above.
  H5SPARSE_FAIL_IF(flags & ~((padding_flag << 1) - 1), ErrorCode::corrupt_data,
                   "structured chunk header: unknown flags " + std::to_string(flags));
  H5SPARSE_FAIL_IF((flags & padding_flag) && header.padding == 0, ErrorCode::corrupt_data,
                   "structured chunk header: padding flag with no padding");
  check_masks(infos, kinds, n, flags);
  check_chunk_total(data, size, header.size, header.padding, infos, n);
  return header;
}

ByteView unfilter_stored(const std::uint8_t* stored, const SectionInfo& info, const SectionKind& kind,
                         std::array<Bytes, 2>& scratch) {
  if (kind.pipeline->empty()) {  // stored bytes are the section
    if (info.filter_mask != 0 || info.stored_size != info.unfiltered_size)
      throw Error(ErrorCode::corrupt_data,
                  std::string(kind.name) + ": no section pipeline, yet filter mask or sizes say filtered");
    return {stored, info.stored_size};
  }
  try {
    return reverse_pipeline_to(*kind.pipeline, {stored, info.stored_size}, info.filter_mask, kind.element_size,
                               info.unfiltered_size, scratch);
  } catch (const Error& e) {
    // A codec this build lacks stays unsupported; every other refusal means corrupt bytes.
    const ErrorCode code = e.code() == ErrorCode::unsupported ? e.code() : ErrorCode::corrupt_data;
    throw Error(code, std::string(kind.name) + ": " + e.what());
  }
}

ByteView unfilter_verified(const std::uint8_t* stored, const SectionInfo& info, const SectionKind& kind,
                           std::uint8_t version, std::array<Bytes, 2>& scratch) {
  const auto matches = [&](std::uint64_t hash) {
    return version == 1 ? hash == info.checksum : std::uint32_t(hash) == std::uint32_t(info.checksum);
  };
  const std::uint64_t stored_hash = xxh3_64(stored, info.stored_size);
  // Catches any flipped stored byte, also one a codec would silently decode the same.
  if (std::uint32_t(stored_hash) != info.stored_checksum)
    throw Error(ErrorCode::corrupt_data, std::string(kind.name) + " stored-bytes checksum mismatch");
  const ByteView section = unfilter_stored(stored, info, kind, scratch);
  // With an empty pipeline the stored bytes are the section: one hash serves both checksums.
  const std::uint64_t hash = section.data == stored ? stored_hash : xxh3_64(section.data, section.size);
  if (!matches(hash)) throw Error(ErrorCode::corrupt_data, std::string(kind.name) + " checksum mismatch");
  return section;
}

}  // namespace h5sparse::detail
