#include "h5sparse/chunk_scatter.hpp"

#include <algorithm>
#include <cstring>

#include "h5sparse/bits.hpp"
#include "h5sparse/stream_store.hpp"

namespace h5sparse {

void fill_elements(std::uint8_t* dest, std::uint64_t count, const std::uint8_t* fill, std::size_t element_size) {
  const std::size_t total = std::size_t(count) * element_size;
  if (total == 0) return;
  if (fill == nullptr || std::all_of(fill, fill + element_size, [&](std::uint8_t b) { return b == fill[0]; })) {
    std::memset(dest, fill ? fill[0] : 0, total);
    return;
  }
  // Doubling copies: log2(count) memcpy calls instead of one per element.
  std::memcpy(dest, fill, element_size);
  std::size_t done = element_size;
  while (done < total) {
    const std::size_t step = std::min(done, total - done);
    std::memcpy(dest + done, dest, step);
    done += step;
  }
}

bool pieces_ascending(const ChunkPiece* pieces, std::size_t count) {
  for (std::size_t i = 1; i < count; ++i)
    if (pieces[i].in_chunk_start < pieces[i - 1].in_chunk_start + pieces[i - 1].length) return false;
  return true;
}

namespace {

// Defined bits in [from, to) of the bitmap.
std::uint64_t count_defined(const std::uint64_t* words, std::uint64_t from, std::uint64_t to) {
  std::uint64_t n = 0;
  while (from < to) {
    const std::uint64_t wi = from >> 6;
    const unsigned lo = unsigned(from & 63);
    const std::uint64_t word_end = (wi + 1) << 6;
    const std::uint64_t end = std::min(to, word_end);
    std::uint64_t w = words[wi] >> lo;
    const unsigned width = unsigned(end - from);
    if (width < 64) w &= (std::uint64_t(1) << width) - 1;
    n += popcount64(w);
    from = end;
  }
  return n;
}

std::uint64_t low_bits(unsigned span) { return span >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << span) - 1; }

// Element width as a compile-time constant where it matters (short copies become moves).
// Every element of every piece is written once: stretches of whole defined words are copied,
// of empty ones filled, mixed words filled and then given their defined values. With Stream
// the destination gets streaming stores only (a mixed word is assembled in a local buffer).
template <std::size_t W, bool Stream>
void scatter_pieces(const std::uint64_t* words, const std::uint8_t* values, const ChunkPiece* pieces,
                    std::size_t count, std::size_t es, const std::uint8_t* fill, std::uint8_t* dest) {
  static_assert(!Stream || W != 0, "streaming needs a fixed element width");
  const std::size_t width = W ? W : es;
  auto put_fill = [&](std::uint8_t* at, std::uint64_t n) {
    if constexpr (Stream) stream_fill(at, n, fill, width);
    else fill_elements(at, n, fill, width);
  };
  auto put_copy = [&](std::uint8_t* at, const std::uint8_t* from, std::size_t bytes) {
    if constexpr (Stream) stream_copy(at, from, bytes);
    else std::memcpy(at, from, bytes);
  };
  // Streaming: a word's worth of fill values, copied whole (a constant-size copy, inlined)
  // into the local buffer where a mixed word is assembled.
  alignas(16) std::uint8_t fill_word[Stream ? 64 * (W ? W : 1) : 1];
  if constexpr (Stream) fill_elements(fill_word, 64, fill, width);
  // The bits of [i, min(end, word end)) of the bitmap, shifted down, and their count.
  auto bits_at = [&](std::uint64_t i, std::uint64_t end, unsigned* span) {
    const std::uint64_t stop = std::min(end, ((i >> 6) + 1) << 6);
    *span = unsigned(stop - i);
    return (words[i >> 6] >> (i & 63)) & low_bits(*span);
  };
  std::uint64_t position = 0;  // chunk element up to which `values` has been consumed
  const std::uint8_t* v = values;
  for (std::size_t p = 0; p < count; ++p) {
    const ChunkPiece& piece = pieces[p];
    const std::uint64_t start = piece.in_chunk_start, end = start + piece.length;
    v += count_defined(words, position, start) * width;
    std::uint8_t* out = dest + piece.source * width;  // the piece's first element
    for (std::uint64_t i = start; i < end;) {
      unsigned span = 0;
      std::uint64_t w = bits_at(i, end, &span);
      std::uint8_t* at = out + (i - start) * width;
      if (w == 0 || w == low_bits(span)) {  // a stretch of words all empty or all defined
        const std::uint64_t same = w;
        std::uint64_t next = i + span;
        for (unsigned s = 0; next < end; next += s) {
          const std::uint64_t x = bits_at(next, end, &s);
          if (x != (same ? low_bits(s) : 0)) break;
        }
        if (same) {
          put_copy(at, v, std::size_t(next - i) * width);
          v += (next - i) * width;
        } else {
          put_fill(at, next - i);
        }
        i = next;
        continue;
      }
      if constexpr (Stream) {
        alignas(16) std::uint8_t word[64 * (W ? W : 1)];
        std::memcpy(word, fill_word, sizeof word);
        while (w) {
          std::memcpy(word + std::size_t(__builtin_ctzll(w)) * width, v, width);
          v += width;
          w &= w - 1;
        }
        stream_copy(at, word, span * width);
      } else {
        fill_elements(at, span, fill, width);
        while (w) {
          std::memcpy(at + std::size_t(__builtin_ctzll(w)) * width, v, W ? W : es);
          v += width;
          w &= w - 1;
        }
      }
      i += span;
    }
    position = end;
  }
}

template <bool Stream>
void scatter_fixed(const std::uint64_t* words, const std::uint8_t* values, const ChunkPiece* pieces,
                   std::size_t count, std::size_t es, const std::uint8_t* fill, std::uint8_t* dest) {
  switch (es) {
    case 1: scatter_pieces<1, Stream>(words, values, pieces, count, es, fill, dest); break;
    case 2: scatter_pieces<2, Stream>(words, values, pieces, count, es, fill, dest); break;
    case 4: scatter_pieces<4, Stream>(words, values, pieces, count, es, fill, dest); break;
    case 8: scatter_pieces<8, Stream>(words, values, pieces, count, es, fill, dest); break;
    default: scatter_pieces<0, false>(words, values, pieces, count, es, fill, dest); break;
  }
}

}  // namespace

void scatter_chunk(const ChunkSelection& defined, const std::uint8_t* values, const ChunkPiece* pieces,
                   std::size_t count, std::size_t element_size, const std::uint8_t* fill, std::uint8_t* dest,
                   bool streaming) {
  const std::uint64_t* words = defined.words().data();
  if (streaming)
    scatter_fixed<true>(words, values, pieces, count, element_size, fill, dest);
  else
    scatter_fixed<false>(words, values, pieces, count, element_size, fill, dest);
}

void fill_pieces(const ChunkPiece* pieces, std::size_t count, std::size_t element_size, const std::uint8_t* fill,
                 std::uint8_t* dest, bool streaming) {
  for (std::size_t p = 0; p < count; ++p) {
    std::uint8_t* at = dest + pieces[p].source * element_size;
    if (streaming)
      stream_fill(at, pieces[p].length, fill, element_size);
    else
      fill_elements(at, pieces[p].length, fill, element_size);
  }
}

}  // namespace h5sparse
