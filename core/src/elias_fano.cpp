#include "h5sparse/elias_fano.hpp"

#include <string>

#include "h5sparse/cpu_features.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

std::uint64_t ceil_bytes(std::uint64_t bits) { return (bits + 7) / 8; }

void or_bits(std::uint8_t* p, std::uint64_t bit, std::uint64_t value, unsigned width) noexcept {
  for (unsigned done = 0; done < width;) {  // at most 5 bytes for 32 bits
    const unsigned at = unsigned((bit + done) & 7), take = std::min(8 - at, width - done);
    p[(bit + done) >> 3] |= std::uint8_t(((value >> done) & ((1u << take) - 1)) << at);
    done += take;
  }
}

}  // namespace

std::uint64_t elias_fano_body_size(std::uint64_t last, std::uint64_t count, unsigned low_bits) {
  return 1 + ceil_bytes(count * low_bits) + ceil_bytes((last >> low_bits) + count);
}

unsigned elias_fano_low_bits(std::uint64_t last, std::uint64_t count) {
  unsigned l = 0;  // floor(log2((last + 1) / count)), the classic choice; a neighbour may be smaller
  while (l < kMaxEliasFanoLowBits && ((last + 1) >> (l + 1)) >= count) ++l;
  unsigned best = l;
  for (unsigned c : {l == 0 ? l : l - 1, l + 1 > kMaxEliasFanoLowBits ? l : l + 1})
    if (elias_fano_body_size(last, count, c) < elias_fano_body_size(last, count, best)) best = c;
  return best;
}

EliasFanoWriter::EliasFanoWriter(std::uint64_t last, std::uint64_t count, unsigned low_bits, Bytes& out)
    : l_(low_bits) {
  const std::size_t start = out.size();
  out.resize(start + std::size_t(elias_fano_body_size(last, count, low_bits)), 0);
  out[start] = std::uint8_t(low_bits);
  low_ = out.data() + start + 1;
  high_ = low_ + ceil_bytes(count * low_bits);
}

void EliasFanoWriter::add(std::uint64_t offset) noexcept {
  if (l_) or_bits(low_, i_ * l_, offset, l_);
  const std::uint64_t position = (offset >> l_) + i_;
  high_[position >> 3] |= std::uint8_t(1u << (position & 7));
  ++i_;
}

namespace {

// The one-bits of `size` bytes, a word at a time: every read counts a body's high bits (about
// 800 words for a chunk of 18,000 offsets), with the POPCNT instruction where the CPU has it.
__attribute__((always_inline)) inline std::uint64_t count_ones_of(const std::uint8_t* p, std::size_t size) {
  std::uint64_t ones = 0;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, p + i, 8);
    ones += std::uint64_t(__builtin_popcountll(word));
  }
  for (; i < size; ++i) ones += std::uint64_t(__builtin_popcount(p[i]));
  return ones;
}

#ifdef H5SPARSE_BMI2_KERNELS
H5SPARSE_TARGET_POPCNT std::uint64_t count_ones_popcnt(const std::uint8_t* p, std::size_t size) {
  return count_ones_of(p, size);
}
#endif

std::uint64_t count_ones(const std::uint8_t* p, std::size_t size) {
#ifdef H5SPARSE_BMI2_KERNELS
  if (cpu_has_popcnt()) return count_ones_popcnt(p, size);
#endif
  return count_ones_of(p, size);
}

}  // namespace

void EliasFanoReader::corrupt(const char* what) {
  throw Error(ErrorCode::corrupt_data, std::string("encoded selection (Elias-Fano offsets): ") + what);
}

EliasFanoReader::EliasFanoReader(const std::uint8_t* body, std::size_t size, std::uint64_t count, std::uint64_t n)
    : count_(count), n_(n) {
  if (count == 0) corrupt("no offsets (an empty selection has its own tag)");
  if (size == 0) corrupt("truncated");
  l_ = body[0];
  if (l_ > kMaxEliasFanoLowBits) corrupt("more low bits than 32");
  if (count > 8 * std::uint64_t(size)) corrupt("more offsets than the body has bits");
  low_size_ = std::size_t(ceil_bytes(count * l_));
  if (1 + low_size_ >= size) corrupt("truncated");
  low_bytes_ = body + 1;
  high_bytes_ = low_bytes_ + low_size_;
  high_size_ = size - 1 - low_size_;
  if (l_ && (count * l_) % 8 && low_bytes_[low_size_ - 1] >> ((count * l_) % 8)) corrupt("nonzero padding bits");
  const std::uint8_t top = high_bytes_[high_size_ - 1];
  if (top == 0) corrupt("trailing bytes after the last offset");
  high_bits_ = 8 * std::uint64_t(high_size_);
  if (count_ones(high_bytes_, high_size_) != count) corrupt("the high bits do not hold one bit per offset");
  // The last offset's high part bounds every offset's: it must lie inside the chunk.
  const std::uint64_t last_position = high_bits_ - 8 + (31 - unsigned(__builtin_clz(top)));
  const std::uint64_t last_high = last_position - (count - 1);
  if (last_high > (n - 1) >> l_) corrupt("offsets outside the chunk");
  high_bits_ = last_position + 1;
}

}  // namespace h5sparse
