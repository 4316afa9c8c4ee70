// Unsigned LEB128 varints (docs/FORMAT.md): 7 bits per byte, least significant group first,
// high bit set on every byte but the last. The one writer of the selection encodings and the
// structured chunk header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h5sparse {

/// Bytes the varint of `v` takes (1-10).
inline std::size_t varint_size(std::uint64_t v) noexcept {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

/// Writes the varint of `v` at `p` (room for varint_size(v) bytes) and returns the end.
inline std::uint8_t* write_varint(std::uint8_t* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = std::uint8_t(v | 0x80);
    v >>= 7;
  }
  *p++ = std::uint8_t(v);
  return p;
}

}  // namespace h5sparse
