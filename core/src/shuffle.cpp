// Byte shuffle and bit shuffle: reorder bytes (or bits) so that values of similar magnitude
// line up, which is what makes the following compressor effective on numeric arrays.
#include <cstring>

#include "h5sparse/codecs.hpp"

namespace h5sparse {
namespace {

// memcpy that accepts empty (possibly null) buffers.
inline void copy_bytes(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) noexcept {
  if (n != 0) std::memcpy(dst, src, n);
}

// Transposes the 8x8 bit matrix held in a word (row = byte, column = bit), so bit i of byte k
// moves to bit k of byte i. Hacker's Delight, section 7-3.
inline std::uint64_t transpose_8x8(std::uint64_t x) noexcept {
  std::uint64_t t;
  t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAULL;
  x = x ^ t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCULL;
  x = x ^ t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ULL;
  x = x ^ t ^ (t << 28);
  return x;
}

template <std::size_t N>
void shuffle_fixed(std::uint8_t* dst, const std::uint8_t* src, std::size_t count) noexcept {
  for (std::size_t j = 0; j < count; ++j)
    for (std::size_t b = 0; b < N; ++b) dst[b * count + j] = src[j * N + b];
}

template <std::size_t N>
void unshuffle_fixed(std::uint8_t* dst, const std::uint8_t* src, std::size_t count) noexcept {
  for (std::size_t j = 0; j < count; ++j)
    for (std::size_t b = 0; b < N; ++b) dst[j * N + b] = src[b * count + j];
}

}  // namespace

void shuffle_bytes(std::uint8_t* dst, const std::uint8_t* src, std::size_t size,
                   std::size_t element_size) noexcept {
  if (element_size <= 1) {
    copy_bytes(dst, src, size);
    return;
  }
  const std::size_t count = size / element_size;
  switch (element_size) {  // fixed sizes let the compiler unroll and vectorize
    case 2: shuffle_fixed<2>(dst, src, count); break;
    case 4: shuffle_fixed<4>(dst, src, count); break;
    case 8: shuffle_fixed<8>(dst, src, count); break;
    default:
      for (std::size_t j = 0; j < count; ++j)
        for (std::size_t b = 0; b < element_size; ++b) dst[b * count + j] = src[j * element_size + b];
  }
  const std::size_t done = count * element_size;
  copy_bytes(dst + done, src + done, size - done);
}

void unshuffle_bytes(std::uint8_t* dst, const std::uint8_t* src, std::size_t size,
                     std::size_t element_size) noexcept {
  if (element_size <= 1) {
    copy_bytes(dst, src, size);
    return;
  }
  const std::size_t count = size / element_size;
  switch (element_size) {
    case 2: unshuffle_fixed<2>(dst, src, count); break;
    case 4: unshuffle_fixed<4>(dst, src, count); break;
    case 8: unshuffle_fixed<8>(dst, src, count); break;
    default:
      for (std::size_t j = 0; j < count; ++j)
        for (std::size_t b = 0; b < element_size; ++b) dst[j * element_size + b] = src[b * count + j];
  }
  const std::size_t done = count * element_size;
  copy_bytes(dst + done, src + done, size - done);
}

void bitshuffle(std::uint8_t* dst, const std::uint8_t* src, std::size_t size,
                std::size_t element_size) noexcept {
  if (element_size == 0) element_size = 1;
  const std::size_t count = (size / element_size) / 8 * 8;  // elements in whole blocks of 8
  const std::size_t row_bytes = count / 8;
  for (std::size_t b = 0; b < element_size; ++b) {
    for (std::size_t column = 0; column < row_bytes; ++column) {
      std::uint64_t word = 0;
      const std::uint8_t* p = src + column * 8 * element_size + b;
      for (unsigned k = 0; k < 8; ++k) word |= std::uint64_t(p[k * element_size]) << (8 * k);
      word = transpose_8x8(word);
      for (unsigned i = 0; i < 8; ++i)
        dst[(b * 8 + i) * row_bytes + column] = std::uint8_t(word >> (8 * i));
    }
  }
  const std::size_t done = count * element_size;
  copy_bytes(dst + done, src + done, size - done);
}

void bitunshuffle(std::uint8_t* dst, const std::uint8_t* src, std::size_t size,
                  std::size_t element_size) noexcept {
  if (element_size == 0) element_size = 1;
  const std::size_t count = (size / element_size) / 8 * 8;
  const std::size_t row_bytes = count / 8;
  for (std::size_t b = 0; b < element_size; ++b) {
    for (std::size_t column = 0; column < row_bytes; ++column) {
      std::uint64_t word = 0;
      for (unsigned i = 0; i < 8; ++i)
        word |= std::uint64_t(src[(b * 8 + i) * row_bytes + column]) << (8 * i);
      word = transpose_8x8(word);
      std::uint8_t* p = dst + column * 8 * element_size + b;
      for (unsigned k = 0; k < 8; ++k) p[k * element_size] = std::uint8_t(word >> (8 * k));
    }
  }
  const std::size_t done = count * element_size;
  copy_bytes(dst + done, src + done, size - done);
}

}  // namespace h5sparse
