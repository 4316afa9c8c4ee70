// BloscLZ compression with c-blosc 1.21.5's choices (blosc/blosclz.c, BSD-3-Clause; our own
// code). Positions are offsets from the start of the stream, so nothing points outside it.
#include "h5sparse/blosclz_encoder.hpp"

#include <cstring>

namespace h5sparse {
namespace {

constexpr unsigned kMaxLiteralRun = 32;  // a literal run's control byte holds run - 1 (0..31)
constexpr unsigned kMaxDistance = 8191;  // beyond it a match carries a 16-bit far distance
constexpr unsigned kMaxFarDistance = 65535 + kMaxDistance - 1;
constexpr unsigned kHashLog = 14;
constexpr unsigned kProbeHashLog = 12;
constexpr int kProbeMaxBytes = 1 << kProbeHashLog;

// Loads are native order, as c-blosc's; both only run on little-endian hosts here.
std::uint32_t load32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

std::uint64_t load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

std::uint32_t hash_of(std::uint32_t seq, unsigned log) { return (seq * 2654435761U) >> (32U - log); }

// Where a match found at `ip` (its first four bytes equal) ends: one past the first byte at or
// after `ip` that differs from the byte `distance` before it, but never past `bound`. This is
// what c-blosc's get_run and get_match_16 return, whatever their word sizes (a run, distance 1,
// is compared against the byte before `ip`, the same thing).
int match_end(const std::uint8_t* base, int ip, int bound, unsigned distance) {
  const std::uint8_t* ref = base - distance;
  while (ip + 8 <= bound) {
    const std::uint64_t diff = load64(base + ip) ^ load64(ref + ip);
    if (diff != 0) return ip + int(__builtin_ctzll(diff) / 8) + 1;
    ip += 8;
  }
  while (ip < bound) {
    if (base[ip] != ref[ip]) return ip + 1;
    ++ip;
  }
  return bound;
}

// c-blosc's get_cratio: a dry run of the compressor over at most 4 KiB at `base` with a
// 4096-entry table of 16-bit offsets, counting output bytes. Returns input / output bytes.
double probe_ratio(const std::uint8_t* base, int maxlen, int minlen, int ipshift) {
  std::uint16_t table[1U << kProbeHashLog];
  std::memset(table, 0, sizeof table);
  const int limit = maxlen > kProbeMaxBytes ? kProbeMaxBytes : maxlen;
  const int ip_bound = limit - 1;
  const int ip_limit = limit - 12;
  int ip = 0;
  std::int32_t out = 5;  // the first literal run: control byte and four bytes
  unsigned copy = 4;
  auto literal = [&](int anchor) {
    ++out;
    ip = anchor + 1;
    if (++copy == kMaxLiteralRun) {
      copy = 0;
      ++out;
    }
  };
  while (ip < ip_limit) {
    const int anchor = ip;
    const std::uint32_t h = hash_of(load32(base + ip), kProbeHashLog);
    const int ref = table[h];
    unsigned distance = unsigned(anchor - ref);
    table[h] = std::uint16_t(anchor);
    if (distance == 0 || distance >= kMaxFarDistance || load32(base + ref) != load32(base + ip)) {
      literal(anchor);
      continue;
    }
    ip = match_end(base, anchor + 4, ip_bound, distance) - ipshift;
    --distance;  // biased: 0 means a run
    const int len = ip - anchor;
    if (len < minlen) {
      literal(anchor);
      continue;
    }
    if (copy == 0) --out;  // no literal run open: its assumed control byte goes
    copy = 0;
    if (len >= 7) out += (len - 7) / 255 + 1;
    out += distance < kMaxDistance ? 2 : 4;
    table[hash_of(load32(base + ip), kProbeHashLog)] = std::uint16_t(ip);
    ip += 2;
    ++out;  // a literal run is assumed to follow
  }
  return double(ip) / double(out);
}

// The smallest probe ratio worth compressing at each clevel (c-blosc's cratio_ table).
constexpr double kMinProbeRatio[10] = {0, 2, 1.5, 1.2, 1.2, 1.2, 1.2, 1.15, 1.1, 1.0};
constexpr unsigned kHashLogOfLevel[10] = {0, kHashLog - 2, kHashLog - 1, kHashLog, kHashLog,
                                          kHashLog, kHashLog, kHashLog, kHashLog, kHashLog};

}  // namespace

int blosclz_compress_stream(int clevel, const std::uint8_t* src, int length, std::uint8_t* dst, int capacity,
                            bool split, std::uint32_t* hash_table) noexcept {
  if (clevel < 1 || clevel > 9 || length < 0) return 0;
  // Entropy probe on the last quarter, then c-blosc's minimum match: 4 for split streams of
  // data that compresses well, else 3 (one byte less taken back from every match's end).
  const int maxlen = length / 4;
  const double ratio = probe_ratio(src + (length - maxlen), maxlen, 3, 3);
  if (ratio < kMinProbeRatio[clevel]) return 0;
  const int ipshift = !split || ratio < 4 ? 3 : 4;
  const unsigned minlen = unsigned(ipshift);
  if (length < 16 || capacity < 66) return 0;

  const unsigned hashlog = kHashLogOfLevel[clevel];
  std::memset(hash_table, 0, (std::size_t(1) << hashlog) * sizeof(std::uint32_t));
  const int ip_bound = length - 1;
  const int ip_limit = length - 12;
  int op = 0;
  // The literal run being written: `copy` bytes after its control byte at op - copy - 1.
  unsigned copy = 4;
  dst[op++] = kMaxLiteralRun - 1;
  for (int i = 0; i < 4; ++i) dst[op++] = src[i];
  int ip = 4;

  while (ip < ip_limit) {
    const int anchor = ip;
    const std::uint32_t seq = load32(src + ip);
    const std::uint32_t h = hash_of(seq, hashlog);
    const std::uint32_t ref = hash_table[h];
    unsigned distance = unsigned(anchor) - ref;
    hash_table[h] = std::uint32_t(anchor);

    bool literal = distance == 0 || distance >= kMaxFarDistance || load32(src + ref) != seq;
    unsigned len = 0;
    if (!literal) {
      ip = match_end(src, anchor + 4, ip_bound, distance) - ipshift;
      --distance;  // biased: 0 means a run
      len = unsigned(ip - anchor);
      // Short matches cost the decoder more than literals; far ones need six bytes or more.
      literal = len < minlen || (len <= 5 && distance >= kMaxDistance);
    }
    if (literal) {
      if (op + 2 > capacity) return 0;
      dst[op++] = src[anchor];
      ip = anchor + 1;
      if (++copy == kMaxLiteralRun) {
        copy = 0;
        dst[op++] = kMaxLiteralRun - 1;
      }
      continue;
    }

    if (copy != 0) {
      dst[op - copy - 1] = std::uint8_t(copy - 1);  // close the literal run
    } else {
      --op;  // drop the control byte of the empty run
    }
    copy = 0;
    const bool far = distance >= kMaxDistance;
    if (far) distance -= kMaxDistance;
    const unsigned near_bits = far ? 31U : distance >> 8U;
    if (len < 7) {
      if (op + (far ? 4 : 2) > capacity) return 0;
      dst[op++] = std::uint8_t((len << 5U) + near_bits);
    } else {
      if (op + 1 > capacity) return 0;
      dst[op++] = std::uint8_t((7U << 5U) + near_bits);
      for (len -= 7; len >= 255; len -= 255) {
        if (op + 1 > capacity) return 0;
        dst[op++] = 255;
      }
      if (op + (far ? 4 : 2) > capacity) return 0;
      dst[op++] = std::uint8_t(len);
    }
    if (far) {
      dst[op++] = 255;
      dst[op++] = std::uint8_t(distance >> 8U);
    }
    dst[op++] = std::uint8_t(distance & 255U);

    // Hash the match's end (and at clevel 9 the position after it, from the same word).
    std::uint32_t end_seq = load32(src + ip);
    hash_table[hash_of(end_seq, hashlog)] = std::uint32_t(ip++);
    if (clevel == 9) {
      end_seq >>= 8U;
      hash_table[hash_of(end_seq, hashlog)] = std::uint32_t(ip);
    }
    ++ip;
    if (op + 1 > capacity) return 0;
    dst[op++] = kMaxLiteralRun - 1;  // a literal run is assumed to follow
  }

  // The rest as literals.
  while (ip <= ip_bound) {
    if (op + 2 > capacity) return 0;
    dst[op++] = src[ip++];
    if (++copy == kMaxLiteralRun) {
      copy = 0;
      dst[op++] = kMaxLiteralRun - 1;
    }
  }
  if (copy != 0) {
    dst[op - copy - 1] = std::uint8_t(copy - 1);
  } else {
    --op;
  }
  dst[0] |= 1U << 5U;  // BloscLZ's format marker
  return op;
}

}  // namespace h5sparse
