// Direct structured-chunk I/O (the RFC's H5Dread_struct_chunk / H5Dwrite_struct_chunk): a
// stored chunk taken apart into its stored (filtered) sections without decoding them, and a
// stored chunk put together from sections a caller gives. Putting together verifies
// everything a reader will check, so a bad direct write is refused instead of stored.
#pragma once

#include <array>
#include <cstdint>

#include "h5sparse/structured_chunk.hpp"

namespace h5sparse {

/// One section as direct chunk I/O exchanges it: its stored bytes and what the chunk header
/// says about them.
struct SectionBytes {
  const std::uint8_t* data = nullptr;
  std::size_t stored_size = 0;      ///< bytes after the section pipeline (as stored)
  std::size_t unfiltered_size = 0;  ///< bytes before the pipeline
  std::uint32_t filter_mask = 0;    ///< bit i: filter i of the section's pipeline was skipped
};

/// The sections of a stored chunk, pointing into `data`. Verifies the header and both
/// stored-bytes checksums (cheap), not the pipelines: nothing is decoded. Throws
/// Error(corrupt_data) naming the problem. A section no filter ran on has the mask "every
/// filter of the layout's pipeline skipped".
std::array<SectionBytes, 2> split_chunk(const std::uint8_t* data, std::size_t size, const ChunkLayout& layout);

/// The stored chunk made of the given sections. Each section is run back through the layout's
/// pipeline with its filter mask and must give exactly `unfiltered_size` bytes; the selection
/// must decode for the chunk's dimensions and the values must hold one element per defined
/// element. The checksums are computed here from the bytes given (the caller has none to give).
/// Throws Error(invalid_argument) saying what is wrong; nothing is returned then.
Bytes assemble_chunk(const std::array<SectionBytes, 2>& sections, const ChunkLayout& layout);

}  // namespace h5sparse
