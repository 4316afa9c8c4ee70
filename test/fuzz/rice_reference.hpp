// A bit-at-a-time writer and reader of selection tag 6 (rice offsets, docs/FORMAT.md), written
// from the format alone: the oracles the core's writer and table-driven decoder are compared
// with (unit tests and the selection fuzz target). Slow and obviously right, nothing shared
// with the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace h5sparse_test {

/// Tag 6 for the sorted offsets with parameter k, bit by bit.
inline std::vector<std::uint8_t> reference_rice_encode(const std::vector<std::uint64_t>& offsets, unsigned k) {
  std::vector<bool> bits;
  std::uint64_t next = 0;
  for (std::uint64_t i : offsets) {
    const std::uint64_t gap = i - next;
    for (std::uint64_t q = gap >> k; q > 0; --q) bits.push_back(true);
    bits.push_back(false);
    for (unsigned b = 0; b < k; ++b) bits.push_back(gap >> b & 1);
    next = i + 1;
  }
  std::vector<std::uint8_t> out{6};
  for (std::uint64_t v = offsets.size();; v >>= 7) {
    out.push_back(std::uint8_t(v < 0x80 ? v : (v & 0x7F) | 0x80));
    if (v < 0x80) break;
  }
  out.push_back(std::uint8_t(k));
  for (std::size_t i = 0; i < bits.size(); i += 8) {
    std::uint8_t byte = 0;
    for (std::size_t b = 0; b < 8 && i + b < bits.size(); ++b) byte |= std::uint8_t(bits[i + b]) << b;
    out.push_back(byte);
  }
  return out;
}

/// The defined offsets of an encoded tag-6 selection of `n` elements, or nothing when the
/// format rejects it (truncated, offsets outside, k above 32, trailing bytes or padding bits).
inline std::optional<std::vector<std::uint64_t>> reference_rice_offsets(const std::uint8_t* data, std::size_t size,
                                                                        std::uint64_t n) {
  if (size < 1 || data[0] != 6) return std::nullopt;
  std::size_t at = 1;
  std::uint64_t count = 0;
  for (unsigned shift = 0;; shift += 7) {  // varint count
    if (at == size || shift > 63) return std::nullopt;
    const std::uint8_t b = data[at++];
    if (shift == 63 && b > 1) return std::nullopt;
    count |= std::uint64_t(b & 0x7F) << shift;
    if (!(b & 0x80)) break;
  }
  if (count > n || at == size) return std::nullopt;
  const unsigned k = data[at++];
  if (k > 32) return std::nullopt;
  const std::uint64_t bits = 8 * std::uint64_t(size - at);
  std::uint64_t bit = 0;
  const auto next_bit = [&](int& out) {
    if (bit == bits) return false;
    out = data[at + bit / 8] >> (bit % 8) & 1;
    ++bit;
    return true;
  };
  std::vector<std::uint64_t> offsets;
  std::uint64_t next = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint64_t q = 0;
    int b;
    while (true) {
      if (!next_bit(b)) return std::nullopt;
      if (!b) break;
      if (++q > n) return std::nullopt;  // longer than any gap inside the chunk
    }
    std::uint64_t low = 0;
    for (unsigned j = 0; j < k; ++j) {
      if (!next_bit(b)) return std::nullopt;
      low |= std::uint64_t(b) << j;
    }
    if (q > (n >> k)) return std::nullopt;
    const std::uint64_t gap = q << k | low;
    if (gap >= n - next) return std::nullopt;
    next += gap;
    offsets.push_back(next++);
  }
  if (bits - bit >= 8) return std::nullopt;  // a whole byte after the last code
  for (int b; next_bit(b);)
    if (b) return std::nullopt;  // padding bits are zero
  return offsets;
}

}  // namespace h5sparse_test
