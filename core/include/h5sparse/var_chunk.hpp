// Variable-length values in structured chunks: format version 3 (docs/FORMAT.md,
// "Variable-length chunks"), four sections each with its own pipeline and checksums:
// 0 the selection, 1 the fixed-size part of each defined element, 2 the lengths of each
// variable-length member (NULL distinct from empty), 3 the payloads. In memory the engine
// holds such a chunk as ChunkVarElements, the variable-length counterpart of ChunkElements:
// offsets, and VarValues (payloads in one buffer with an end per slot), so merge, erase and
// coordinate I/O move values without an allocation per element. Converting to and from the
// C forms (hvl_t, char*) belongs to the connector.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "h5sparse/structured_chunk.hpp"

namespace h5sparse {

/// The most bytes a stored chunk may hold: HDF5 records chunk sizes in 32 bits.
constexpr std::uint64_t kMaxChunkBytes = 0xFFFFFFFFu;

/// One slot's value as a caller hands it in: `size` bytes at `data` (a whole number of base
/// elements), or NULL, which is not the same as an empty value.
struct VarPayload {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  bool null = false;
};

/// Values of elements of a VarType, element by element and, inside an element, slot by slot:
/// slot `k` is slot k % slots of element k / slots; its payload is data[begin(k), ends[k]).
struct VarValues {
  Bytes fixed;                      ///< fixed_size bytes per element
  std::vector<std::uint64_t> ends;  ///< per slot: where its payload ends in `data`
  std::vector<std::uint8_t> null;   ///< per slot: 1 when NULL (its payload is then empty)
  Bytes data;                       ///< the payloads, in the base types' file bytes

  /// Elements held (`type` has slots).
  std::size_t count(const VarType& type) const { return ends.size() / type.slots(); }
  std::uint64_t begin(std::size_t k) const { return k ? ends[k - 1] : 0; }
  VarPayload payload(std::size_t k) const;
  /// Appends an element: `type.fixed_size` bytes at `fixed` and type.slots() payloads.
  void append(const VarType& type, const std::uint8_t* fixed, const VarPayload* slots);
  /// Appends element `e` of `from`.
  void append_element(const VarValues& from, std::size_t e, const VarType& type);
  /// Appends elements [first, first + count) of `from`.
  void append_elements(const VarValues& from, std::size_t first, std::size_t count, const VarType& type);
  /// Appends every element of `from`.
  void append_values(const VarValues& from);
};

/// A variable-length chunk's defined elements: offsets in the chunk (row-major, ascending)
/// and their values, in the same order.
struct ChunkVarElements {
  std::vector<std::uint32_t> offsets;
  VarValues values;
};

/// Throws Error(invalid_argument) saying what is wrong when `values` are not `count` elements
/// of `type` (sizes of the parts, ends ascending up to data's size, NULL slots empty, payloads
/// whole base elements).
void check_var_values(const VarValues& values, std::size_t count, const VarType& type);

/// Refuses (Error(unsupported), naming the section) unfiltered section sizes a header cannot
/// record (2^32 bytes or more): checked before a chunk's sections are assembled.
void check_var_section_sizes(const std::array<std::uint64_t, 4>& sizes);

/// Serializes a chunk in format version 3. Error(invalid_argument) for inconsistent elements
/// or a layout without slots; Error(unsupported) for a chunk beyond the 4 GiB limits.
/// Zero padding brings a chunk with a filtered section to its size class (docs/FORMAT.md);
/// `padding` more zero bytes follow (an SWMR writer's rewrite changes a chunk's size).
Bytes encode_var_chunk(const ChunkVarElements& chunk, const ChunkLayout& layout, std::uint32_t padding = 0);

/// A version-3 chunk's header: each section's stored and unfiltered size, mask and checksums.
struct VarChunkHeader {
  std::size_t size = 0;  ///< header bytes
  std::array<SectionInfo, 4> sections{};
  std::uint32_t padding = 0;  ///< zero bytes after section 3
};

/// Parses and validates a version-3 header only (version, fields, header checksum, sizes adding
/// up to `size`, masks naming filters of the layout's pipelines), as read_chunk_header does for
/// versions 1-2: what a report of a chunk's sections needs. Error(corrupt_data) or
/// Error(unsupported) as decode_var_chunk.
VarChunkHeader read_var_chunk_header(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout);

/// Decodes and verifies a version-3 chunk (header, four pipelines and checksums, selection,
/// sizes, every length): Error(corrupt_data) naming the section at fault, Error(unsupported)
/// for an unknown version.
ChunkVarElements decode_var_chunk(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout);

/// The elements of `base` and `written` (offsets ascending and unique in both), written's
/// values where both have an element.
ChunkVarElements merge_var_elements(const ChunkVarElements& base, const ChunkVarElements& written,
                                    const VarType& type);

/// Removes the elements at `offsets` (ascending) from `chunk`, in place; returns how many it held.
std::size_t erase_var_elements(ChunkVarElements& chunk, const std::vector<std::uint32_t>& offsets,
                               const VarType& type);
/// Removes the elements `erased` selects (a selection erase, an extent change's cut).
std::size_t erase_var_elements(ChunkVarElements& chunk, const ChunkSelection& erased, const VarType& type);

}  // namespace h5sparse
