// Byte shuffle (HDF5's shuffle filter in section pipelines): reorder bytes so that values of
// similar magnitude line up, which is what makes the following compressor effective on numeric
// arrays. Blosc's own shuffles, byte and bit, are c-blosc's.
#include <cstring>

#include "h5sparse/codecs.hpp"
#include "h5sparse/cpu_features.hpp"

namespace h5sparse {
namespace {

// memcpy that accepts empty (possibly null) buffers.
inline void copy_bytes(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) noexcept {
  if (n != 0) std::memcpy(dst, src, n);
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

}  // namespace h5sparse
