// A structured chunk: section 0 (the encoded selection of defined elements) and section 1
// (their values, in chunk-local row-major order, in the file datatype), each through its own
// pipeline and checksum, behind a small self-checking header (docs/FORMAT.md).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "h5sparse/section_pipeline.hpp"
#include "h5sparse/selection_codec.hpp"

namespace h5sparse {

/// The format version of variable-length chunks (var_chunk.hpp): four sections.
constexpr std::uint8_t kVarChunkVersion = 3;

/// The parts of one element of a variable-length type (docs/FORMAT.md, "Variable-length
/// chunks"): its fixed-size members packed into `fixed_size` bytes, and one slot per
/// variable-length member, each a sequence of base elements of `base_size` bytes (1 for a
/// string). No slots: a fixed-size type.
struct VarType {
  std::size_t fixed_size = 0;
  std::vector<std::size_t> slot_base_sizes;

  std::size_t slots() const { return slot_base_sizes.size(); }
  /// The element size of the data section's shuffle: the slots' base size when they share
  /// one, else 1.
  std::size_t data_element_size() const;
  bool operator==(const VarType& o) const {
    return fixed_size == o.fixed_size && slot_base_sizes == o.slot_base_sizes;
  }
};

/// What every chunk of one sparse dataset shares.
struct ChunkLayout {
  std::vector<std::uint64_t> dims;  ///< chunk dimensions, row-major
  std::size_t element_size = 0;     ///< bytes per element of the file datatype (the carrier's, when `var` has slots)
  SectionPipeline selection_pipeline;
  SectionPipeline values_pipeline;  ///< of the fixed-size parts, when `var` has slots
  /// Variable-length datasets only: the element's parts and the pipelines of the lengths and
  /// data sections (var_chunk.hpp).
  VarType var;
  SectionPipeline lengths_pipeline;
  SectionPipeline data_pipeline;

  std::uint64_t element_count() const;
  bool is_var() const { return var.slots() > 0; }
};

/// The decoded content of one chunk.
struct StructuredChunk {
  ChunkSelection defined;
  Bytes values;  ///< defined_count() * element_size bytes

  static StructuredChunk empty(const ChunkLayout& layout);
};

/// The decoded content of one chunk as its defined elements' offsets (linear in the chunk,
/// ascending) and values: the form of coordinate I/O (engine/coordinates.hpp), whose chunks
/// hold few elements of many. Its size follows the elements, a bitmap's the chunk.
struct ChunkElements {
  std::vector<std::uint32_t> offsets;
  Bytes values;  ///< offsets.size() * element_size bytes
};

/// The RFC's "Filtered Structured Chunk Metadata" of one stored chunk.
struct SectionInfo {
  std::uint32_t stored_size;
  std::uint32_t unfiltered_size;
  std::uint32_t filter_mask;
  std::uint32_t stored_checksum;  ///< low 32 bits of XXH3-64 of the stored (filtered) bytes
  std::uint64_t checksum;         ///< XXH3-64 of the unfiltered bytes (version 2 keeps its low 32 bits)
};

/// A structured chunk's header. Writers write format version 2 (a compact header of varints
/// and 32-bit checksums); readers also read version 1 (a fixed 60-byte header).
struct ChunkHeader {
  static constexpr std::uint8_t kVersion = 2;  ///< the version writers write
  static constexpr std::size_t kMaxSize = 57;  ///< the largest version-2 header
  std::uint8_t version = kVersion;
  std::size_t size = 0;  ///< header bytes (as read; writers compute it)
  std::array<SectionInfo, 2> sections{};
  std::uint32_t padding = 0;  ///< zero bytes after section 1
};

/// Serializes a chunk: selection and values through their pipelines, checksums, header, and
/// zero padding up to its size class when a section is filtered (docs/FORMAT.md).
Bytes encode_chunk(const StructuredChunk& chunk, const ChunkLayout& layout);
/// The same bytes from the chunk's elements.
Bytes encode_chunk(const ChunkElements& chunk, const ChunkLayout& layout);

/// A stored chunk (filtered, verified by a decode) with new values for the same defined
/// elements: section 0 keeps its stored bytes, filter mask and checksums, so an update of
/// values alone does not encode the selection again; section 1 goes through its pipeline.
/// Written as version 2. Error(invalid_argument) when `values` is not the stored count.
Bytes replace_chunk_values(const std::uint8_t* stored, std::size_t size, const Bytes& values,
                           const ChunkLayout& layout);

/// Where encode_chunk_in_place expects the values: this many bytes into its buffer.
std::size_t values_offset_in_place(const ChunkLayout& layout);

/// encode_chunk for values already in place at buffer + values_offset_in_place(layout), in
/// row-major order of `defined`. With an unfiltered values section the chunk is assembled in
/// the buffer itself (header and section 0 written in front of the values: no copy of the
/// values); otherwise it is assembled in `spill`. Returns the encoded chunk.
ByteView encode_chunk_in_place(const ChunkSelection& defined, std::uint8_t* buffer, std::size_t values_size,
                               const ChunkLayout& layout, Bytes& spill);

/// When a serialized chunk is `size` bytes long, adds one byte of padding (docs/FORMAT.md);
/// the chunk is rewritten in format version 2 (a version-1 chunk changes size anyway).
/// HDF5 rewrites a chunk of unchanged size in place; only a chunk whose size changes moves,
/// and an SWMR writer never frees the copy it replaces, so the flushed copy survives
/// (docs/DESIGN.md, "SWMR and crash consistency").
void avoid_chunk_size(Bytes& chunk, std::size_t size, const ChunkLayout& layout);

/// Parses and validates the header only (version, fields, header checksum, sizes adding up
/// to `size`, filter masks naming filters of the layout's pipelines); throws
/// Error(corrupt_data) naming the first problem, Error(unsupported) for an unknown version.
/// A version-2 section no filter ran on gets the mask "every filter skipped".
ChunkHeader read_chunk_header(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout);

/// Fully decodes and verifies a chunk (header, both pipelines, both checksums, selection,
/// value count).
StructuredChunk decode_chunk(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout);

/// How many elements a chunk's selection says it holds, read from the stored bytes without
/// decoding them: only for an unfiltered selection of tag 0, 3 or 6 (else nothing). A hint for
/// choosing a decoding; the decode checks everything.
std::optional<std::uint64_t> stated_element_count(const std::uint8_t* data, std::size_t size,
                                                  const ChunkLayout& layout);

/// decode_chunk into the chunk's elements, with the same checks.
ChunkElements decode_chunk_elements(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout);

/// decode_chunk_elements of the elements inside `ranges` (ascending, disjoint offset ranges)
/// only: of the selection only what the ranges need where its encoding allows
/// (decode_selection_in), and only those elements' values copied.
ChunkElements decode_chunk_elements_in(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout,
                                       const std::vector<OffsetRange>& ranges);

/// A decoded chunk whose values may still lie in the stored bytes it was decoded from.
struct ChunkView {
  ChunkView() = default;
  ChunkView(ChunkView&&) = default;             // moving keeps `owned`'s buffer, so `values` stays valid
  ChunkView& operator=(ChunkView&&) = default;
  ChunkView(const ChunkView&) = delete;         // a copy's `values` would point into the original
  ChunkView& operator=(const ChunkView&) = delete;
  ChunkSelection defined;
  const std::uint8_t* values = nullptr;  ///< values_size bytes: into the stored chunk, or owned
  std::size_t values_size = 0;
  Bytes owned;  ///< the values, when the values pipeline produced them
};

/// decode_chunk with the same checks, without copying an unfiltered section: `values` then
/// points into `data`, which must outlive the view (reads scatter straight from the stored
/// bytes). With `values_scratch`, a filtered values section is decoded into those buffers
/// (reused from chunk to chunk: no allocation and zeroing per chunk), which must outlive the
/// view and not be reused meanwhile.
ChunkView decode_chunk_view(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout,
                            std::array<Bytes, 2>* values_scratch = nullptr);

/// Sets `header.padding` (its sections filled in) to bring the chunk to its size class: with a
/// filtered section, sizes go up to a multiple of 1/32 of their power of two (docs/FORMAT.md, "Size
/// classes"), so that a rewrite whose compressed size moved a little keeps its size and HDF5
/// keeps the chunk where it is. Every writer of chunks calls it.
void pad_to_size_class(ChunkHeader& header, const ChunkLayout& layout);

/// The stored chunk (format version 2) of `header` (sizes, masks, checksums and padding as
/// given) with the stored bytes of section 0 and 1; the header checksum is computed. A
/// section whose mask skips every filter of its pipeline is written as unfiltered.
Bytes serialize_chunk(const ChunkHeader& header, const std::array<const std::uint8_t*, 2>& stored,
                      const ChunkLayout& layout);
/// serialize_chunk into `out`, whose capacity is reused.
void serialize_chunk_into(const ChunkHeader& header, const std::array<const std::uint8_t*, 2>& stored,
                          const ChunkLayout& layout, Bytes& out);

/// Section `s` (0 or 1) back through its pipeline, honouring `info`'s filter mask: exactly
/// `info.unfiltered_size` bytes, or Error(corrupt_data) naming the section. No checksums.
Bytes unfilter_section(std::size_t s, const std::uint8_t* stored, const SectionInfo& info, const ChunkLayout& layout);
/// unfilter_section into reused buffers (reverse_pipeline_to): the stored bytes themselves
/// for an empty pipeline.
ByteView unfilter_section_to(std::size_t s, const std::uint8_t* stored, const SectionInfo& info,
                             const ChunkLayout& layout, std::array<Bytes, 2>& scratch);

/// The chunk two unfiltered sections describe: the selection must decode for the layout's
/// dimensions and the values hold one element per defined element (else corrupt_data).
StructuredChunk chunk_from_sections(Bytes selection, Bytes values, const ChunkLayout& layout);

/// Writes the dense chunk: defined elements from the chunk, the others `fill` (element_size
/// bytes; null means zeros). `dense` holds element_count() * element_size bytes.
void expand_to_dense(const StructuredChunk& chunk, const ChunkLayout& layout, const std::uint8_t* fill,
                     std::uint8_t* dense);

/// Turns a dense chunk into a structured one. When `undefined_value` is non-null, elements
/// equal to it (byte for byte) are left undefined; otherwise every element is defined.
StructuredChunk from_dense(const std::uint8_t* dense, const ChunkLayout& layout,
                           const std::uint8_t* undefined_value);

/// Defines `written` elements with `values` (written.defined_count() elements, row-major);
/// elements defined before keep their values unless written.
void merge_write(StructuredChunk& chunk, const ChunkSelection& written, const std::uint8_t* values,
                 std::size_t element_size);

/// Makes `erased` elements undefined.
void erase(StructuredChunk& chunk, const ChunkSelection& erased, std::size_t element_size);

}  // namespace h5sparse
