// Direct structured-chunk I/O: split a stored chunk into sections, assemble one from sections.
#include "h5sparse/direct_chunk.hpp"


#include <string>

#include "h5sparse/checksum.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

constexpr const char* kNames[2] = {"section 0 (selection)", "section 1 (values)"};

void check_section(std::size_t s, const SectionBytes& b, const SectionPipeline& pipeline) {
  const std::string name = kNames[s];
  H5SPARSE_FAIL_IF(b.stored_size > 0xFFFFFFFFu || b.unfiltered_size > 0xFFFFFFFFu, ErrorCode::invalid_argument,
                   name + " exceeds 4 GiB, the format's limit");
  H5SPARSE_FAIL_IF(b.data == nullptr && b.stored_size > 0, ErrorCode::invalid_argument, name + ": no buffer given");
  H5SPARSE_FAIL_IF(pipeline.size() < 32 && (b.filter_mask >> pipeline.size()) != 0, ErrorCode::invalid_argument,
                   name + ": filter mask " + std::to_string(b.filter_mask) + " names filters beyond the section's " +
                       std::to_string(pipeline.size()) + "-filter pipeline");
  if (b.unfiltered_size == 0) {
    // What a writer stores for an empty section: nothing, every filter marked skipped.
    const std::uint32_t all = pipeline.size() >= 32 ? 0xFFFFFFFFu : (1u << pipeline.size()) - 1;
    H5SPARSE_FAIL_IF(b.stored_size != 0 || b.filter_mask != all, ErrorCode::invalid_argument,
                     name + " is empty: its stored size must be 0 and its filter mask mark all " +
                         std::to_string(pipeline.size()) + " filters skipped");
  }
}

}  // namespace

std::array<SectionBytes, 2> split_chunk(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout) {
  const ChunkHeader header = read_chunk_header(data, size, layout);
  std::array<SectionBytes, 2> out;
  const std::uint8_t* p = data + header.size;
  for (std::size_t s = 0; s < 2; ++s) {
    const SectionInfo& info = header.sections[s];
    H5SPARSE_FAIL_IF(std::uint32_t(xxh3_64(p, info.stored_size)) != info.stored_checksum,
                     ErrorCode::corrupt_data, std::string(kNames[s]) + " stored-bytes checksum mismatch");
    out[s] = SectionBytes{p, info.stored_size, info.unfiltered_size, info.filter_mask};
    p += info.stored_size;
  }
  return out;
}

Bytes assemble_chunk(const std::array<SectionBytes, 2>& sections, const ChunkLayout& layout) {
  ChunkHeader header{};
  std::array<Bytes, 2> unfiltered;
  try {
    for (std::size_t s = 0; s < 2; ++s) {
      const SectionBytes& b = sections[s];
      check_section(s, b, s == 0 ? layout.selection_pipeline : layout.values_pipeline);
      SectionInfo& info = header.sections[s];
      info.stored_size = std::uint32_t(b.stored_size);
      info.unfiltered_size = std::uint32_t(b.unfiltered_size);
      info.filter_mask = b.filter_mask;
      info.stored_checksum = std::uint32_t(xxh3_64(b.data, b.stored_size));
      unfiltered[s] = unfilter_section(s, b.data, info, layout);
      info.checksum = xxh3_64(unfiltered[s].data(), unfiltered[s].size());
    }
    chunk_from_sections(std::move(unfiltered[0]), std::move(unfiltered[1]), layout);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::out_of_memory) throw;
    throw Error(ErrorCode::invalid_argument, std::string("not a structured chunk this dataset can read: ") + e.what());
  }
  pad_to_size_class(header, layout);
  return serialize_chunk(header, {sections[0].data, sections[1].data}, layout);
}

}  // namespace h5sparse
