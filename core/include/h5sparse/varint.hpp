// Unsigned LEB128 varints (docs/FORMAT.md): 7 bits per byte, least significant group first,
// high bit set on every byte but the last. The one writer of the selection encodings and the
// structured chunk header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "h5sparse/error.hpp"

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

/// Reads a varint of at most 5 bytes and 32 bits (the structured chunk header's sizes, a VL
/// chunk's lengths) at `p`, not past `end`, and advances `p`; Error(corrupt_data) saying
/// `what` holds a truncated, overlong or too large varint.
inline std::uint32_t read_varint32(const std::uint8_t*& p, const std::uint8_t* end, const char* what) {
  std::uint64_t v = 0;
  for (unsigned shift = 0; shift < 35; shift += 7) {
    H5SPARSE_FAIL_IF(p == end, ErrorCode::corrupt_data, std::string(what) + ": truncated varint");
    const std::uint8_t byte = *p++;
    v |= std::uint64_t(byte & 0x7F) << shift;
    if (!(byte & 0x80)) {
      H5SPARSE_FAIL_IF(v > 0xFFFFFFFFu, ErrorCode::corrupt_data, std::string(what) + ": varint above 32 bits");
      return std::uint32_t(v);
    }
  }
  throw Error(ErrorCode::corrupt_data, std::string(what) + ": varint longer than 5 bytes");
}

}  // namespace h5sparse
