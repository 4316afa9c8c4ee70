// The "Elias-Fano offsets" selection encoding (tag 7, docs/FORMAT.md): the sorted offsets of a
// chunk's defined elements split into `l` low bits, packed, and a high part written in unary
// as a bitmap (P. Elias 1974, R. Fano 1971; the layout of S. Vigna, "Quasi-succinct indices",
// 2013). About as small as the Rice-coded gaps (tag 6) of the same offsets, it can be entered
// anywhere: the elements of a range of offsets (a line of the chunk, a column's element in each
// line) are found by skipping whole words of the high bitmap, without decoding those before.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "h5sparse/cpu_features.hpp"
#include "h5sparse/selection_codec.hpp"

namespace h5sparse {

/// The largest number of low bits a writer uses and a reader accepts.
constexpr unsigned kMaxEliasFanoLowBits = 32;

/// The number of low bits giving the fewest bytes for `count` (> 0) offsets up to `last`.
unsigned elias_fano_low_bits(std::uint64_t last, std::uint64_t count);

/// The body size (low-bits byte, low bits, high bitmap; not the tag or count) for `count`
/// (> 0) offsets up to `last` with `low_bits`.
std::uint64_t elias_fano_body_size(std::uint64_t last, std::uint64_t count, unsigned low_bits);

namespace detail {
// kNthBitOfByte.at[b][k]: the place of the (k+1)-th set bit of byte b (8 where it has fewer).
struct NthBitOfByte {
  std::uint8_t at[256][8];
  constexpr NthBitOfByte() : at() {
    for (unsigned b = 0; b < 256; ++b) {
      unsigned k = 0;
      for (unsigned i = 0; i < 8; ++i)
        if (b >> i & 1) at[b][k++] = std::uint8_t(i);
      for (; k < 8; ++k) at[b][k] = 8;
    }
  }
};
inline constexpr NthBitOfByte kNthBitOfByte{};
}  // namespace detail

/// The place of the z-th (from 1) zero-bit of `bits`, which has z or more: halves, quarters and
/// eighths by their counts, then a table of the byte's bits (no loop whose count the branch
/// predictor would have to guess).
struct SelectByCounts {
  __attribute__((always_inline)) static unsigned nth_zero(std::uint64_t bits, unsigned z) noexcept {
    std::uint64_t zeros = ~bits;
    unsigned base = 0;
    for (unsigned half : {32u, 16u, 8u}) {
      const unsigned here = unsigned(__builtin_popcountll(zeros & ((std::uint64_t(1) << half) - 1)));
      if (here < z) z -= here, zeros >>= half, base += half;
    }
    return base + detail::kNthBitOfByte.at[zeros & 0xff][z - 1];
  }
};

#ifdef H5SPARSE_BMI2_KERNELS
/// The same with BMI2's PDEP, one bit deposited on the z-th zero: about a quarter off a range
/// of a gene's column. Only where PDEP is fast (cpu_has_fast_pdep()); written as an asm
/// statement so that it inlines into code of any target (a target attribute would stop that).
struct SelectByPdep {
  __attribute__((always_inline)) static unsigned nth_zero(std::uint64_t bits, unsigned z) noexcept {
    std::uint64_t deposited;
    __asm__("pdepq %2, %1, %0" : "=r"(deposited) : "r"(std::uint64_t(1) << (z - 1)), "r"(~bits));
    return unsigned(__builtin_ctzll(deposited));
  }
};
#endif

/// Writes the body for `count` ascending distinct offsets given one by one to add().
class EliasFanoWriter {
 public:
  EliasFanoWriter(std::uint64_t last, std::uint64_t count, unsigned low_bits, Bytes& out);
  void add(std::uint64_t offset) noexcept;

 private:
  std::uint8_t* low_;
  std::uint8_t* high_;
  unsigned l_;
  std::uint64_t i_ = 0;
};

/// Reads a body of `size` bytes holding `count` offsets of a chunk of `n` elements. The
/// constructor checks the sizes, the padding bits and the number of high one-bits (else
/// Error(corrupt_data)); every offset handed out is checked to lie inside the chunk and to
/// follow the one before it.
class EliasFanoReader {
 public:
  EliasFanoReader(const std::uint8_t* body, std::size_t size, std::uint64_t count, std::uint64_t n);

  /// Calls f(offset) for every offset, ascending.
  template <typename F>
  void each(F&& f) const;

  /// Calls sink.offset(offset) for the offsets inside `ranges` (ascending, disjoint), and after
  /// each range holding some sink.run(rank, count): the place of its first among all the
  /// chunk's offsets (its value's place in section 1) and how many it holds, whose places
  /// follow. Inlined into its caller, whose target features (POPCNT) it then uses; `Select`
  /// finds a zero-bit in a word (SelectByPdep only where cpu_has_fast_pdep()).
  template <typename Select = SelectByCounts, typename Sink>
  __attribute__((always_inline)) void each_in(const std::vector<OffsetRange>& ranges, Sink& sink) const;

  std::uint64_t count() const noexcept { return count_; }

 private:
  static std::uint64_t load(const std::uint8_t* p, std::size_t available) noexcept;  // little-endian
  // From a word's start, whole words while the zero-bits to skip pass them: a load and a count
  // a word (a row of a chunk far below the last range is crossed at memory speed).
  __attribute__((always_inline)) void skip_words(std::uint64_t& position, std::uint64_t& rank,
                                                 std::uint64_t& zeros) const noexcept {
    std::uint64_t w = position >> 6;
    for (const std::uint64_t whole = high_size_ / 8; w < whole; ++w) {
      std::uint64_t word;
      std::memcpy(&word, high_bytes_ + w * 8, 8);  // a count: the byte order does not matter
      const unsigned ones = unsigned(__builtin_popcountll(word));
      if (64 - ones >= zeros) break;
      zeros -= 64 - ones;
      rank += ones;
    }
    position = w << 6;
  }
  std::uint64_t low(std::uint64_t i) const noexcept {
    const std::uint64_t bit = i * l_;
    const std::size_t byte = std::size_t(bit >> 3);
    return l_ == 0 ? 0 : load(low_bytes_ + byte, low_size_ - byte) >> (bit & 7) & ((std::uint64_t(1) << l_) - 1);
  }
  std::uint64_t high_word(std::uint64_t w) const noexcept {  // 64 bits of the high bitmap
    return load(high_bytes_ + w * 8, high_size_ - std::size_t(w * 8));
  }
  [[noreturn]] static void corrupt(const char* what);
  void check(std::uint64_t offset, std::uint64_t previous, bool first) const {
    if (offset >= n_ || (!first && offset <= previous)) corrupt("offsets outside the chunk or not ascending");
  }

  const std::uint8_t* low_bytes_;
  const std::uint8_t* high_bytes_;
  std::size_t low_size_, high_size_;
  std::uint64_t count_, n_, high_bits_;
  unsigned l_;
};

inline std::uint64_t EliasFanoReader::load(const std::uint8_t* p, std::size_t available) noexcept {
  std::uint64_t v = 0;
  if (available >= 8) {
    std::memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
  }
  for (std::size_t b = 0; b < available; ++b) v |= std::uint64_t(p[b]) << (8 * b);
  return v;
}

template <typename F>
void EliasFanoReader::each(F&& f) const {
  std::uint64_t i = 0, previous = 0;
  for (std::uint64_t w = 0; w * 64 < high_bits_; ++w) {
    for (std::uint64_t bits = high_word(w); bits; bits &= bits - 1) {
      const std::uint64_t position = w * 64 + std::uint64_t(__builtin_ctzll(bits));
      const std::uint64_t offset = (position - i) << l_ | low(i);
      check(offset, previous, i == 0);
      f(offset);
      previous = offset;
      ++i;
    }
  }
}

template <typename Select, typename Sink>
__attribute__((always_inline)) inline void EliasFanoReader::each_in(const std::vector<OffsetRange>& ranges,
                                                                    Sink& sink) const {
  // A cursor in the high bitmap: `position`, with `rank` one-bits (offsets) before it; the
  // zero-bits before it, position - rank, are the high part of the offsets after it.
  std::uint64_t position = 0, rank = 0, previous = 0;
  for (const OffsetRange& r : ranges) {
    std::uint64_t found = 0;  // handed out: the last `found` offsets passed over
    // Skip to after the (r.first >> l)-th zero-bit: whole words by their counts of zeros.
    std::uint64_t zeros = (r.first >> l_) - std::min(r.first >> l_, position - rank);
    while (zeros > 0 && position < high_bits_) {
      const unsigned at = unsigned(position & 63);
      const std::uint64_t ones = high_word(position >> 6) >> at;
      const unsigned left = 64 - at;
      const unsigned zeros_here = left - unsigned(__builtin_popcountll(ones));
      if (zeros_here < zeros) {
        zeros -= zeros_here;
        rank += std::uint64_t(__builtin_popcountll(ones));
        position += left;
        skip_words(position, rank, zeros);
        continue;
      }
      const unsigned bit = Select::nth_zero(ones, unsigned(zeros));
      rank += std::uint64_t(__builtin_popcountll(ones & ((std::uint64_t(1) << bit) - 1)));
      position += bit + 1;
      zeros = 0;
    }
    // The offsets from there, one-bit by one-bit as each() takes them, while they stay below
    // the range's end; the first at or past it is left for the next range.
    if (position >= high_bits_) break;  // no offsets left for this range or the next
    std::uint64_t w = position >> 6;
    std::uint64_t bits = high_word(w) >> (position & 63) << (position & 63);
    // An empty bucket holding the range's end ends it here (a column in a row, most often).
    if (!(bits >> (position & 63) & 1) && (position - rank + 1) << l_ >= r.end) goto next_range;
    while (true) {
      while (bits == 0) {
        if (++w * 64 >= high_bits_) {
          position = high_bits_;
          goto next_range;
        }
        bits = high_word(w);
      }
      position = w * 64 + unsigned(__builtin_ctzll(bits));
      const std::uint64_t high = (position - rank) << l_;
      if (high >= r.end) break;  // a later bucket: its low bits need not be read
      const std::uint64_t offset = high | low(rank);
      if (offset >= r.end) break;
      check(offset, previous, rank == 0);  // every offset passed over, not only those handed out
      if (offset >= r.first) {
        sink.offset(offset);
        ++found;
      }
      previous = offset;
      ++rank;
      bits &= bits - 1;
    }
  next_range:
    if (found) sink.run(rank - found, found);
  }
}

}  // namespace h5sparse
