// What the structured-chunk formats with a compact header (version 2: two sections, version 3:
// four, docs/FORMAT.md) share: a section on its way to storage (pipeline and checksums), the
// header itself (varint sizes, 32-bit checksums, a flag per filtered section), and a stored
// section verified and unfiltered. structured_chunk.cpp and var_chunk.cpp are built on it, so
// the two formats cannot drift apart.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "h5sparse/codecs.hpp"
#include "h5sparse/section_pipeline.hpp"
#include "h5sparse/structured_chunk.hpp"

namespace h5sparse::detail {

/// What the header code needs to know of one section: its pipeline, the element size its
/// shuffle and Blosc typesize use, and its name for messages.
struct SectionKind {
  const SectionPipeline* pipeline;
  std::size_t element_size;
  const char* name;
};

/// The largest compact header of `sections` sections: version, flags, per section three
/// 5-byte varints and two checksums, padding varint, header checksum.
constexpr std::size_t compact_header_bound(std::size_t sections) { return 2 + sections * 23 + 5 + 4; }

/// The filter mask of a section no filter of `pipeline` ran on: every filter skipped.
std::uint32_t all_skipped(const SectionPipeline& pipeline);

/// `size` as a 32-bit section size, or Error(unsupported) saying `what` exceeds 4 GiB.
std::uint32_t checked_u32(std::size_t size, const char* what);

/// One section on its way to storage: its header fields, and where its stored bytes are (the
/// unfiltered bytes themselves, or a pipeline's output in scratch buffers).
struct PreparedSection {
  SectionInfo info{};
  const std::uint8_t* stored = nullptr;
  std::array<Bytes, 2> own;  // scratch of a section too large to keep per thread
};

/// Runs section `index`'s pipeline over `size` bytes and computes its header fields. The
/// result may live in per-thread buffers: valid until this thread prepares section `index`
/// of another chunk.
void prepare_section(std::size_t index, const std::uint8_t* data, std::size_t size, const SectionKind& kind,
                     PreparedSection& out);

/// Writes the compact header of `n` sections (format `version`) into `out` (room for
/// compact_header_bound(n)) and returns its size.
std::size_t write_compact_header(std::uint8_t version, const SectionInfo* infos, const SectionKind* kinds,
                                 std::size_t n, std::uint32_t padding, std::uint8_t* out);

/// The zero padding that makes a chunk of `size` bytes (its header written without padding
/// included) the size of its size class (docs/FORMAT.md, "Size classes"), so that a rewrite
/// whose compressed size moved a little keeps the size, and HDF5 keeps the chunk in place.
/// 0 when no section of `infos` is filtered: such a chunk's size follows from what it
/// defines alone, or when no class size lies between `size` and its next power of two.
/// Counts the padding's own varint in the header.
std::uint32_t size_class_padding(const SectionInfo* infos, const SectionKind* kinds, std::size_t n,
                                 std::uint64_t size);

/// Reads a compact header of `n` sections (its version byte is the caller's business) into
/// `infos`; checks bounds, flags, the header checksum, masks against the pipelines, and that
/// header, sections and zero padding make up exactly `size` bytes. Error(corrupt_data).
struct CompactHeader {
  std::size_t size = 0;  ///< header bytes
  std::uint32_t padding = 0;
};
CompactHeader read_compact_header(const std::uint8_t* data, std::size_t size, SectionInfo* infos,
                                  const SectionKind* kinds, std::size_t n);

/// Header, sections and padding must make up exactly `size` bytes, the padding zero
/// (Error(corrupt_data)).
void check_chunk_total(const std::uint8_t* data, std::size_t size, std::size_t header_size, std::uint32_t padding,
                       const SectionInfo* infos, std::size_t n);

/// Section bytes back through their pipeline (honouring the mask), exactly
/// `info.unfiltered_size` bytes: the stored bytes themselves for an empty pipeline, else the
/// front of one of `scratch`'s buffers. No checksums. Error(corrupt_data) naming the section
/// (Error(unsupported) for a codec this build lacks).
ByteView unfilter_stored(const std::uint8_t* stored, const SectionInfo& info, const SectionKind& kind,
                         std::array<Bytes, 2>& scratch);

/// unfilter_stored with both checksums verified (`version` 1 compares all 64 bits of the
/// unfiltered checksum, later versions the low 32).
ByteView unfilter_verified(const std::uint8_t* stored, const SectionInfo& info, const SectionKind& kind,
                           std::uint8_t version, std::array<Bytes, 2>& scratch);

}  // namespace h5sparse::detail
