// Byte shuffle and bit shuffle: reorder bytes (or bits) so that values of similar magnitude
// line up, which is what makes the following compressor effective on numeric arrays.
#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "h5sparse/codecs.hpp"
#include "h5sparse/cpu_features.hpp"

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

// The fixed-size loops are written so that GCC and Clang vectorize them (this file is built
// with -O3); on x86-64 each also has an AVX2 build, called when cpu_has_avx2(). Section
// pipelines shuffle every chunk's sections through here.
template <std::size_t N>
[[gnu::always_inline]] inline void shuffle_loop(std::uint8_t* dst, const std::uint8_t* src, std::size_t count) noexcept {
  for (std::size_t j = 0; j < count; ++j)
    for (std::size_t b = 0; b < N; ++b) dst[b * count + j] = src[j * N + b];
}

template <std::size_t N>
[[gnu::always_inline]] inline void unshuffle_loop(std::uint8_t* dst, const std::uint8_t* src, std::size_t count) noexcept {
  for (std::size_t j = 0; j < count; ++j)
    for (std::size_t b = 0; b < N; ++b) dst[j * N + b] = src[b * count + j];
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <std::size_t N>
__attribute__((target("avx2"))) void shuffle_avx2(std::uint8_t* dst, const std::uint8_t* src, std::size_t count) noexcept {
  shuffle_loop<N>(dst, src, count);
}
template <std::size_t N>
__attribute__((target("avx2"))) void unshuffle_avx2(std::uint8_t* dst, const std::uint8_t* src, std::size_t count) noexcept {
  unshuffle_loop<N>(dst, src, count);
}
#endif

template <std::size_t N>
void shuffle_fixed(std::uint8_t* dst, const std::uint8_t* src, std::size_t count) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (cpu_has_avx2()) return shuffle_avx2<N>(dst, src, count);
#endif
  shuffle_loop<N>(dst, src, count);
}

template <std::size_t N>
void unshuffle_fixed(std::uint8_t* dst, const std::uint8_t* src, std::size_t count) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (cpu_has_avx2()) return unshuffle_avx2<N>(dst, src, count);
#endif
  unshuffle_loop<N>(dst, src, count);
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

// Bit rows of a byte plane: `plane` holds byte b of `count` elements (count % 8 == 0); row i
// (bit i of that byte) goes to out + i * row_stride, element j at bit j % 8 of byte j / 8.
void transpose_plane_bits(std::uint8_t* out, std::size_t row_stride, const std::uint8_t* plane,
                          std::size_t count) noexcept {
  std::size_t j = 0;
#if defined(__SSE2__)
  // 16 elements at a time: movemask collects bit 7 of 16 bytes; shifting left walks bits 6..0
  // into place (a 16-bit lane shift only carries into bits that movemask reads 8 shifts later).
  for (; j + 16 <= count; j += 16) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane + j));
    for (int i = 7; i >= 0; --i) {
      const auto bits = std::uint16_t(_mm_movemask_epi8(x));
      std::memcpy(out + std::size_t(i) * row_stride + j / 8, &bits, 2);
      x = _mm_slli_epi16(x, 1);
    }
  }
#endif
  for (; j < count; j += 8) {
    std::uint64_t word = 0;  // byte k = element j + k; transposed, byte i = bit row i
    for (unsigned k = 0; k < 8; ++k) word |= std::uint64_t(plane[j + k]) << (8 * k);
    word = transpose_8x8(word);
    for (unsigned i = 0; i < 8; ++i) out[i * row_stride + j / 8] = std::uint8_t(word >> (8 * i));
  }
}

void bitshuffle(std::uint8_t* dst, const std::uint8_t* src, std::size_t size,
                std::size_t element_size) noexcept {
  if (element_size == 0) element_size = 1;
  const std::size_t count = (size / element_size) / 8 * 8;  // elements in whole blocks of 8
  const std::size_t row_bytes = count / 8;
  // A run of elements at a time: their byte planes (the fast byte shuffle) into a stage on
  // the stack, then each plane's bits into its rows (plane b's rows start at b * count).
  constexpr std::size_t kStage = 8192;
  alignas(16) std::uint8_t stage[kStage];
  const std::size_t step = element_size == 1 ? count : kStage / element_size / 8 * 8;
  for (std::size_t j0 = 0; j0 < count;) {
    if (step == 0) {  // elements over 1 KiB: bit rows straight from the source, 8 at a time
      for (std::size_t b = 0; b < element_size; ++b) {
        for (std::size_t j = j0; j < count; j += 8) {
          std::uint8_t plane[8];
          for (unsigned k = 0; k < 8; ++k) plane[k] = src[(j + k) * element_size + b];
          transpose_plane_bits(dst + b * count + j / 8, row_bytes, plane, 8);
        }
      }
      break;
    }
    const std::size_t n = std::min(step, count - j0);
    const std::uint8_t* planes = src + j0;  // element_size 1: the source is the plane
    if (element_size > 1) {
      shuffle_bytes(stage, src + j0 * element_size, n * element_size, element_size);
      planes = stage;
    }
    for (std::size_t b = 0; b < element_size; ++b) {
      transpose_plane_bits(dst + b * count + j0 / 8, row_bytes, planes + b * n, n);
    }
    j0 += n;
  }
  const std::size_t done = count * element_size;
  copy_bytes(dst + done, src + done, size - done);
}

// The inverse of transpose_plane_bits: byte b of `count` elements (count % 8 == 0) from its
// eight bit rows (row i at rows + i * row_stride), into `plane`, element j at plane[j].
void untranspose_plane_bits(std::uint8_t* plane, const std::uint8_t* rows, std::size_t row_stride,
                            std::size_t count) noexcept {
  std::size_t j = 0;
#if defined(__SSE2__)
  // 128 elements (16 bytes of each row) at a time: interleave the rows so that each 64-bit
  // lane holds one row byte per row (8 elements' bits), then transpose each lane's 8x8 bits.
  const __m128i m1 = _mm_set1_epi64x(0x00AA00AA00AA00AALL);
  const __m128i m2 = _mm_set1_epi64x(0x0000CCCC0000CCCCLL);
  const __m128i m4 = _mm_set1_epi64x(0x00000000F0F0F0F0LL);
  for (; j + 128 <= count; j += 128) {
    const std::uint8_t* at = rows + j / 8;
    __m128i r[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at + std::size_t(i) * row_stride));
    const __m128i a0 = _mm_unpacklo_epi8(r[0], r[1]), a1 = _mm_unpackhi_epi8(r[0], r[1]);
    const __m128i a2 = _mm_unpacklo_epi8(r[2], r[3]), a3 = _mm_unpackhi_epi8(r[2], r[3]);
    const __m128i a4 = _mm_unpacklo_epi8(r[4], r[5]), a5 = _mm_unpackhi_epi8(r[4], r[5]);
    const __m128i a6 = _mm_unpacklo_epi8(r[6], r[7]), a7 = _mm_unpackhi_epi8(r[6], r[7]);
    const __m128i b0 = _mm_unpacklo_epi16(a0, a2), b1 = _mm_unpackhi_epi16(a0, a2);
    const __m128i b2 = _mm_unpacklo_epi16(a1, a3), b3 = _mm_unpackhi_epi16(a1, a3);
    const __m128i b4 = _mm_unpacklo_epi16(a4, a6), b5 = _mm_unpackhi_epi16(a4, a6);
    const __m128i b6 = _mm_unpacklo_epi16(a5, a7), b7 = _mm_unpackhi_epi16(a5, a7);
    __m128i w[8] = {_mm_unpacklo_epi32(b0, b4), _mm_unpackhi_epi32(b0, b4), _mm_unpacklo_epi32(b1, b5),
                    _mm_unpackhi_epi32(b1, b5), _mm_unpacklo_epi32(b2, b6), _mm_unpackhi_epi32(b2, b6),
                    _mm_unpacklo_epi32(b3, b7), _mm_unpackhi_epi32(b3, b7)};
    for (int k = 0; k < 8; ++k) {  // transpose_8x8 in each 64-bit lane
      __m128i x = w[k];
      __m128i t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 7)), m1);
      x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 7));
      t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 14)), m2);
      x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 14));
      t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 28)), m4);
      x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 28));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(plane + j + 16 * std::size_t(k)), x);
    }
  }
#endif
  for (; j < count; j += 8) {
    std::uint64_t word = 0;  // byte i = bit row i's byte for these 8 elements
    for (unsigned i = 0; i < 8; ++i) word |= std::uint64_t(rows[i * row_stride + j / 8]) << (8 * i);
    word = transpose_8x8(word);
    std::memcpy(plane + j, &word, 8);  // byte k = element j + k (little-endian hosts)
  }
}

void bitunshuffle(std::uint8_t* dst, const std::uint8_t* src, std::size_t size,
                  std::size_t element_size) noexcept {
  if (element_size == 0) element_size = 1;
  const std::size_t count = (size / element_size) / 8 * 8;
  const std::size_t row_bytes = count / 8;
  // A run of elements at a time: each byte plane from its bit rows into a stage on the
  // stack, then the planes into elements (the fast byte unshuffle); bitshuffle in reverse.
  constexpr std::size_t kStage = 8192;
  alignas(16) std::uint8_t stage[kStage];
  const std::size_t step = element_size == 1 ? count : kStage / element_size / 8 * 8;
  if (step == 0) {  // elements over 1 KiB: 8 at a time
    for (std::size_t b = 0; b < element_size; ++b) {
      for (std::size_t j = 0; j < count; j += 8) {
        std::uint8_t plane[8];
        untranspose_plane_bits(plane, src + b * count + j / 8, row_bytes, 8);
        for (unsigned k = 0; k < 8; ++k) dst[(j + k) * element_size + b] = plane[k];
      }
    }
  }
  for (std::size_t j0 = 0; step != 0 && j0 < count;) {
    const std::size_t n = std::min(step, count - j0);
    std::uint8_t* planes = element_size == 1 ? dst + j0 : stage;  // element_size 1: the plane is the output
    for (std::size_t b = 0; b < element_size; ++b) {
      untranspose_plane_bits(planes + b * n, src + b * count + j0 / 8, row_bytes, n);
    }
    if (element_size > 1) unshuffle_bytes(dst + j0 * element_size, stage, n * element_size, element_size);
    j0 += n;
  }
  const std::size_t done = count * element_size;
  copy_bytes(dst + done, src + done, size - done);
}

}  // namespace h5sparse
