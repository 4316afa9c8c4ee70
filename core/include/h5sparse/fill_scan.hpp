// Packing the written values of a chunk: the elements of a contiguous stretch that differ from
// the fill value (fill-is-undefined datasets) are appended to the values section and marked in
// the chunk's selection. This runs over every element a dense-array write passes, so it is
// vectorised: 8 elements per compare, and with AVX2 (chosen at run time) a table-driven
// compaction of the differing ones, whatever the density.
#pragma once

#include <cstddef>
#include <cstdint>

#include "h5sparse/selection_codec.hpp"

namespace h5sparse {

/// Bytes `pack_differing` may write past the last value it packs (whole vectors are stored);
/// the output buffer must have this much room after the largest possible result.
constexpr std::size_t kPackSlack = 32;

/// Appends to `out` each element of src[0, length) (element_size bytes each) that differs
/// byte for byte from `fill`, in order, and sets bit start + k of `written` for each such
/// element k. Returns the new end of `out`.
std::uint8_t* pack_differing(const std::uint8_t* src, std::uint64_t length, std::uint64_t start,
                             const std::uint8_t* fill, std::size_t element_size, ChunkSelection& written,
                             std::uint8_t* out);

/// pack_differing without the run-time chosen kernels (the portable and SSE2 ones only): the
/// same result, for tests comparing both.
std::uint8_t* pack_differing_baseline(const std::uint8_t* src, std::uint64_t length, std::uint64_t start,
                                      const std::uint8_t* fill, std::size_t element_size, ChunkSelection& written,
                                      std::uint8_t* out);

/// True when each of the `count` elements of src (element_size bytes each) equals `value` byte
/// for byte; true for no elements.
bool all_elements_equal(const std::uint8_t* src, std::uint64_t count, const std::uint8_t* value,
                        std::size_t element_size) noexcept;

}  // namespace h5sparse
