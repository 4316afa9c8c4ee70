// Encoders and the validating decoder of section 0 (docs/FORMAT.md, "Encoded selection").
#include "h5sparse/selection_codec.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "h5sparse/bits.hpp"
#include "h5sparse/cpu_features.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/elias_fano.hpp"
#include "h5sparse/rice_offsets.hpp"
#include "h5sparse/varint.hpp"
#include "selection_walk.hpp"

namespace h5sparse {
namespace {

using detail::BitmapWalk;
using detail::ListWalk;

void put_varint(Bytes& out, std::uint64_t v) {
  std::uint8_t bytes[10];
  out.insert(out.end(), bytes, write_varint(bytes, v));
}

// Reads LEB128 varints with bounds and overflow checks. One-byte varints (gaps below 128, the
// common case of dense offsets) take an inline path: the general loop per element was half of
// a 10%-density read.
class VarintReader {
 public:
  VarintReader(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}
  std::uint64_t next() {
    if (p_ != end_ && *p_ < 0x80) return *p_++;
    return next_long();
  }
  bool done() const { return p_ == end_; }
  const std::uint8_t* position() const { return p_; }

 private:
  std::uint64_t next_long() {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      H5SPARSE_FAIL_IF(p_ == end_, ErrorCode::corrupt_data, "encoded selection is truncated");
      const std::uint8_t byte = *p_++;
      H5SPARSE_FAIL_IF(shift == 63 && byte > 1, ErrorCode::corrupt_data, "encoded selection: varint overflows 64 bits");
      v |= std::uint64_t(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return v;
    }
    throw Error(ErrorCode::corrupt_data, "encoded selection: varint longer than 10 bytes");
  }

  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

// Writes varints into a buffer of fixed capacity; `full()` once the encoding would reach
// `limit` bytes, after which the candidate is abandoned (another encoding is smaller).
class BoundedWriter {
 public:
  explicit BoundedWriter(std::size_t limit) : out_(limit + 10), limit_(limit) {}
  void put(std::uint64_t v) {
    if (size_ >= limit_) return;  // lost already: stop writing, keep `full()`
    size_ = std::size_t(write_varint(out_.data() + size_, v) - out_.data());
  }
  void put_byte(std::uint8_t b) {
    if (size_ < limit_) out_[size_++] = b;
  }
  bool full() const { return size_ >= limit_; }
  std::size_t size() const { return size_; }
  Bytes take() {
    out_.resize(size_);
    return std::move(out_);
  }

 private:
  Bytes out_;
  std::size_t size_ = 0;
  std::size_t limit_;
};

std::uint64_t element_count_of(const std::vector<std::uint64_t>& dims) {
  H5SPARSE_FAIL_IF(dims.empty() || dims.size() > 32, ErrorCode::invalid_argument, "chunk rank must be 1-32");
  std::uint64_t n = 1;
  for (std::uint64_t d : dims) {
    H5SPARSE_FAIL_IF(d == 0 || n > UINT64_MAX / d, ErrorCode::invalid_argument, "chunk dimensions are zero or too large");
    n *= d;
  }
  return n;
}

// The selection as one rectangle (start, extent per dimension) when it is exactly one.
template <typename Walk>
std::optional<std::vector<std::pair<std::uint64_t, std::uint64_t>>> as_single_block(
    const Walk& s, const std::vector<std::uint64_t>& dims) {
  const std::size_t rank = dims.size();
  if (rank == 0) return std::nullopt;  // also tells GCC that dims[rank - 1] below is in range
  std::vector<std::uint64_t> lo(rank, UINT64_MAX), hi(rank, 0);
  std::uint64_t defined = 0;
  s.each_run([&](std::uint64_t first, std::uint64_t length) {
    defined += length;
    for (std::uint64_t linear : {first, first + length - 1}) {
      std::uint64_t rest = linear;
      for (std::size_t d = rank; d-- > 0;) {
        const std::uint64_t c = rest % dims[d];
        rest /= dims[d];
        lo[d] = std::min(lo[d], c);
        hi[d] = std::max(hi[d], c);
      }
    }
  });
  if (defined == 0) return std::nullopt;
  std::uint64_t volume = 1;
  for (std::size_t d = 0; d < rank; ++d) volume *= hi[d] - lo[d] + 1;
  // Run endpoints bound every defined element along the last dimension only when runs do
  // not wrap rows; the volume check below rejects any other shape.
  if (volume != defined) return std::nullopt;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> block(rank);
  for (std::size_t d = 0; d < rank; ++d) block[d] = {lo[d], hi[d] - lo[d] + 1};
  // Verify: every defined element lies inside the box (with equal counts, the box is exactly
  // the selection). Checked per row segment of each run (a run may wrap rows), not per
  // element: per element it cost more than the rest of a one-row write together.
  const std::uint64_t row = dims[rank - 1];
  bool inside = true;
  s.each_run([&](std::uint64_t first, std::uint64_t length) {
    for (std::uint64_t pos = first, end = first + length; inside && pos < end;) {
      const std::uint64_t column = pos % row;
      const std::uint64_t segment = std::min(end - pos, row - column);
      if (column < lo[rank - 1] || column + segment - 1 > hi[rank - 1]) inside = false;
      std::uint64_t rest = pos / row;
      for (std::size_t d = rank - 1; d-- > 0;) {
        const std::uint64_t c = rest % dims[d];
        rest /= dims[d];
        if (c < lo[d] || c > hi[d]) inside = false;
      }
      pos += segment;
    }
  });
  if (!inside) return std::nullopt;
  return block;
}

void put_block(Bytes& out, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& block) {
  put_varint(out, 1);
  for (const auto& [start, extent] : block) {
    put_varint(out, start);
    put_varint(out, extent - 1);
  }
}

void fill_block(ChunkSelection& s, const std::vector<std::uint64_t>& dims,
                const std::vector<std::pair<std::uint64_t, std::uint64_t>>& block) {
  const std::size_t rank = dims.size();
  std::vector<std::uint64_t> index(rank, 0);  // position within the block, last dim excluded
  while (true) {
    std::uint64_t linear = 0;
    for (std::size_t d = 0; d < rank; ++d)
      linear = linear * dims[d] + block[d].first + (d + 1 < rank ? index[d] : 0);
    s.set_range(linear, block[rank - 1].second);
    std::size_t d = rank - 1;
    while (d-- > 0) {
      if (++index[d] < block[d].second) break;
      index[d] = 0;
    }
    if (d == std::size_t(-1)) return;
  }
}

}  // namespace

void ChunkSelection::set_range(std::uint64_t first, std::uint64_t length) noexcept {
  for (std::uint64_t i = first; i < first + length;) {
    if ((i & 63) == 0 && i + 64 <= first + length) {
      words_[i >> 6] = ~std::uint64_t(0);
      i += 64;
    } else {
      set(i++);
    }
  }
}

namespace {

// Set bits, and runs (set bits whose predecessor is clear), of a bitmap: for baseline x86-64,
// where empty and full words skip the (software) popcount, and with the POPCNT instruction
// where the CPU has it.
inline std::uint64_t count_set_body(const std::uint64_t* words, std::size_t n) {
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t w = words[i];
    count += w == 0 ? 0 : w == ~std::uint64_t(0) ? 64 : popcount64(w);
  }
  return count;
}

__attribute__((always_inline)) inline std::uint64_t count_runs_body(const std::uint64_t* words, std::size_t n) {
  std::uint64_t runs = 0, carry = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t w = words[i];
    const std::uint64_t starts = w & ~((w << 1) | carry);
    if (starts) runs += popcount64(starts);
    carry = w >> 63;
  }
  return runs;
}

#ifdef H5SPARSE_BMI2_KERNELS
H5SPARSE_TARGET_POPCNT std::uint64_t count_set_popcnt(const std::uint64_t* words, std::size_t n) {
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < n; ++i) count += std::uint64_t(__builtin_popcountll(words[i]));
  return count;
}

H5SPARSE_TARGET_POPCNT std::uint64_t count_runs_popcnt(const std::uint64_t* words, std::size_t n) {
  return count_runs_body(words, n);
}
#endif

}  // namespace

std::uint64_t count_set_bits(const std::uint64_t* words, std::size_t n) noexcept {
#ifdef H5SPARSE_BMI2_KERNELS
  if (cpu_has_popcnt()) return count_set_popcnt(words, n);
#endif
  return count_set_body(words, n);
}

std::uint64_t ChunkSelection::defined_count() const noexcept { return count_set_bits(words_.data(), words_.size()); }

bool ChunkSelection::none() const noexcept {
  for (std::uint64_t w : words_)
    if (w != 0) return false;
  return true;
}

bool ChunkSelection::all() const noexcept {
  // Bits past the last element are never set, so every word but the last must be full.
  const std::size_t full = std::size_t(count_ / 64);
  for (std::size_t i = 0; i < full; ++i)
    if (words_[i] != ~std::uint64_t(0)) return false;
  return count_ % 64 == 0 || words_[full] == (std::uint64_t(1) << (count_ % 64)) - 1;
}

ChunkSelection& ChunkSelection::operator|=(const ChunkSelection& other) noexcept {
  for (std::size_t i = 0; i < words_.size() && i < other.words_.size(); ++i) words_[i] |= other.words_[i];
  return *this;
}

ChunkSelection& ChunkSelection::subtract(const ChunkSelection& other) noexcept {
  for (std::size_t i = 0; i < words_.size() && i < other.words_.size(); ++i) words_[i] &= ~other.words_[i];
  return *this;
}

namespace {

// The offsets encoding when it is shorter than `limit` bytes (tag included), else nothing.
// Walks the set bits word by word; stops writing as soon as the limit is reached.
template <typename Walk>
Bytes encode_offsets(const Walk& s, std::uint64_t count, std::size_t limit) {
  BoundedWriter out(std::min<std::uint64_t>(limit, 12 + 10 * count));
  out.put_byte(std::uint8_t(SelectionEncoding::offsets));
  out.put(count);
  std::uint64_t next = 0;  // gap = offset - (previous offset + 1)
  s.each([&](std::uint64_t i) {
    out.put(i - next);
    next = i + 1;
    return !out.full();
  });
  if (out.full()) return {};
  return out.take();
}

// The rice offsets encoding of `count` (> 0) defined elements; `long_gaps` is set to the
// number of gaps of 128 and more.
std::uint64_t append_rice_gaps_of(const BitmapWalk& w, std::uint64_t count, Bytes& out) {
  return append_rice_gaps(w.s, count, out);
}
std::uint64_t append_rice_gaps_of(const ListWalk& w, std::uint64_t count, Bytes& out) {
  return append_rice_gaps(w.offsets, std::size_t(count), out);
}

template <typename Walk>
Bytes encode_rice_offsets(const Walk& s, std::uint64_t count, std::uint64_t& long_gaps) {
  Bytes out{std::uint8_t(SelectionEncoding::rice_offsets)};
  put_varint(out, count);
  long_gaps = append_rice_gaps_of(s, count, out);
  return out;
}

template <typename Walk>
Bytes encode_elias_fano(const Walk& s, std::uint64_t count) {
  Bytes out{std::uint8_t(SelectionEncoding::elias_fano)};
  put_varint(out, count);
  const std::uint64_t last = s.last();
  EliasFanoWriter writer(last, count, elias_fano_low_bits(last, count), out);
  s.each([&](std::uint64_t i) {
    writer.add(i);
    return true;
  });
  return out;
}

// The runs encoding when it is shorter than `limit` bytes, else nothing.
template <typename Walk>
Bytes encode_runs(const Walk& s, std::uint64_t runs, std::size_t limit) {
  BoundedWriter out(std::min<std::uint64_t>(limit, 12 + 20 * runs));
  out.put_byte(std::uint8_t(SelectionEncoding::runs));
  out.put(runs);
  std::uint64_t next = 0;  // gap = start - end of previous run
  s.each_run([&](std::uint64_t first, std::uint64_t length) {
    out.put(first - next);
    out.put(length - 1);
    next = first + length;
  });
  if (out.full()) return {};
  return out.take();
}

Bytes encode_bitmap(const ChunkSelection& s) {
  const std::size_t bytes = std::size_t((s.element_count() + 7) / 8);
  Bytes out(1 + bytes);
  out[0] = std::uint8_t(SelectionEncoding::bitmap);
  for (std::size_t i = 0; i < bytes; ++i) out[1 + i] = std::uint8_t(s.words()[i / 8] >> (8 * (i % 8)));
  return out;
}

// Number of runs (maximal stretches of defined elements): set bits whose predecessor is clear.
std::uint64_t count_runs(const ChunkSelection& s) {
  const std::vector<std::uint64_t>& words = s.words();
#ifdef H5SPARSE_BMI2_KERNELS
  if (cpu_has_popcnt()) return count_runs_popcnt(words.data(), words.size());
#endif
  return count_runs_body(words.data(), words.size());
}

// A cheap necessary condition for one rectangle: its extent along dimension 0, known from the
// first and last defined elements, divides the number of defined elements. It rejects almost
// every scattered selection before as_single_block walks it.
template <typename Walk>
bool may_be_single_block(const Walk& s, std::uint64_t n, std::uint64_t defined, const std::vector<std::uint64_t>& dims) {
  if (defined == 0) return false;
  const std::uint64_t first = s.first(), last = s.last();
  const std::uint64_t slice = n / dims[0];  // elements per index of dimension 0
  const std::uint64_t extent0 = last / slice - first / slice + 1;
  return defined % extent0 == 0;
}

}  // namespace

Bytes encode_selection_as(SelectionEncoding encoding, const ChunkSelection& s,
                          const std::vector<std::uint64_t>& dims) {
  H5SPARSE_FAIL_IF(element_count_of(dims) != s.element_count(), ErrorCode::invalid_argument,
          "selection size does not match the chunk dimensions");
  const BitmapWalk walk{s};
  switch (encoding) {
    case SelectionEncoding::empty:
      H5SPARSE_FAIL_IF(!s.none(), ErrorCode::invalid_argument, "selection is not empty");
      return Bytes{std::uint8_t(encoding)};
    case SelectionEncoding::all:
      H5SPARSE_FAIL_IF(!s.all(), ErrorCode::invalid_argument, "selection is not complete");
      return Bytes{std::uint8_t(encoding)};
    case SelectionEncoding::bitmap:
      return encode_bitmap(s);
    case SelectionEncoding::offsets:
      return encode_offsets(walk, s.defined_count(), SIZE_MAX);
    case SelectionEncoding::rice_offsets: {
      const std::uint64_t count = s.defined_count();
      if (count == 0) return Bytes{std::uint8_t(encoding), 0, 0};
      std::uint64_t long_gaps;
      return encode_rice_offsets(walk, count, long_gaps);
    }
    case SelectionEncoding::elias_fano: {
      const std::uint64_t count = s.defined_count();
      H5SPARSE_FAIL_IF(count == 0, ErrorCode::invalid_argument, "an empty selection has no Elias-Fano encoding");
      return encode_elias_fano(walk, count);
    }
    case SelectionEncoding::runs:
      return encode_runs(walk, count_runs(s), SIZE_MAX);
    case SelectionEncoding::blocks: {
      const auto block = as_single_block(walk, dims);
      H5SPARSE_FAIL_IF(!block, ErrorCode::invalid_argument, "selection is not one block");
      Bytes out{std::uint8_t(encoding)};
      put_block(out, *block);
      return out;
    }
  }
  throw Error(ErrorCode::invalid_argument, "unknown selection encoding");
}

namespace {

// The smallest encoding of a selection of n elements, `defined` of them in `runs` runs, with
// neither none nor all defined; `bitmap` writes the bitmap encoding (called only when it wins).
// Candidates in tag order, a later one must be strictly smaller. The bitmap's size is known
// without building it. Each candidate is tried only when its lower bound (tag + count + a
// byte per offset, two per long gap or per run; Rice: the best parameter's bits for the
// gaps' sum) is below the limit, and abandoned as soon as it grows to it: no losing encoding
// is built in full. The Rice-coded offsets (tag 6) are built first when their bound beats
// the bitmap's size and the runs' bound (scattered selections, where they usually win), so
// that the others need only beat them; else last (contiguous stretches, where the runs or a
// block win and Rice, one bit per element at least, rarely needs building at all).
template <typename Walk, typename Bitmap>
Bytes encode_smallest(const Walk& s, std::uint64_t n, std::uint64_t defined, std::uint64_t runs,
                      const std::vector<std::uint64_t>& dims, Bitmap&& bitmap) {
  const std::size_t bitmap_size = std::size_t(1 + (n + 7) / 8);
  const std::uint64_t runs_bound = 1 + varint_size(runs) + 2 * runs;
  const std::uint64_t rice_bound = 2 + varint_size(defined) + (least_rice_bits(s.last(), defined) + 7) / 8;
  const bool rice_first = rice_bound < bitmap_size && rice_bound <= runs_bound;
  Bytes rice;
  std::uint64_t long_gaps = 0;  // known once the Rice encoding is built: tag 3's bound tightens
  if (rice_first) rice = encode_rice_offsets(s, defined, long_gaps);
  std::size_t limit = rice.empty() ? bitmap_size : std::min(bitmap_size, rice.size() + 1);
  Bytes best;  // empty: the bitmap or the Rice encoding wins
  const auto consider = [&](Bytes candidate) {
    if (!candidate.empty()) {
      limit = candidate.size();
      best.swap(candidate);
    }
  };
  if (1 + varint_size(defined) + defined + long_gaps < limit) consider(encode_offsets(s, defined, limit));
  if (runs_bound < limit) consider(encode_runs(s, runs, limit));
  std::uint64_t rows = 1;  // a single block has at most one run per row of the chunk
  for (std::size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
  if (runs <= rows && may_be_single_block(s, n, defined, dims)) {
    if (const auto block = as_single_block(s, dims)) {
      Bytes candidate{std::uint8_t(SelectionEncoding::blocks)};
      put_block(candidate, *block);
      if (candidate.size() < limit) consider(std::move(candidate));
    }
  }
  if (!rice_first && rice_bound < limit) {
    rice = encode_rice_offsets(s, defined, long_gaps);
    if (rice.size() < limit) return rice;
  }
  if (!best.empty()) return best;
  return rice_first && rice.size() < bitmap_size ? rice : bitmap();
}

// Writers take Elias-Fano offsets instead of the Rice-coded gaps when they are at most 1/8
// larger (docs/FORMAT.md): a read of part of the chunk then skips what it does not need.
template <typename Walk>
Bytes with_random_access(Bytes chosen, const Walk& s, std::uint64_t n, std::uint64_t defined) {
  if (chosen[0] != std::uint8_t(SelectionEncoding::rice_offsets) || n > (std::uint64_t(1) << 32)) return chosen;
  const std::uint64_t last = s.last();
  const std::uint64_t size =
      1 + varint_size(defined) + elias_fano_body_size(last, defined, elias_fano_low_bits(last, defined));
  if (size * 8 > chosen.size() * 9) return chosen;
  return encode_elias_fano(s, defined);
}

}  // namespace

Bytes encode_selection(const ChunkSelection& s, const std::vector<std::uint64_t>& dims) {
  const std::uint64_t n = element_count_of(dims);
  H5SPARSE_FAIL_IF(n != s.element_count(), ErrorCode::invalid_argument,
          "selection size does not match the chunk dimensions");
  const std::uint64_t defined = s.defined_count();
  if (defined == 0) return Bytes{std::uint8_t(SelectionEncoding::empty)};
  if (defined == n) return Bytes{std::uint8_t(SelectionEncoding::all)};
  const BitmapWalk walk{s};
  return with_random_access(encode_smallest(walk, n, defined, count_runs(s), dims, [&] { return encode_bitmap(s); }),
                            walk, n, defined);
}

Bytes encode_selection(const std::uint32_t* offsets, std::size_t count, const std::vector<std::uint64_t>& dims) {
  const std::uint64_t n = element_count_of(dims);
  H5SPARSE_FAIL_IF(count > n || (count > 0 && offsets[count - 1] >= n), ErrorCode::invalid_argument,
                   "offsets outside the chunk");
  if (count == 0) return Bytes{std::uint8_t(SelectionEncoding::empty)};
  if (count == n) return Bytes{std::uint8_t(SelectionEncoding::all)};
  const ListWalk walk{offsets, count};
  const auto bitmap = [&] { return encode_bitmap(selection_of(offsets, count, n)); };
  return with_random_access(encode_smallest(walk, n, count, walk.runs(), dims, bitmap), walk, n, count);
}

ChunkSelection selection_of(const std::uint32_t* offsets, std::size_t count, std::uint64_t element_count) {
  ChunkSelection s(element_count);
  detail::BitmapSink sink{s};
  for (std::size_t i = 0; i < count; ++i) sink.add(offsets[i]);
  return s;
}

namespace {

// One decoder per encoding, each given the payload after the tag. They return the defined
// count when the encoding tells it without counting (blocks may overlap: counted afterwards).
std::uint64_t decode_bitmap(const std::uint8_t* payload, std::size_t size, std::uint64_t n, ChunkSelection& s) {
  H5SPARSE_FAIL_IF(size != (n + 7) / 8, ErrorCode::corrupt_data,
                   "encoded selection: bitmap of " + std::to_string(size) + " bytes for " + std::to_string(n) +
                       " elements");
  // The bitmap's byte order is the little-endian byte order of the in-memory words.
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  std::memcpy(s.word_data(), payload, size);
#else
  for (std::uint64_t w = 0; w * 8 < size; ++w) {
    std::uint64_t word = 0;
    const std::size_t bytes = std::min<std::size_t>(8, size - w * 8);
    for (std::size_t b = 0; b < bytes; ++b) word |= std::uint64_t(payload[w * 8 + b]) << (8 * b);
    s.set_word(w, word);
  }
#endif
  H5SPARSE_FAIL_IF(n % 8 != 0 && (payload[size - 1] >> (n % 8)) != 0, ErrorCode::corrupt_data,
                   "encoded selection: bitmap has bits past the last element");
  return s.defined_count();
}

template <typename Sink>
std::uint64_t decode_offsets(VarintReader& in, std::uint64_t n, Sink&& s) {
  const std::uint64_t count = in.next();
  H5SPARSE_FAIL_IF(count > n, ErrorCode::corrupt_data, "encoded selection: more offsets than elements");
  std::uint64_t next = 0;  // <= n; at n, any further offset is outside
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t gap = in.next();
    H5SPARSE_FAIL_IF(gap >= n - next, ErrorCode::corrupt_data, "encoded selection: offset outside the chunk");
    next += gap;
    s.add(next);
    ++next;
  }
  return count;
}

template <typename Sink>
std::uint64_t decode_runs(VarintReader& in, std::uint64_t n, Sink&& s) {
  const std::uint64_t count = in.next();
  H5SPARSE_FAIL_IF(count > n, ErrorCode::corrupt_data, "encoded selection: more runs than elements");
  std::uint64_t next = 0, defined = 0;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t gap = in.next();
    const std::uint64_t length = in.next() + 1;
    H5SPARSE_FAIL_IF(length == 0 || gap > n - next || length > n - next - gap, ErrorCode::corrupt_data,
                     "encoded selection: run outside the chunk");
    s.add_range(next + gap, length);
    next += gap + length;
    defined += length;  // runs are disjoint
  }
  return defined;
}

std::uint64_t decode_blocks(VarintReader& in, const std::vector<std::uint64_t>& dims, std::uint64_t n,
                            ChunkSelection& s) {
  const std::uint64_t count = in.next();
  H5SPARSE_FAIL_IF(count > n, ErrorCode::corrupt_data, "encoded selection: more blocks than elements");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> block(dims.size());
  for (std::uint64_t k = 0; k < count; ++k) {
    for (std::size_t d = 0; d < dims.size(); ++d) {
      const std::uint64_t start = in.next();
      const std::uint64_t extent = in.next() + 1;
      H5SPARSE_FAIL_IF(extent == 0 || start >= dims[d] || extent > dims[d] - start, ErrorCode::corrupt_data,
                       "encoded selection: block outside the chunk");
      block[d] = {start, extent};
    }
    fill_block(s, dims, block);
  }
  return s.defined_count();  // blocks may overlap
}

// Reads the count and the parameter byte, then calls read(stream, size, count, k).
template <typename Read>
std::uint64_t decode_rice(const std::uint8_t* payload, std::size_t size, VarintReader& in, std::uint64_t n,
                          Read&& read) {
  const std::uint64_t count = in.next();
  H5SPARSE_FAIL_IF(count > n, ErrorCode::corrupt_data, "encoded selection: more offsets than elements");
  const std::uint8_t* k = in.position();
  H5SPARSE_FAIL_IF(k == payload + size, ErrorCode::corrupt_data, "encoded selection is truncated");
  read(k + 1, std::size_t(payload + size - k - 1), count, unsigned(*k));
  return count;
}

// The elements of a chunk whose offsets are listed (32-bit): Error(unsupported) above 2^32.
std::uint64_t offset_list_elements(const std::vector<std::uint64_t>& dims) {
  const std::uint64_t n = element_count_of(dims);
  H5SPARSE_FAIL_IF(n > (std::uint64_t(1) << 32), ErrorCode::unsupported,
                   "chunks of more than 2^32 elements have no offset list");
  return n;
}

void check_tag(std::size_t size) {
  H5SPARSE_FAIL_IF(size == 0, ErrorCode::corrupt_data, "encoded selection is empty (no encoding tag)");
}

// The reader of an Elias-Fano body after the count (the body runs to the end).
EliasFanoReader elias_fano_reader(const std::uint8_t* payload, std::size_t size, VarintReader& in, std::uint64_t n) {
  const std::uint64_t count = in.next();
  H5SPARSE_FAIL_IF(count > n, ErrorCode::corrupt_data, "encoded selection: more offsets than elements");
  return EliasFanoReader(in.position(), std::size_t(payload + size - in.position()), count, n);
}

}  // namespace

ChunkSelection decode_selection(const std::uint8_t* data, std::size_t size,
                                const std::vector<std::uint64_t>& dims, std::uint64_t* defined) {
  const std::uint64_t n = element_count_of(dims);
  check_tag(size);
  ChunkSelection s(n);
  const std::uint8_t* payload = data + 1;
  const std::size_t payload_size = size - 1;
  VarintReader in(payload, payload_size);
  std::uint64_t count = 0;
  switch (SelectionEncoding(data[0])) {
    case SelectionEncoding::empty: break;
    case SelectionEncoding::all:
      s.set_range(0, n);
      count = n;
      break;
    case SelectionEncoding::bitmap:  // self-delimiting: no varints, nothing can trail
      count = decode_bitmap(payload, payload_size, n, s);
      if (defined) *defined = count;
      return s;
    case SelectionEncoding::offsets: count = decode_offsets(in, n, detail::BitmapSink{s}); break;
    case SelectionEncoding::runs: count = decode_runs(in, n, detail::BitmapSink{s}); break;
    case SelectionEncoding::blocks: count = decode_blocks(in, dims, n, s); break;
    case SelectionEncoding::rice_offsets:  // the bit stream runs to the end
      count = decode_rice(payload, payload_size, in, n,
                          [&](const std::uint8_t* bits, std::size_t bytes, std::uint64_t c, unsigned k) {
                            read_rice_gaps(bits, bytes, c, k, s);
                          });
      if (defined) *defined = count;
      return s;
    case SelectionEncoding::elias_fano: {
      const EliasFanoReader reader = elias_fano_reader(payload, payload_size, in, n);
      std::uint64_t* const words = s.word_data();
      reader.each([&](std::uint64_t i) { words[i >> 6] |= std::uint64_t(1) << (i & 63); });
      if (defined) *defined = reader.count();
      return s;
    }
    default:
      throw Error(ErrorCode::corrupt_data, "encoded selection: unknown encoding tag " + std::to_string(data[0]));
  }
  H5SPARSE_FAIL_IF(!in.done(), ErrorCode::corrupt_data, "encoded selection has trailing bytes");
  if (defined) *defined = count;
  return s;
}

namespace {

// The offsets of a bitmap's set bits, ascending, stored through a pointer into a list sized
// once by a count of the bits.
void bitmap_offsets(const ChunkSelection& s, std::vector<std::uint32_t>& offsets) {
  offsets.resize(std::size_t(s.defined_count()));
  std::uint32_t* out = offsets.data();
  BitmapWalk{s}.every([&](std::uint64_t i) { *out++ = std::uint32_t(i); });
}

}  // namespace

void decode_selection_offsets(const std::uint8_t* data, std::size_t size, const std::vector<std::uint64_t>& dims,
                              std::vector<std::uint32_t>& offsets) {
  const std::uint64_t n = offset_list_elements(dims);
  check_tag(size);
  offsets.clear();
  const std::uint8_t* payload = data + 1;
  const std::size_t payload_size = size - 1;
  VarintReader in(payload, payload_size);
  detail::ListSink sink{offsets};
  switch (SelectionEncoding(data[0])) {
    case SelectionEncoding::empty: break;
    case SelectionEncoding::all: sink.add_range(0, n); break;
    case SelectionEncoding::offsets: decode_offsets(in, n, sink); break;
    case SelectionEncoding::runs: decode_runs(in, n, sink); break;
    case SelectionEncoding::rice_offsets:
      decode_rice(payload, payload_size, in, n, [&](const std::uint8_t* bits, std::size_t bytes, std::uint64_t c, unsigned k) {
        if (c * 64 < n) return read_rice_gaps(bits, bytes, c, k, n, offsets);
        // An element per bitmap word or more: the table-driven bitmap decoder, then its bits,
        // cost less than decoding code by code.
        ChunkSelection s(n);
        read_rice_gaps(bits, bytes, c, k, s);
        bitmap_offsets(s, offsets);
      });
      return;
    case SelectionEncoding::elias_fano: {
      const EliasFanoReader reader = elias_fano_reader(payload, payload_size, in, n);
      offsets.resize(std::size_t(reader.count()));
      std::uint32_t* out = offsets.data();
      reader.each([&](std::uint64_t i) { *out++ = std::uint32_t(i); });
      return;
    }
    default: {  // a bitmap (dense: as cheap as any) or blocks (which may overlap)
      bitmap_offsets(decode_selection(data, size, dims), offsets);
      return;
    }
  }
  H5SPARSE_FAIL_IF(!in.done(), ErrorCode::corrupt_data, "encoded selection has trailing bytes");
}

namespace {

// Where decode_selection_in puts the elements it finds: into room made for as many as the
// ranges can hold (no check of the room an element), and a run of ranks a range.
struct RangeSink {
  std::uint32_t* out;
  std::vector<RankRun>& runs;
  void offset(std::uint64_t offset) { *out++ = std::uint32_t(offset); }
  void run(std::uint64_t rank, std::uint64_t count) { runs.push_back({rank, count}); }
};

// Room for the elements `ranges` (checked to ascend without overlapping: the room is sized by
// it) can hold, at most `count` (the chunk's).
std::uint32_t* room_for(const std::vector<OffsetRange>& ranges, std::uint64_t count, std::vector<std::uint32_t>& offsets) {
  std::uint64_t width = 0, end = 0;
  for (const OffsetRange& r : ranges) {
    H5SPARSE_FAIL_IF(r.end < r.first || r.first < end, ErrorCode::invalid_argument,
                     "offset ranges must ascend without overlapping");
    width += r.end - r.first;
    end = r.end;
  }
  offsets.resize(std::size_t(std::min(width, count)));
  return offsets.data();
}

#ifdef H5SPARSE_BMI2_KERNELS
// Elias-Fano ranges with the POPCNT instruction (each_in counts bits of every word it skips;
// baseline x86-64 counts them in software, about ten instructions a word).
H5SPARSE_TARGET_POPCNT void elias_fano_ranges_popcnt(const EliasFanoReader& reader,
                                                     const std::vector<OffsetRange>& ranges, RangeSink& take) {
  reader.each_in(ranges, take);
}
// And with PDEP for the zero-bit a range starts after.
H5SPARSE_TARGET_PDEP void elias_fano_ranges_pdep(const EliasFanoReader& reader, const std::vector<OffsetRange>& ranges,
                                                 RangeSink& take) {
  reader.each_in<SelectByPdep>(ranges, take);
}
#endif

}  // namespace

std::uint64_t decode_selection_in(const std::uint8_t* data, std::size_t size, const std::vector<std::uint64_t>& dims,
                                  const std::vector<OffsetRange>& ranges, std::vector<std::uint32_t>& offsets,
                                  std::vector<RankRun>& runs) {
  const std::uint64_t n = offset_list_elements(dims);
  check_tag(size);
  runs.clear();
  if (SelectionEncoding(data[0]) == SelectionEncoding::elias_fano) {
    VarintReader in(data + 1, size - 1);
    const EliasFanoReader reader = elias_fano_reader(data + 1, size - 1, in, n);
    RangeSink take{room_for(ranges, reader.count(), offsets), runs};
#ifdef H5SPARSE_BMI2_KERNELS
    if (cpu_has_fast_pdep())
      elias_fano_ranges_pdep(reader, ranges, take);
    else if (cpu_has_popcnt())
      elias_fano_ranges_popcnt(reader, ranges, take);
    else
#endif
      reader.each_in(ranges, take);
    offsets.resize(std::size_t(take.out - offsets.data()));
    return reader.count();
  }
  std::uint64_t defined = 0;
  const ChunkSelection s = decode_selection(data, size, dims, &defined);
  RangeSink take{room_for(ranges, defined, offsets), runs};
  const std::vector<std::uint64_t>& words = s.words();
  std::uint64_t word = 0, rank = 0;  // defined elements before word `word`
  for (const OffsetRange& r : ranges) {
    std::uint64_t first_rank = 0, found = 0;
    for (std::uint64_t i = r.first; i < r.end;) {
      const std::uint64_t w = i >> 6, stop = std::min(r.end, (w + 1) * 64);
      for (; word < w; ++word) rank += std::uint64_t(__builtin_popcountll(words[word]));
      std::uint64_t bits = words[w] >> (i & 63) << (i & 63);
      if (stop & 63) bits &= (std::uint64_t(1) << (stop & 63)) - 1;
      if (bits && !found)
        first_rank = rank + std::uint64_t(__builtin_popcountll(words[w] & ((std::uint64_t(1) << (i & 63)) - 1)));
      for (; bits; bits &= bits - 1) {
        take.offset(w * 64 + unsigned(__builtin_ctzll(bits)));
        ++found;
      }
      i = stop;
    }
    if (found) take.run(first_rank, found);
  }
  offsets.resize(std::size_t(take.out - offsets.data()));
  return defined;
}

}  // namespace h5sparse
