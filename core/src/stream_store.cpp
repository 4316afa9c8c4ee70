#include "h5sparse/stream_store.hpp"

#include <cstring>

#include "h5sparse/chunk_scatter.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace h5sparse {
namespace {

// Below this, the unaligned head and tail cost more than streaming saves.
constexpr std::size_t kShortBytes = 64;

}  // namespace

#if defined(__SSE2__)

void stream_copy(std::uint8_t* dest, const std::uint8_t* source, std::size_t bytes) noexcept {
  if (bytes < kShortBytes) {
    std::memcpy(dest, source, bytes);
    return;
  }
  // Head and tail copies only when there are any: a mixed word of a read (256 bytes, usually
  // aligned) would otherwise pay two empty memcpy calls.
  const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dest) & 15)) & 15;
  if (head) std::memcpy(dest, source, head);
  dest += head;
  source += head;
  bytes -= head;
  std::size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dest + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dest + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dest + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dest + i + 48), d);
  }
  for (; i + 16 <= bytes; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dest + i),
                     _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i)));
  if (i < bytes) std::memcpy(dest + i, source + i, bytes - i);
}

void stream_fill(std::uint8_t* dest, std::uint64_t count, const std::uint8_t* fill, std::size_t element_size) noexcept {
  const std::size_t bytes = std::size_t(count) * element_size;
  if (bytes < kShortBytes || 16 % element_size != 0) {
    fill_elements(dest, count, fill, element_size);
    return;
  }
  // Byte k of the destination is fill[k % element_size]; element sizes dividing 16 make the
  // aligned part one repeated 16-byte pattern, in the phase of its first byte.
  const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dest) & 15)) & 15;
  const std::size_t phase_mask = element_size - 1;  // a power of two
  alignas(16) std::uint8_t pattern[16];
  for (std::size_t j = 0; j < 16; ++j) pattern[j] = fill ? fill[(head + j) & phase_mask] : 0;
  const __m128i p = _mm_load_si128(reinterpret_cast<const __m128i*>(pattern));
  if (head) std::memcpy(dest, pattern + 16 - head, head);  // bytes [0, head): the phase of pattern[16 - head]
  std::uint8_t* at = dest + head;
  std::uint8_t* const stop = dest + bytes;
  for (; at + 64 <= stop; at += 64) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(at), p);
    _mm_stream_si128(reinterpret_cast<__m128i*>(at + 16), p);
    _mm_stream_si128(reinterpret_cast<__m128i*>(at + 32), p);
    _mm_stream_si128(reinterpret_cast<__m128i*>(at + 48), p);
  }
  for (; at + 16 <= stop; at += 16) _mm_stream_si128(reinterpret_cast<__m128i*>(at), p);
  if (at < stop) std::memcpy(at, pattern, std::size_t(stop - at));  // the tail starts in the pattern's phase
}

void stream_fence() noexcept { _mm_sfence(); }

#else  // no streaming stores: ordinary ones

void stream_copy(std::uint8_t* dest, const std::uint8_t* source, std::size_t bytes) noexcept {
  std::memcpy(dest, source, bytes);
}

void stream_fill(std::uint8_t* dest, std::uint64_t count, const std::uint8_t* fill, std::size_t element_size) noexcept {
  fill_elements(dest, count, fill, element_size);
}

void stream_fence() noexcept {}

#endif

}  // namespace h5sparse
