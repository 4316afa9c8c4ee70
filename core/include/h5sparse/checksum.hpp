// XXH3-64, the checksum of structured chunks (docs/FORMAT.md). Every chunk read and written
// hashes its sections, a pass over all values, so the hash uses AVX2 when the CPU has it
// (chosen once at run time; the result is the same, XXH3 being defined bit for bit) and the
// system libxxhash (SSE2) otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h5sparse {

std::uint64_t xxh3_64(const void* data, std::size_t size) noexcept;

namespace detail {
/// XXH3-64 compiled for AVX2 (checksum_avx2.cpp); call only when the CPU has AVX2.
std::uint64_t xxh3_64_avx2(const void* data, std::size_t size) noexcept;
}  // namespace detail

}  // namespace h5sparse
