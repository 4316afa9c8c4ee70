#include "h5sparse/chunk_scatter.hpp"

#include <algorithm>
#include <cstring>

#include "h5sparse/bits.hpp"

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

// Element width as a compile-time constant where it matters (short copies become moves).
// Every element of every piece is written once: whole defined words are copied, empty ones
// filled, mixed ones filled and then given their defined values.
template <std::size_t W>
void scatter_pieces(const std::uint64_t* words, const std::uint8_t* values, const ChunkPiece* pieces,
                    std::size_t count, std::size_t es, const std::uint8_t* fill, std::uint8_t* dest) {
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
      std::uint8_t* at = out + (i - start) * width;
      if (w == 0) {  // nothing defined: fill up to the next word with a defined element, at once
        std::uint64_t next = stop;
        while (next < end && words[next >> 6] == 0) next = std::min(end, next + 64);
        fill_elements(at, next - i, fill, width);
        i = next;
        continue;
      }
      if (w == (span == 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << span) - 1)) {
        std::memcpy(at, v, span * width);
        v += span * width;
      } else {
        fill_elements(at, span, fill, width);
        while (w) {
          std::memcpy(at + std::size_t(__builtin_ctzll(w)) * width, v, W ? W : es);
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

void scatter_chunk(const ChunkSelection& defined, const std::uint8_t* values, const ChunkPiece* pieces,
                   std::size_t count, std::size_t element_size, const std::uint8_t* fill, std::uint8_t* dest) {
  const std::uint64_t* words = defined.words().data();
  switch (element_size) {
    case 1: scatter_pieces<1>(words, values, pieces, count, element_size, fill, dest); break;
    case 2: scatter_pieces<2>(words, values, pieces, count, element_size, fill, dest); break;
    case 4: scatter_pieces<4>(words, values, pieces, count, element_size, fill, dest); break;
    case 8: scatter_pieces<8>(words, values, pieces, count, element_size, fill, dest); break;
    default: scatter_pieces<0>(words, values, pieces, count, element_size, fill, dest); break;
  }
}

void fill_pieces(const ChunkPiece* pieces, std::size_t count, std::size_t element_size, const std::uint8_t* fill,
                 std::uint8_t* dest) {
  for (std::size_t p = 0; p < count; ++p)
    fill_elements(dest + pieces[p].source * element_size, pieces[p].length, fill, element_size);
}

}  // namespace h5sparse
