#include "h5sparse/chunk_scatter.hpp"

#include <algorithm>
#include <cstring>

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
    n += std::uint64_t(__builtin_popcountll(w));
    from = end;
  }
  return n;
}

// Element width as a compile-time constant where it matters (short copies become moves).
template <std::size_t W>
void scatter_pieces(const std::uint64_t* words, const std::uint8_t* values, const ChunkPiece* pieces,
                    std::size_t count, std::size_t es, std::uint8_t* dest) {
  const std::size_t width = W ? W : es;
  std::uint64_t position = 0;  // chunk element up to which `values` has been consumed
  const std::uint8_t* v = values;
  for (std::size_t p = 0; p < count; ++p) {
    const ChunkPiece& piece = pieces[p];
    const std::uint64_t start = piece.in_chunk_start, end = start + piece.length;
    v += count_defined(words, position, start) * width;
    std::uint8_t* out = dest + piece.source * width;  // the piece's first element
    for (std::uint64_t i = start; i < end;) {
      const std::uint64_t wi = i >> 6;
      const unsigned lo = unsigned(i & 63);
      const std::uint64_t stop = std::min(end, (wi + 1) << 6);
      std::uint64_t w = words[wi] >> lo;
      const unsigned span = unsigned(stop - i);
      if (span < 64) w &= (std::uint64_t(1) << span) - 1;
      if (span == 64 && w == ~std::uint64_t(0)) {
        std::memcpy(out + (i - start) * width, v, 64 * width);
        v += 64 * width;
      } else {
        while (w) {
          const std::uint64_t k = i + std::uint64_t(__builtin_ctzll(w));
          std::memcpy(out + (k - start) * width, v, W ? W : es);
          v += width;
          w &= w - 1;
        }
      }
      i = stop;
    }
    position = end;
  }
}

}  // namespace

void scatter_defined(const StructuredChunk& chunk, const ChunkPiece* pieces, std::size_t count,
                     std::size_t element_size, std::uint8_t* dest) {
  const std::uint64_t* words = chunk.defined.words().data();
  const std::uint8_t* values = chunk.values.data();
  switch (element_size) {
    case 1: scatter_pieces<1>(words, values, pieces, count, element_size, dest); break;
    case 2: scatter_pieces<2>(words, values, pieces, count, element_size, dest); break;
    case 4: scatter_pieces<4>(words, values, pieces, count, element_size, dest); break;
    case 8: scatter_pieces<8>(words, values, pieces, count, element_size, dest); break;
    default: scatter_pieces<0>(words, values, pieces, count, element_size, dest); break;
  }
}

}  // namespace h5sparse
