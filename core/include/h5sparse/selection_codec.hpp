// Section 0 of a structured chunk: which elements of a chunk are defined. In memory a chunk's
// selection is a bitmap over the chunk's elements in row-major order; on disk it is one of
// several encodings, chosen per chunk by size (docs/FORMAT.md, "Encoded selection").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "h5sparse/codecs.hpp"

namespace h5sparse {

/// Encoding tags: the first byte of an encoded selection. Values never change meaning.
enum class SelectionEncoding : std::uint8_t {
  empty = 0,    ///< no element defined; nothing follows
  all = 1,      ///< every element defined; nothing follows
  bitmap = 2,   ///< ceil(n/8) bytes, element i at bit i%8 of byte i/8
  offsets = 3,  ///< varint count, then varint gaps between sorted linear offsets
  runs = 4,     ///< varint count, then (varint gap, varint length-1) per run
  blocks = 5,   ///< varint count, then per block rank x (varint start, varint extent-1)
  rice_offsets = 6,  ///< varint count, Rice parameter k, then the gaps of `offsets` Rice-coded
  elias_fano = 7,    ///< varint count, low-bit count l, the offsets' low bits, their high parts in unary
};

/// The defined elements of one chunk, as a bitmap over `element_count` elements.
class ChunkSelection {
 public:
  ChunkSelection() = default;
  explicit ChunkSelection(std::uint64_t element_count)
      : count_(element_count), words_((element_count + 63) / 64, 0) {}

  std::uint64_t element_count() const noexcept { return count_; }
  bool test(std::uint64_t i) const noexcept { return words_[i >> 6] >> (i & 63) & 1; }
  void set(std::uint64_t i) noexcept { words_[i >> 6] |= std::uint64_t(1) << (i & 63); }
  void reset(std::uint64_t i) noexcept { words_[i >> 6] &= ~(std::uint64_t(1) << (i & 63)); }
  void set_range(std::uint64_t first, std::uint64_t length) noexcept;
  void set_word(std::uint64_t w, std::uint64_t bits) noexcept { words_[w] = bits; }
  /// The bit words (element i at bit i%64 of word i/64), for bulk writers.
  std::uint64_t* word_data() noexcept { return words_.data(); }
  /// Number of defined elements.
  std::uint64_t defined_count() const noexcept;
  bool none() const noexcept;
  bool all() const noexcept;

  ChunkSelection& operator|=(const ChunkSelection& other) noexcept;
  /// Removes every element of `other`.
  ChunkSelection& subtract(const ChunkSelection& other) noexcept;
  bool operator==(const ChunkSelection& other) const noexcept {
    return count_ == other.count_ && words_ == other.words_;
  }

  /// Calls f(first, length) for every maximal run of defined elements, in order.
  template <typename F>
  void for_each_run(F&& f) const;

  const std::vector<std::uint64_t>& words() const noexcept { return words_; }

 private:
  std::uint64_t count_ = 0;
  std::vector<std::uint64_t> words_;
};

/// Encodes with the smallest encoding (ties go to the lower tag). `chunk_dims` (row-major,
/// rank 1-32) lets the block encoding describe rectangles.
Bytes encode_selection(const ChunkSelection& selection, const std::vector<std::uint64_t>& chunk_dims);

/// encode_selection of the selection of `count` ascending distinct offsets: the same bytes,
/// with work proportional to the offsets where they are few (one per 64 elements or fewer).
Bytes encode_selection(const std::uint32_t* offsets, std::size_t count, const std::vector<std::uint64_t>& chunk_dims);

/// The bitmap of `count` ascending distinct offsets below `element_count`.
ChunkSelection selection_of(const std::uint32_t* offsets, std::size_t count, std::uint64_t element_count);

/// Encodes with a given encoding (for tests and for callers that pin one).
Bytes encode_selection_as(SelectionEncoding encoding, const ChunkSelection& selection,
                          const std::vector<std::uint64_t>& chunk_dims);

/// Decodes and validates: throws Error(corrupt_data) for an unknown tag, truncated input,
/// trailing bytes, offsets or blocks outside the chunk, overlapping or unsorted entries.
/// `defined`, when given, receives the number of defined elements (known from the encoding for
/// most tags, so callers need not count the bitmap again).
ChunkSelection decode_selection(const std::uint8_t* data, std::size_t size,
                                const std::vector<std::uint64_t>& chunk_dims, std::uint64_t* defined = nullptr);

/// An ascending, half-open range [first, end) of offsets in a chunk.
struct OffsetRange {
  std::uint64_t first, end;
};

/// Consecutive ranks (places among a chunk's defined elements: their values' places in section
/// 1) of `count` elements found together.
struct RankRun {
  std::uint64_t rank, count;
};

/// The defined elements of an encoded selection inside `ranges` (ascending, disjoint): their
/// offsets, ascending, and their ranks as runs, one a range holding some (the elements of one
/// range have consecutive ranks, so a range's values are one copy), replacing the vectors'
/// content. Returns the
/// number of defined elements. Elias-Fano offsets (tag 7) are entered at each range; the other
/// encodings are decoded whole first. The checks of decode_selection, but for tag 7 those of
/// the offsets passed over only (the rest is not read; the chunk's checksums cover it).
std::uint64_t decode_selection_in(const std::uint8_t* data, std::size_t size, const std::vector<std::uint64_t>& chunk_dims,
                                  const std::vector<OffsetRange>& ranges, std::vector<std::uint32_t>& offsets,
                                  std::vector<RankRun>& runs);

/// decode_selection into ascending offsets (replacing `offsets`' content), with the same
/// checks; work proportional to the defined elements for the offsets, runs and Rice encodings.
/// Chunks of more than 2^32 elements: Error(unsupported).
void decode_selection_offsets(const std::uint8_t* data, std::size_t size, const std::vector<std::uint64_t>& chunk_dims,
                              std::vector<std::uint32_t>& offsets);

template <typename F>
void ChunkSelection::for_each_run(F&& f) const {
  std::uint64_t i = 0;
  while (i < count_) {
    const std::uint64_t word = words_[i >> 6] >> (i & 63);
    if (word == 0) {  // skip the rest of this word
      i = (i | 63) + 1;
      continue;
    }
    i += std::uint64_t(__builtin_ctzll(word));
    if (i >= count_) break;
    const std::uint64_t start = i;
    while (i < count_) {
      const std::uint64_t ones = ~(words_[i >> 6] >> (i & 63));
      const std::uint64_t step = ones == 0 ? 64 - (i & 63) : std::uint64_t(__builtin_ctzll(ones));
      const std::uint64_t limit = 64 - (i & 63);
      i += step < limit ? step : limit;
      if (step < limit) break;
    }
    if (i > count_) i = count_;
    f(start, i - start);
  }
}

}  // namespace h5sparse
