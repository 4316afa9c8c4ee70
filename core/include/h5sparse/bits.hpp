// Bit counting for the selection bitmaps. The portable x86-64 build has no POPCNT instruction,
// and __builtin_popcountll then calls libgcc's __popcountdi2 (a call per word: a tenth of a
// 10%-density read); the SWAR form below is inline and branch-free.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h5sparse {

inline unsigned popcount64(std::uint64_t w) noexcept {
#if defined(__POPCNT__)
  return unsigned(__builtin_popcountll(w));
#else
  w -= (w >> 1) & 0x5555555555555555ull;
  w = (w & 0x3333333333333333ull) + ((w >> 2) & 0x3333333333333333ull);
  w = (w + (w >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return unsigned((w * 0x0101010101010101ull) >> 56);
#endif
}

/// Set bits of `n` words: with the POPCNT instruction where the CPU has it (selection_codec.cpp).
std::uint64_t count_set_bits(const std::uint64_t* words, std::size_t n) noexcept;

}  // namespace h5sparse
