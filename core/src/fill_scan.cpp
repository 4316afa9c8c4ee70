// Vectorised packing of non-fill elements (see fill_scan.hpp). SSE2 is part of x86-64 and is
// the baseline; AVX2 kernels are compiled with a target attribute and picked once at run time,
// so the library still runs on any x86-64 CPU. Other architectures use the portable loop.
#include "h5sparse/fill_scan.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

#include "h5sparse/bits.hpp"
#include "h5sparse/cpu_features.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define H5SPARSE_X86_KERNELS 1
#include <immintrin.h>
#endif

namespace h5sparse {
namespace {

// Marks the 8 elements `bits` describes, starting at element i, in the selection's words.
inline void mark8(std::uint64_t* words, std::uint64_t i, unsigned bits) {
  const unsigned shift = unsigned(i & 63);
  words[i >> 6] |= std::uint64_t(bits) << shift;
  if (shift > 56) words[(i >> 6) + 1] |= std::uint64_t(bits) >> (64 - shift);
}

// Elements [from, length) one by one: the tail after the last whole group of 8, and every
// element of a width without a vector kernel. Inlined, a constant width makes the compare and
// copy single loads and stores.
inline std::uint8_t* pack_one_by_one(const std::uint8_t* src, std::uint64_t from, std::uint64_t length,
                                     std::uint64_t start, const std::uint8_t* fill, std::size_t element_size,
                                     std::uint64_t* words, std::uint8_t* out) {
  for (std::uint64_t k = from; k < length; ++k) {
    const std::uint8_t* p = src + k * element_size;
    if (std::memcmp(p, fill, element_size) == 0) continue;
    std::memcpy(out, p, element_size);
    out += element_size;
    words[(start + k) >> 6] |= std::uint64_t(1) << ((start + k) & 63);
  }
  return out;
}

// Bit j set when element j of the 8 at `p` (width W, 4 or 8) differs from the fill value.
template <std::size_t W>
unsigned differing8(const std::uint8_t* p, const std::uint8_t* fill) {
#if defined(__SSE2__)
  // Compare 4-byte lanes, then fold lanes into elements.
  std::uint32_t f32[2];
  std::memcpy(f32, fill, 4);
  if (W == 8) std::memcpy(f32, fill, 8);
  const __m128i f =
      W == 4 ? _mm_set1_epi32(int(f32[0])) : _mm_set_epi32(int(f32[1]), int(f32[0]), int(f32[1]), int(f32[0]));
  unsigned equal_lanes = 0;  // bit per 4-byte lane
  for (unsigned i = 0; i < W * 8 / 16; ++i) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    equal_lanes |= unsigned(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, f)))) << (4 * i);
  }
  if (W == 4) return ~equal_lanes & 0xFFu;
  unsigned equal = 0;  // W == 8: an element is equal when both of its lanes are
  for (unsigned j = 0; j < 8; ++j) equal |= ((equal_lanes >> (2 * j)) & (equal_lanes >> (2 * j + 1)) & 1u) << j;
  return ~equal & 0xFFu;
#else
  using U = std::conditional_t<W == 4, std::uint32_t, std::uint64_t>;
  U f, x[8];
  std::memcpy(&f, fill, W);
  std::memcpy(x, p, 8 * W);
  unsigned bits = 0;
  for (unsigned j = 0; j < 8; ++j) bits |= unsigned(x[j] != f) << j;
  return bits;
#endif
}

// Baseline: a compare mask per 8 elements, then all / nothing / branch-free compaction.
template <std::size_t W>
std::uint8_t* pack_baseline(const std::uint8_t* src, std::uint64_t length, std::uint64_t start,
                            const std::uint8_t* fill, std::uint64_t* words, std::uint8_t* out) {
  std::uint64_t k = 0;
  for (; k + 8 <= length; k += 8) {
    const std::uint8_t* p = src + k * W;
    const unsigned bits = differing8<W>(p, fill);
    if (bits == 0) continue;
    if (bits == 0xFFu) {
      std::memcpy(out, p, 8 * W);
      out += 8 * W;
    } else {
      for (unsigned j = 0; j < 8; ++j) {
        std::memcpy(out, p + j * W, W);
        out += (bits >> j & 1) * W;
      }
    }
    mark8(words, start + k, bits);
  }
  return pack_one_by_one(src, k, length, start, fill, W, words, out);
}

#ifdef H5SPARSE_X86_KERNELS
// Lane permutations that move the selected 32-bit lanes of a 256-bit vector to its front:
// for 8 elements of 4 bytes (one lane each, indexed by an 8-bit mask), and for 4 elements of
// 8 bytes (two lanes each, indexed by a 4-bit mask).
struct CompactTables {
  std::array<std::array<std::uint8_t, 8>, 256> lanes4{};
  std::array<std::array<std::uint8_t, 8>, 16> lanes8{};
  CompactTables() {
    for (unsigned m = 0; m < 256; ++m) {
      unsigned n = 0;
      for (unsigned j = 0; j < 8; ++j)
        if (m >> j & 1) lanes4[m][n++] = std::uint8_t(j);
    }
    for (unsigned m = 0; m < 16; ++m) {
      unsigned n = 0;
      for (unsigned j = 0; j < 4; ++j)
        if (m >> j & 1) {
          lanes8[m][n++] = std::uint8_t(2 * j);
          lanes8[m][n++] = std::uint8_t(2 * j + 1);
        }
    }
  }
};
const CompactTables kTables;

__attribute__((target("avx2,popcnt"))) inline __m256i lane_permutation(const std::array<std::uint8_t, 8>& lanes) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(lanes.data())));
}

// The differing elements among 64 of 4 bytes at `p`, as a bitmap word: 8 compares, packed to
// bytes (packs work within 128-bit halves, so the 64-bit groups are put back in order before
// the byte mask is taken).
__attribute__((target("avx2,popcnt"))) inline std::uint64_t differing64_avx2(const std::uint8_t* p, __m256i fv) {
  std::uint64_t equal = 0;
  for (unsigned half = 0; half < 2; ++half) {
    const std::uint8_t* q = p + 128 * half;
    const __m256i e0 = _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)), fv);
    const __m256i e1 = _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 32)), fv);
    const __m256i e2 = _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 64)), fv);
    const __m256i e3 = _mm256_cmpeq_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 96)), fv);
    // packs_epi32 then packs_epi16 work within 128-bit halves: the bytes come out in 4-element
    // groups 0-3, 8-11, 16-19, 24-27 | 4-7, 12-15, 20-23, 28-31, which the permutation orders.
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(e0, e1), _mm256_packs_epi32(e2, e3));
    const __m256i ordered = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    equal |= std::uint64_t(std::uint32_t(_mm256_movemask_epi8(ordered))) << (32 * half);
  }
  return ~equal;
}

__attribute__((target("avx2,popcnt"))) std::uint8_t* pack4_avx2(const std::uint8_t* src, std::uint64_t length,
                                                                  std::uint64_t start, const std::uint8_t* fill,
                                                                  std::uint64_t* words, std::uint8_t* out) {
  std::uint32_t f;
  std::memcpy(&f, fill, 4);
  const __m256i fv = _mm256_set1_epi32(int(f));
  std::uint64_t k = 0;
  // 64 elements at a time from a word boundary of the selection: one bitmap word, then the
  // compaction per 8 elements without a branch (all-fill and all-differing words aside).
  const std::uint64_t lead = std::min<std::uint64_t>((64 - (start & 63)) & 63, length) & ~std::uint64_t(7);
  if ((start & 7) == 0 && lead + 64 <= length) {
    for (; k < lead; k += 8) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 4 * k));
      const unsigned bits = ~unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, fv)))) & 0xFFu;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                          _mm256_permutevar8x32_epi32(v, lane_permutation(kTables.lanes4[bits])));
      out += 4 * unsigned(__builtin_popcount(bits));
      mark8(words, start + k, bits);
    }
    for (; k + 64 <= length; k += 64) {
      const std::uint8_t* p = src + 4 * k;
      const std::uint64_t d = differing64_avx2(p, fv);
      if (d == 0) continue;
      words[(start + k) >> 6] |= d;
      if (d == ~std::uint64_t(0)) {
        std::memcpy(out, p, 256);
        out += 256;
        continue;
      }
#pragma GCC unroll 8
      for (unsigned b = 0; b < 8; ++b) {
        const unsigned bits = unsigned(d >> (8 * b)) & 0xFFu;
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * b));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                            _mm256_permutevar8x32_epi32(v, lane_permutation(kTables.lanes4[bits])));
        out += 4 * unsigned(_mm_popcnt_u32(bits));
      }
    }
  }
  for (; k + 8 <= length; k += 8) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 4 * k));
    const unsigned bits = ~unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, fv)))) & 0xFFu;
    if (bits == 0) continue;
    if (bits == 0xFFu) {  // dense data: a plain copy
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v);
      out += 32;
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                          _mm256_permutevar8x32_epi32(v, lane_permutation(kTables.lanes4[bits])));
      out += 4 * unsigned(__builtin_popcount(bits));
    }
    mark8(words, start + k, bits);
  }
  return pack_one_by_one(src, k, length, start, fill, 4, words, out);
}

__attribute__((target("avx2,popcnt"))) std::uint8_t* pack8_avx2(const std::uint8_t* src, std::uint64_t length,
                                                                  std::uint64_t start, const std::uint8_t* fill,
                                                                  std::uint64_t* words, std::uint8_t* out) {
  std::int64_t f;
  std::memcpy(&f, fill, 8);
  const __m256i fv = _mm256_set1_epi64x(f);
  std::uint64_t k = 0;
  for (; k + 8 <= length; k += 8) {
    unsigned bits = 0;
    for (unsigned half = 0; half < 2; ++half) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 8 * (k + 4 * half)));
      const unsigned b = ~unsigned(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(v, fv)))) & 0xFu;
      if (b == 0) continue;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                          _mm256_permutevar8x32_epi32(v, lane_permutation(kTables.lanes8[b])));
      out += 8 * unsigned(__builtin_popcount(b));
      bits |= b << (4 * half);
    }
    if (bits) mark8(words, start + k, bits);
  }
  return pack_one_by_one(src, k, length, start, fill, 8, words, out);
}

#endif

}  // namespace

std::uint8_t* pack_differing(const std::uint8_t* src, std::uint64_t length, std::uint64_t start,
                             const std::uint8_t* fill, std::size_t element_size, ChunkSelection& written,
                             std::uint8_t* out) {
#ifdef H5SPARSE_X86_KERNELS
  if (cpu_has_avx2()) {
    if (element_size == 4) return pack4_avx2(src, length, start, fill, written.word_data(), out);
    if (element_size == 8) return pack8_avx2(src, length, start, fill, written.word_data(), out);
  }
#endif
  return pack_differing_baseline(src, length, start, fill, element_size, written, out);
}

std::uint8_t* pack_differing_baseline(const std::uint8_t* src, std::uint64_t length, std::uint64_t start,
                                      const std::uint8_t* fill, std::size_t element_size, ChunkSelection& written,
                                      std::uint8_t* out) {
  std::uint64_t* const words = written.word_data();
  switch (element_size) {
    case 4: return pack_baseline<4>(src, length, start, fill, words, out);
    case 8: return pack_baseline<8>(src, length, start, fill, words, out);
    default: return pack_one_by_one(src, 0, length, start, fill, element_size, words, out);
  }
}

bool all_elements_equal(const std::uint8_t* src, std::uint64_t count, const std::uint8_t* value,
                        std::size_t element_size) noexcept {
  if (count == 0) return true;
  if (std::memcmp(src, value, element_size) != 0) return false;
  // Equal to itself shifted by one element means every element equals the first: one memcmp,
  // which libc vectorises, instead of a compare per element.
  return std::memcmp(src, src + element_size, std::size_t(count - 1) * element_size) == 0;
}

}  // namespace h5sparse
