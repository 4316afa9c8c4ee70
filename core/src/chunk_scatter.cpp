#include "h5sparse/chunk_scatter.hpp"

#include <algorithm>
#include <cstring>

#include "h5sparse/bits.hpp"
#include "h5sparse/cpu_features.hpp"
#include "h5sparse/stream_store.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define H5SPARSE_X86_KERNELS 1
#include <immintrin.h>
#endif

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

// A chunk's bitmap, with the defined count before each word when the caller has it (a cached
// chunk's: a piece deep in the chunk then finds its first value without counting every word
// before it, which was a third of a point read).
struct DefinedBits {
  const std::uint64_t* words;
  const std::uint32_t* ranks;  // null: counted

  std::uint64_t before(std::uint64_t i) const {  // with ranks: defined elements below i
    const std::uint64_t w = i >> 6;
    return (i & 63) == 0 ? ranks[w] : ranks[w] + popcount64(words[w] & low_bits(unsigned(i & 63)));
  }
  std::uint64_t between(std::uint64_t from, std::uint64_t to) const {
    return ranks ? before(to) - before(from) : count_defined(words, from, to);
  }
};

#ifdef H5SPARSE_X86_KERNELS
// Expanding 8 elements of 4 bytes (or 4 of 8) from the next values by a mask byte (nibble):
// byte j of an entry is 0x80 | the lane of element j's value among the next 8 lanes when
// element j is defined, else 0. Sign-extended to 32-bit lanes (one instruction from memory),
// the low bits pick the lane for the permutation and the sign bit tells blendv to keep it over
// the fill value. 2 KiB and 128 bytes.
struct ExpandTables {
  alignas(64) std::uint8_t lanes4[256][8];
  alignas(64) std::uint8_t lanes8[16][8];
  ExpandTables() {
    for (unsigned m = 0; m < 256; ++m)
      for (unsigned j = 0, rank = 0; j < 8; ++j) lanes4[m][j] = (m >> j & 1) ? std::uint8_t(0x80 | rank++) : 0;
    for (unsigned m = 0; m < 16; ++m)
      for (unsigned j = 0, rank = 0; j < 4; ++j) {
        const bool set = m >> j & 1;
        lanes8[m][2 * j] = set ? std::uint8_t(0x80 | (2 * rank)) : 0;
        lanes8[m][2 * j + 1] = set ? std::uint8_t(0x80 | (2 * rank + 1)) : 0;
        rank += set;
      }
  }
};
const ExpandTables kExpand;

// One vector of 8 lanes at `to`: as described above, from the 8 lanes at `v`. Stream: a
// streaming store, of 32 bytes when Wide (`to` 32-byte aligned), else of two 16.
template <bool Stream, bool Wide>
__attribute__((target("avx2,popcnt"))) inline void expand8_avx2(const std::uint8_t* entry, const std::uint8_t* v,
                                                                 __m256i fill, std::uint8_t* to) {
  const __m256i lanes = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(entry)));
  const __m256i values = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v)), lanes);
  const __m256i x = _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(fill), _mm256_castsi256_ps(values), _mm256_castsi256_ps(lanes)));
  if constexpr (Stream && Wide) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(to), x);
  } else if constexpr (Stream) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(to), _mm256_castsi256_si128(x));
    _mm_stream_si128(reinterpret_cast<__m128i*>(to + 16), _mm256_extracti128_si256(x, 1));
  } else {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), x);
  }
}

// `words` whole 64-element words of the bitmap, expanded into 64 * words elements at `at`:
// each defined element gets the next value, the others the fill value (`fill`, W bytes
// repeated). Reads whole vectors of values: the caller leaves 32 bytes after the last value
// this takes. Stream: streaming stores (`at` 32-byte aligned when Wide, else 16). Returns the
// position after the values taken.
template <std::size_t W, bool Stream, bool Wide>
__attribute__((target("avx2,popcnt"))) const std::uint8_t* expand_words_avx2(const std::uint64_t* bits,
                                                                               std::size_t words,
                                                                               const std::uint8_t* v, __m256i fill,
                                                                               std::uint8_t* at) {
  for (std::size_t k = 0; k < words; ++k, at += 64 * W) {
    const std::uint64_t w = bits[k];
#pragma GCC unroll 8
    for (unsigned b = 0; b < 8; ++b) {
      const unsigned m = unsigned(w >> (8 * b)) & 0xFF;
      if constexpr (W == 4) {
        expand8_avx2<Stream, Wide>(kExpand.lanes4[m], v, fill, at + 32 * b);
        v += 4 * unsigned(_mm_popcnt_u32(m));
      } else {
        expand8_avx2<Stream, Wide>(kExpand.lanes8[m & 15], v, fill, at + 64 * b);
        v += 8 * unsigned(_mm_popcnt_u32(m & 15));
        expand8_avx2<Stream, Wide>(kExpand.lanes8[m >> 4], v, fill, at + 64 * b + 32);
        v += 8 * unsigned(_mm_popcnt_u32(m >> 4));
      }
    }
  }
  return v;
}

// expand_words_avx2 for the destination's alignment, with the fill value in every lane.
template <std::size_t W, bool Stream>
__attribute__((target("avx2,popcnt"))) const std::uint8_t* expand_words(const std::uint64_t* bits, std::size_t words,
                                                                          const std::uint8_t* v,
                                                                          const std::uint8_t* fill, std::uint8_t* at) {
  __m256i f;
  if constexpr (W == 4) {
    std::int32_t x;
    std::memcpy(&x, fill, 4);
    f = _mm256_set1_epi32(x);
  } else {
    long long x;
    std::memcpy(&x, fill, 8);
    f = _mm256_set1_epi64x(x);
  }
  if ((reinterpret_cast<std::uintptr_t>(at) & 31) == 0) return expand_words_avx2<W, Stream, true>(bits, words, v, f, at);
  return expand_words_avx2<W, Stream, false>(bits, words, v, f, at);
}
#endif

// Element width as a compile-time constant where it matters (short copies become moves).
// Every element of every piece is written once: stretches of whole defined words are copied,
// of empty ones filled, mixed words filled and then given their defined values. With Stream
// the destination gets streaming stores only (a mixed word is assembled in a local buffer).
template <std::size_t W, bool Stream>
class PieceScatter {
  static_assert(!Stream || W != 0, "streaming needs a fixed element width");

 public:
  PieceScatter(DefinedBits bits, const std::uint8_t* values, std::size_t values_size, std::size_t es,
               const std::uint8_t* fill, bool vectors)
      : bits_(bits), words_(bits.words), values_end_(values + values_size), width_(W ? W : es),
        fill_(fill), v_(values) {
    // Streaming: a word's worth of fill values, copied whole (a constant-size copy, inlined)
    // into the local buffer where a mixed word is assembled.
    if constexpr (Stream) fill_elements(fill_word_, 64, fill, width_);
    // The vector kernel writes 8 elements per step whatever their bits, the word loop does a
    // store per defined element: the kernel wins from about 4 defined elements a word.
    avx2_ = vectors && cpu_has_avx2();
    if (fill) std::memcpy(fill_bytes_, fill, W ? W : 1);  // the fill value as W bytes (zeros when null)
  }

  void piece(const ChunkPiece& piece, std::uint8_t* dest) {
    const std::uint64_t start = piece.in_chunk_start, end = start + piece.length;
    v_ += bits_.between(position_, start) * width_;
    std::uint8_t* out = dest + piece.source * width_;  // the piece's first element
    for (std::uint64_t i = start; i < end;) {
      unsigned span = 0;
      const std::uint64_t w = bits_at(i, end, &span);
      std::uint8_t* at = out + (i - start) * width_;
      if (w == 0 || w == low_bits(span)) {
        i = uniform_stretch(i, end, span, w != 0, at);
        continue;
      }
      if (std::uint64_t done = vector_words(i, end, span, at)) {
        i += done;
        continue;
      }
      mixed_word(w, span, at);
      i += span;
    }
    position_ = end;
  }

 private:
  // The bits of [i, min(end, word end)) of the bitmap, shifted down, and their count.
  std::uint64_t bits_at(std::uint64_t i, std::uint64_t end, unsigned* span) const {
    const std::uint64_t stop = std::min(end, ((i >> 6) + 1) << 6);
    *span = unsigned(stop - i);
    return (words_[i >> 6] >> (i & 63)) & low_bits(*span);
  }

  void put_fill(std::uint8_t* at, std::uint64_t n) const {
    if constexpr (Stream) stream_fill(at, n, fill_, width_);
    else fill_elements(at, n, fill_, width_);
  }

  void put_copy(std::uint8_t* at, const std::uint8_t* from, std::size_t bytes) const {
    if constexpr (Stream) stream_copy(at, from, bytes);
    else std::memcpy(at, from, bytes);
  }

  // A stretch of words all empty or all defined from element i: filled or copied whole.
  // Returns where it ends.
  std::uint64_t uniform_stretch(std::uint64_t i, std::uint64_t end, unsigned span, bool defined, std::uint8_t* at) {
    std::uint64_t next = i + span;
    for (unsigned s = 0; next < end; next += s) {
      const std::uint64_t x = bits_at(next, end, &s);
      if (x != (defined ? low_bits(s) : 0)) break;
    }
    if (defined) {
      put_copy(at, v_, std::size_t(next - i) * width_);
      v_ += (next - i) * width_;
    } else {
      put_fill(at, next - i);
    }
    return next;
  }

  // Whole mixed words (dense-ish selections): a vector permutation per 8 (W = 4) or 4 (W = 8)
  // elements instead of a store per defined element, streamed straight to `at`. Returns the
  // elements done (0: not applicable here).
  std::uint64_t vector_words([[maybe_unused]] std::uint64_t i, [[maybe_unused]] std::uint64_t end,
                             [[maybe_unused]] unsigned span, [[maybe_unused]] std::uint8_t* at) {
#ifdef H5SPARSE_X86_KERNELS
    if constexpr (W == 4 || W == 8) {
      if (!avx2_ || span != 64 || (Stream && (reinterpret_cast<std::uintptr_t>(at) & 15) != 0)) return 0;
      const std::uint64_t* first = words_ + (i >> 6);
      // Words whose values all lie 32 bytes or more before the end of the values.
      const std::size_t room = std::size_t(values_end_ - v_);
      std::size_t most = room > 32 ? (room - 32) / (64 * W) : 0;
      most = std::size_t(std::min<std::uint64_t>(most, (end - i) >> 6));
      std::size_t n = 0;
      while (n < most && first[n] != 0 && first[n] != ~std::uint64_t(0)) ++n;
      if (n == 0) return 0;
      v_ = expand_words<W, Stream>(first, n, v_, fill_bytes_, at);
      return 64 * n;
    }
#endif
    return 0;
  }

  // One word with defined and undefined elements: filled, then given its defined values.
  void mixed_word(std::uint64_t w, unsigned span, std::uint8_t* at) {
    if constexpr (Stream) {
      alignas(16) std::uint8_t word[64 * (W ? W : 1)];
      std::memcpy(word, fill_word_, sizeof word);
      for (; w; w &= w - 1, v_ += width_) std::memcpy(word + std::size_t(__builtin_ctzll(w)) * width_, v_, width_);
      stream_copy(at, word, span * width_);
    } else {
      fill_elements(at, span, fill_, width_);
      for (; w; w &= w - 1, v_ += width_) std::memcpy(at + std::size_t(__builtin_ctzll(w)) * width_, v_, W ? W : width_);
    }
  }

  const DefinedBits bits_;
  const std::uint64_t* const words_;
  const std::uint8_t* const values_end_;
  const std::size_t width_;
  const std::uint8_t* const fill_;
  bool avx2_ = false;
  std::uint8_t fill_bytes_[W ? W : 1] = {};
  alignas(16) std::uint8_t fill_word_[Stream ? 64 * (W ? W : 1) : 1];
  std::uint64_t position_ = 0;  // chunk element up to which the values have been consumed
  const std::uint8_t* v_;       // the next value
};

template <std::size_t W, bool Stream>
void scatter_pieces(DefinedBits bits, const std::uint8_t* values, std::size_t values_size,
                    const ChunkPiece* pieces, std::size_t count, std::size_t es, const std::uint8_t* fill,
                    std::uint8_t* dest, bool vectors) {
  PieceScatter<W, Stream> scatter(bits, values, values_size, es, fill, vectors);
  for (std::size_t p = 0; p < count; ++p) scatter.piece(pieces[p], dest);
}

template <bool Stream>
void scatter_fixed(DefinedBits words, const std::uint8_t* values, std::size_t values_size,
                   const ChunkPiece* pieces, std::size_t count, std::size_t es, const std::uint8_t* fill,
                   std::uint8_t* dest, bool vectors) {
  switch (es) {
    case 1: scatter_pieces<1, Stream>(words, values, values_size, pieces, count, es, fill, dest, vectors); break;
    case 2: scatter_pieces<2, Stream>(words, values, values_size, pieces, count, es, fill, dest, vectors); break;
    case 4: scatter_pieces<4, Stream>(words, values, values_size, pieces, count, es, fill, dest, vectors); break;
    case 8: scatter_pieces<8, Stream>(words, values, values_size, pieces, count, es, fill, dest, vectors); break;
    default: scatter_pieces<0, false>(words, values, values_size, pieces, count, es, fill, dest, vectors); break;
  }
}

}  // namespace

std::vector<std::uint32_t> defined_before_words(const ChunkSelection& defined) {
  const std::vector<std::uint64_t>& words = defined.words();
  std::vector<std::uint32_t> ranks(words.size() + 1);
  std::uint64_t n = 0;
  for (std::size_t w = 0; w < words.size(); ++w) {
    ranks[w] = std::uint32_t(n);
    n += popcount64(words[w]);
  }
  ranks[words.size()] = std::uint32_t(n);
  return ranks;
}

void scatter_chunk(const ChunkSelection& defined, const std::uint8_t* values, std::size_t values_size,
                   const ChunkPiece* pieces, std::size_t count, std::size_t element_size, const std::uint8_t* fill,
                   std::uint8_t* dest, bool streaming, const std::uint32_t* word_ranks) {
  const DefinedBits words{defined.words().data(), word_ranks};
  // The vector kernel for whole mixed words when the chunk averages 4 defined elements a word
  // (density 1/16) or more.
  const bool vectors = element_size && values_size / element_size * 16 >= defined.element_count();
  if (streaming)
    scatter_fixed<true>(words, values, values_size, pieces, count, element_size, fill, dest, vectors);
  else
    scatter_fixed<false>(words, values, values_size, pieces, count, element_size, fill, dest, vectors);
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
