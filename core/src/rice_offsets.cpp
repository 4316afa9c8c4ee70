// Rice-coded offset gaps (selection tag 6, docs/FORMAT.md): each gap g as q = g >> k one-bits,
// a zero-bit, then the low k bits of g; bits packed least significant first.
#include "h5sparse/rice_offsets.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "h5sparse/bits.hpp"
#include "h5sparse/cpu_features.hpp"
#include "h5sparse/error.hpp"
#include "selection_walk.hpp"

namespace h5sparse {
namespace {

using detail::BitmapWalk;
using detail::ListWalk;

std::uint64_t low_bits(unsigned n) { return n >= 64 ? ~std::uint64_t(0) : (std::uint64_t(1) << n) - 1; }

// Reads bits least significant first. Invariant: bits of buf_ at and above avail_ are zero,
// and avail_ <= 63, so ~buf_ always has a set bit.
class BitReader {
 public:
  BitReader(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}

  // Tops the buffer up with whole bytes, to at least 56 bits while input lasts.
  void refill() {
    const unsigned take = (63 - avail_) >> 3;
    if (std::size_t(end_ - p_) >= 8) {
      std::uint64_t v;
      std::memcpy(&v, p_, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      v = __builtin_bswap64(v);
#endif
      buf_ |= (v & low_bits(8 * take)) << avail_;
      avail_ += 8 * take;
      p_ += take;
      return;
    }
    for (unsigned i = 0; i < take && p_ != end_; ++i, avail_ += 8) buf_ |= std::uint64_t(*p_++) << avail_;
  }
  std::uint64_t peek() const { return buf_; }
  unsigned available() const { return avail_; }
  void skip(unsigned bits) {  // bits <= available() <= 63
    buf_ >>= bits;
    avail_ -= bits;
  }
  bool exhausted() const { return p_ == end_; }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
  std::uint64_t buf_ = 0;
  unsigned avail_ = 0;
};

[[noreturn]] void corrupt(const std::string& what) {
  throw Error(ErrorCode::corrupt_data, "encoded selection (rice offsets): " + what);
}

// One gap, the general way: a unary run of any length (at most `max_q`), split over refills.
std::uint64_t read_gap_slowly(BitReader& in, unsigned k, std::uint64_t max_q) {
  std::uint64_t q = 0;
  while (true) {
    in.refill();
    if (in.available() == 0) corrupt("truncated");
    const unsigned ones = unsigned(__builtin_ctzll(~in.peek()));
    if (ones < in.available()) {
      q += ones;
      in.skip(ones + 1);
      break;
    }
    q += in.available();
    in.skip(in.available());
    if (q > max_q) break;
  }
  if (q > max_q) corrupt("unary run longer than any gap inside the chunk");
  in.refill();
  if (in.available() < k) corrupt("truncated");
  const std::uint64_t low = in.peek() & low_bits(k);
  in.skip(k);
  return q << k | low;
}

}  // namespace

std::uint64_t least_rice_bits(std::uint64_t last, std::uint64_t count) {
  // With gap sum G, the quotients sum to at least (G - count (2^k - 1)) / 2^k, so parameter k
  // costs at least count k + (G + count) / 2^k bits.
  const std::uint64_t spread = last + 1;  // G + count
  std::uint64_t least = UINT64_MAX;
  for (unsigned k = 0; k <= kMaxRiceParameter; ++k) least = std::min(least, count * k + (spread >> k));
  return least;
}

namespace {

// Writes the Rice codes of the gaps of `s` with parameter k at `out` (room for every byte they
// take) and returns the end. Also sums the quotients of parameters `k_below` and
// k + 1, so the caller learns whether a neighbouring parameter would have been smaller, and
// counts the gaps that need varints of two bytes or more. This loop is a hot path of writes
// (6,500 gaps per chunk at 10% density): codes longer than 56 bits are written out of line.
struct GapTally {
  std::uint64_t quotients_below = 0, quotients_above = 0;  // sums of gap >> k_below, gap >> (k + 1)
  std::uint64_t long_gaps = 0;                              // gaps of 128 and more
};

void store_le64(std::uint8_t* p, std::uint64_t v) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  std::memcpy(p, &v, 8);
}

// The bit writer of write_gaps: bits accumulate in `acc` (`used` of them, < 64) and leave 64
// at a time to `p`.
struct RiceSink {
  std::uint8_t* p;
  std::uint64_t acc;
  unsigned used;
};

__attribute__((always_inline)) inline void put_bits(RiceSink& out, std::uint64_t value, unsigned n) {
  // value < 2^n, n <= 56
  out.acc |= value << out.used;
  if (out.used + n >= 64) {  // acc is full: out it goes, the rest of value stays (used >= 8)
    store_le64(out.p, out.acc);
    out.p += 8;
    out.acc = value >> (64 - out.used);
    out.used = out.used + n - 64;
  } else {
    out.used += n;
  }
}

// A code longer than 56 bits (a long unary part), off the hot loop.
__attribute__((noinline)) RiceSink put_long_code(RiceSink out, std::uint64_t gap, std::uint64_t q, unsigned k) {
  for (std::uint64_t left = q; left > 0;) {
    const unsigned part = unsigned(std::min<std::uint64_t>(left, 32));
    put_bits(out, low_bits(part), part);
    left -= part;
  }
  put_bits(out, 0, 1);
  put_bits(out, gap & low_bits(k), k);
  return out;
}

// The body of write_gaps, compiled twice: for baseline x86-64 and with BMI2 (write_gaps).
// CountLong: count the long gaps; below k = 4 a code takes under 8 bits on average, so varint
// offsets (8 bits a gap at least) never compete and the count is not needed (left 0).
template <bool CountLong, typename Walk>
__attribute__((always_inline)) inline std::uint8_t* write_gaps_body(const Walk& walk, unsigned k, unsigned k_below,
                                                                     std::uint8_t* out, GapTally& tally) {
  RiceSink sink{out, 0, 0};
  std::uint64_t below = 0, above = 0, long_gaps = 0;
  std::uint64_t next = 0;
  walk.every([&](std::uint64_t i) __attribute__((always_inline)) {
    const std::uint64_t gap = i - next;
    next = i + 1;
    const std::uint64_t q = gap >> k;
    below += gap >> k_below;
    above += q >> 1;
    if constexpr (CountLong) long_gaps += gap >= 0x80;
    if (__builtin_expect(q + 1 + k <= 56, 1)) {  // the whole code in one field: q ones, a zero, the low bits
      put_bits(sink, ((((gap & ((std::uint64_t(1) << k) - 1)) << 1) | 1) << q) - 1, unsigned(q + 1 + k));
    } else {
      sink = put_long_code(sink, gap, q, k);
    }
  });
  std::uint8_t* p = sink.p;
  for (std::uint64_t acc = sink.acc, used = sink.used; used > 0; used = used > 8 ? used - 8 : 0, acc >>= 8)
    *p++ = std::uint8_t(acc);
  tally.quotients_below = below;
  tally.quotients_above = above;
  tally.long_gaps = long_gaps;
  return p;
}

template <typename Walk>
std::uint8_t* write_gaps_baseline(const Walk& walk, unsigned k, unsigned k_below, std::uint8_t* out,
                                  GapTally& tally) {
  return k >= 4 ? write_gaps_body<true>(walk, k, k_below, out, tally)
                : write_gaps_body<false>(walk, k, k_below, out, tally);
}

#ifdef H5SPARSE_BMI2_KERNELS
template <typename Walk>
H5SPARSE_TARGET_BMI2 std::uint8_t* write_gaps_bmi2(const Walk& walk, unsigned k, unsigned k_below,
                                                   std::uint8_t* out, GapTally& tally) {
  return k >= 4 ? write_gaps_body<true>(walk, k, k_below, out, tally)
                : write_gaps_body<false>(walk, k, k_below, out, tally);
}
#endif

template <typename Walk>
std::uint8_t* write_gaps(const Walk& walk, unsigned k, unsigned k_below, std::uint8_t* out, GapTally& tally) {
#ifdef H5SPARSE_BMI2_KERNELS
  if (cpu_has_bmi2()) return write_gaps_bmi2(walk, k, k_below, out, tally);
#endif
  return write_gaps_baseline(walk, k, k_below, out, tally);
}

template <typename Walk>
std::uint64_t append_rice_gaps_of(const Walk& s, std::uint64_t count, Bytes& out) {
  // For geometric gaps of mean m the best Golomb divisor is about m ln 2: k0 is its Rice
  // neighbour, k0 - 1 and k0 + 1 are measured on the way.
  const std::uint64_t spread = s.last() + 1;  // the gaps' sum + count
  const double divisor = double(spread - count) / double(count) * 0.6931471805599453;
  const unsigned k = std::min(divisor < 1 ? 0 : unsigned(std::lround(std::log2(divisor))), kMaxRiceParameter - 1);
  const unsigned k_below = k > 0 ? k - 1 : 0;
  // At most count (k + 1) + (sum of gaps >> k) bits for any k.
  const auto room = [&](unsigned kk) { return std::size_t((count * (kk + 1) + ((spread - count) >> kk) + 7) / 8); };
  const std::size_t at = out.size();
  out.resize(at + 1 + room(k));
  out[at] = std::uint8_t(k);
  GapTally tally;
  std::uint8_t* end = write_gaps(s, k, k_below, out.data() + at + 1, tally);
  const std::uint64_t bits = std::uint64_t(end - (out.data() + at + 1)) * 8;  // whole bytes
  const std::uint64_t below_bits = count * (k_below + 1) + tally.quotients_below;
  const std::uint64_t above_bits = count * (k + 2) + tally.quotients_above;
  const std::uint64_t long_gaps = tally.long_gaps;
  unsigned better = k;
  if ((below_bits + 7) / 8 * 8 < bits) better = k_below;
  if ((above_bits + 7) / 8 * 8 < std::min(bits, (below_bits + 7) / 8 * 8)) better = k + 1;
  if (better != k) {
    out.resize(at + 1 + room(better));
    out[at] = std::uint8_t(better);
    end = write_gaps(s, better, better, out.data() + at + 1, tally);
  }
  out.resize(std::size_t(end - out.data()));
  return long_gaps;
}

}  // namespace

std::uint64_t append_rice_gaps(const ChunkSelection& s, std::uint64_t count, Bytes& out) {
  return append_rice_gaps_of(BitmapWalk{s}, count, out);
}

std::uint64_t append_rice_gaps(const std::uint32_t* offsets, std::size_t count, Bytes& out) {
  return append_rice_gaps_of(ListWalk{offsets, count}, count, out);
}

namespace {

// The table-driven phase of read_rice_gaps, for small parameters (dense selections: about two
// codes in every 12 bits). An entry, indexed by the next kTableBits bits of the stream, holds
// what the whole codes among them add to the bitmap: each code, gap g, is g zero-bits and a
// one-bit, so a few codes are one bit pattern of at most kPatternBits bits, ORed in at the
// current position, instead of a bit set per code. Bits 0-55: that pattern (its top bit is the
// last code's one, so its length is implied); bits 56-59: the stream bits the codes take;
// bits 60-63: how many codes. 0 codes: the first code is longer than the window or its gap
// longer than the pattern (decoded singly).
constexpr unsigned kTableBits = 12;
constexpr unsigned kPatternBits = 56;
constexpr unsigned kMaxTableParameter = 4;  // k = 5 takes 6 bits a code: rarely two in a window

using RiceTable = std::array<std::uint64_t, std::size_t(1) << kTableBits>;

RiceTable build_table(unsigned k) {
  RiceTable table{};
  for (std::uint64_t x = 0; x < table.size(); ++x) {
    std::uint64_t pattern = 0;
    unsigned at = 0, length = 0, codes = 0;  // stream bits taken, pattern bits made
    while (true) {
      unsigned q = 0;
      while (at + q < kTableBits && (x >> (at + q) & 1)) ++q;
      if (at + q + 1 + k > kTableBits) break;  // the code does not end inside the window
      const std::uint64_t gap = std::uint64_t(q) << k | ((x >> (at + q + 1)) & low_bits(k));
      if (length + gap + 1 > kPatternBits) break;
      pattern |= std::uint64_t(1) << (length + gap);
      length += unsigned(gap) + 1;
      at += q + 1 + k;
      ++codes;
    }
    table[x] = pattern | std::uint64_t(at) << 56 | std::uint64_t(codes) << 60;
  }
  return table;
}

template <unsigned K>
const RiceTable& table_of() {  // built on first use (a file uses one or two parameters)
  static const RiceTable table = build_table(K);
  return table;
}

const RiceTable& table_for(unsigned k) {  // k <= kMaxTableParameter
  switch (k) {
    case 0: return table_of<0>();
    case 1: return table_of<1>();
    case 2: return table_of<2>();
    case 3: return table_of<3>();
    default: return table_of<4>();
  }
}

std::uint64_t load_le64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

// Decodes codes while at least 8 stream bytes are left at the position (so no entry reads the
// padding) and the next element is more than 4 patterns and a word before the chunk's end (so
// no check per code is needed, and 8-byte stores stay inside the bitmap). The bitmap is made a
// byte at a time: `acc` holds the bits from the byte of the position on, and after each
// pattern all 8 of its bytes are stored (the selection is empty: plain stores, no read back)
// and the completed bytes dropped. Advances `bit` and `next` (the element after the last
// offset); stops early at a code it leaves to the general loop. Returns whether it decoded
// anything. The body is compiled for baseline x86-64 and with BMI2 (read_gaps_fast).
__attribute__((always_inline)) inline bool read_gaps_fast_body(const std::uint8_t* data, std::size_t size, unsigned k,
                                                               std::uint64_t n, std::uint64_t* words, std::uint64_t& bit,
                                                               std::uint64_t& next) {
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  return false;  // the bitmap words are not little-endian bytes there; the general loop
#endif
  // Large parameters (sparse selections: a code or two per load, most gaps past a pattern)
  // gain nothing here over the general loop.
  if (k > kMaxTableParameter || size < 8 || n <= 4 * kPatternBits + 64) return false;
  const std::uint64_t bit_limit = 8 * std::uint64_t(size - 7);  // an 8-byte load at bit / 8 stays inside
  const std::uint64_t pos_limit = n - 4 * kPatternBits - 64;
  const RiceTable& table = table_for(k);
  const std::uint64_t mask = low_bits(k);
  std::uint8_t* const bytes = reinterpret_cast<std::uint8_t*>(words);
  std::uint8_t* const out_limit = bytes + (pos_limit >> 3);
  std::uint8_t* out = bytes;  // the position is element 8 * (out - bytes) + o
  unsigned o = 0;
  std::uint64_t at = 0, acc = 0;
  // One pattern (length <= 56, top bit set) at the position.
  const auto put = [&](std::uint64_t pattern, unsigned length) {
    acc |= pattern << o;
    store_le64(out, acc);
    o += length;
    out += o >> 3;
    acc >>= o & ~7u;
    o &= 7;
  };
  while (at < bit_limit && out < out_limit) {
    std::uint64_t v = load_le64(data + (at >> 3)) >> (at & 7);  // 57 bits or more of stream
    // Up to 4 entries from one load: they read at most 3 x 12 + 12 = 48 of its 57 bits.
    unsigned used = 0, j = 0;
    for (; j < 4; ++j) {
      const std::uint64_t e = table[v & low_bits(kTableBits)];
      if (e < (std::uint64_t(1) << 56)) break;  // no whole code in the window
      const std::uint64_t pattern = e & low_bits(kPatternBits);
      put(pattern, 64 - unsigned(__builtin_clzll(pattern)));
      const unsigned c = unsigned(e >> 56) & 15;
      v >>= c;
      used += c;
    }
    at += used;
    if (j) continue;
    v = load_le64(data + (at >> 3)) >> (at & 7);  // a code longer than the window
    const unsigned q = unsigned(__builtin_ctzll(~v | std::uint64_t(1) << 57));  // v may be all ones
    if (q + 1 + k > 57) break;  // a long unary run or a large k: the general loop
    const std::uint64_t gap = std::uint64_t(q) << k | ((v >> (q + 1)) & mask);
    if (gap < kPatternBits) {
      put(std::uint64_t(1) << gap, unsigned(gap) + 1);
    } else {  // the bytes up to the offset stay zero
      const std::uint64_t target = 8 * std::uint64_t(out - bytes) + o + gap;
      if (target >= pos_limit) break;  // near the end (or outside): the general loop checks it
      out = bytes + (target >> 3);
      o = unsigned(target & 7);
      acc = 0;
      put(1, 1);
    }
    at += q + 1 + k;
  }
  bit = at;
  next = 8 * std::uint64_t(out - bytes) + o;
  return at > 0;
}

bool read_gaps_fast_baseline(const std::uint8_t* data, std::size_t size, unsigned k, std::uint64_t n,
                             std::uint64_t* words, std::uint64_t& bit, std::uint64_t& next) {
  return read_gaps_fast_body(data, size, k, n, words, bit, next);
}

#ifdef H5SPARSE_BMI2_KERNELS
H5SPARSE_TARGET_BMI2 bool read_gaps_fast_bmi2(const std::uint8_t* data, std::size_t size, unsigned k, std::uint64_t n,
                                              std::uint64_t* words, std::uint64_t& bit, std::uint64_t& next) {
  return read_gaps_fast_body(data, size, k, n, words, bit, next);
}
#endif

bool read_gaps_fast(const std::uint8_t* data, std::size_t size, unsigned k, std::uint64_t n, std::uint64_t* words,
                    std::uint64_t& bit, std::uint64_t& next) {
#ifdef H5SPARSE_BMI2_KERNELS
  if (cpu_has_bmi2()) return read_gaps_fast_bmi2(data, size, k, n, words, bit, next);
#endif
  return read_gaps_fast_baseline(data, size, k, n, words, bit, next);
}

}  // namespace

namespace {

// Reads codes `i` to `count` from bit `bit` on, code by code with every check, giving each
// offset to `sink`; `next` is the element after the last offset so far. Inlined into its
// callers, so that the BMI2 clone of the list decoder compiles this loop for BMI2.
template <typename Sink>
__attribute__((always_inline)) inline void read_gaps_checked(const std::uint8_t* data, std::size_t size,
                                                             std::uint64_t count, unsigned k, std::uint64_t n,
                                                             std::uint64_t i, std::uint64_t bit, std::uint64_t next,
                                                             Sink&& sink) {
  const std::uint64_t mask = low_bits(k);
  BitReader in(data + (bit >> 3), size - std::size_t(bit >> 3));
  in.refill();
  if (bit & 7) in.skip(unsigned(bit & 7));
  for (; i < count; ++i) {
    if (in.available() < 40) in.refill();
    const std::uint64_t bits = in.peek();
    const unsigned q = unsigned(__builtin_ctzll(~bits));
    std::uint64_t gap;
    if (q + 1 + k <= in.available()) {  // the common case: the whole code is in the buffer
      gap = std::uint64_t(q) << k | ((bits >> (q + 1)) & mask);
      in.skip(q + 1 + k);
    } else {
      if (next >= n) corrupt("offset outside the chunk");
      gap = read_gap_slowly(in, k, (n - next - 1) >> k);  // larger quotients leave the chunk
    }
    if (gap >= n - next) corrupt("offset outside the chunk");
    next += gap;
    sink.add(next);
    ++next;
  }
  in.refill();
  if (!in.exhausted() || in.available() >= 8) corrupt("trailing bytes after the last gap");
  if (in.peek() != 0) corrupt("nonzero padding bits");
}

// Where read_gaps_checked puts offsets: memory with room for every one.
struct ArraySink {
  std::uint32_t* out;
  void add(std::uint64_t i) { *out++ = std::uint32_t(i); }
};

// The offset-list decoder, compiled for baseline x86-64 and with BMI2 (shifts by a register
// without CL: the loop's codes are all variable shifts).
void read_gap_list_baseline(const std::uint8_t* data, std::size_t size, std::uint64_t count, unsigned k,
                            std::uint64_t n, std::uint32_t* out) {
  read_gaps_checked(data, size, count, k, n, 0, 0, 0, ArraySink{out});
}

#ifdef H5SPARSE_BMI2_KERNELS
H5SPARSE_TARGET_BMI2 void read_gap_list_bmi2(const std::uint8_t* data, std::size_t size, std::uint64_t count,
                                             unsigned k, std::uint64_t n, std::uint32_t* out) {
  read_gaps_checked(data, size, count, k, n, 0, 0, 0, ArraySink{out});
}
#endif

void read_gap_list(const std::uint8_t* data, std::size_t size, std::uint64_t count, unsigned k, std::uint64_t n,
                   std::uint32_t* out) {
#ifdef H5SPARSE_BMI2_KERNELS
  if (cpu_has_bmi2()) return read_gap_list_bmi2(data, size, count, k, n, out);
#endif
  read_gap_list_baseline(data, size, count, k, n, out);
}

void check_parameter(unsigned k) {
  if (k > kMaxRiceParameter) corrupt("parameter " + std::to_string(k) + " above " + std::to_string(kMaxRiceParameter));
}

}  // namespace

void read_rice_gaps(const std::uint8_t* data, std::size_t size, std::uint64_t count, unsigned k, ChunkSelection& s) {
  check_parameter(k);
  const std::uint64_t n = s.element_count();
  std::uint64_t* const words = s.word_data();
  std::uint64_t bit = 0, next = 0, i = 0;  // next <= n; at n, any further offset is outside
  if (read_gaps_fast(data, size, k, n, words, bit, next)) {
    // Every code set one bit: count them (a corrupt stream may hold more codes than `count`).
    i = count_set_bits(words, std::size_t((next + 63) >> 6));
    if (i > count) corrupt("more gaps than the count");
  }
  // The rest (the last codes, long ones).
  read_gaps_checked(data, size, count, k, n, i, bit, next, detail::BitmapSink{s});
}

void read_rice_gaps(const std::uint8_t* data, std::size_t size, std::uint64_t count, unsigned k, std::uint64_t n,
                    std::vector<std::uint32_t>& offsets) {
  check_parameter(k);
  // Every code takes a bit at least, so the stream bounds the memory taken for its count.
  if (count > 8 * std::uint64_t(size)) corrupt("more gaps than the stream has bits");
  // Offsets go to memory sized beforehand: a push_back per code was a fifth of decoding.
  const std::size_t first = offsets.size();
  offsets.resize(first + count);
  read_gap_list(data, size, count, k, n, offsets.data() + first);
}

}  // namespace h5sparse
