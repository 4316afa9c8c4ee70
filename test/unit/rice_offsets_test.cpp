// The table-driven Rice offsets decoder (selection tag 6) against a bit-at-a-time reader written
// from the format (test/fuzz/rice_reference.hpp): the same offsets, or both refusing, for random
// selections of every density (every Rice parameter the writer picks, and every parameter 0-12
// forced), chunk sizes around the decoder's fast-path limits and not multiples of 64, and
// thousands of corrupted streams (flipped bits, truncation, extra bytes, wrong counts).
#include <gtest/gtest.h>

#include <random>

#include "../fuzz/rice_reference.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/selection_codec.hpp"

using namespace h5sparse;

namespace {

std::vector<std::uint64_t> offsets_of(const ChunkSelection& s) {
  std::vector<std::uint64_t> offsets;
  s.for_each_run([&](std::uint64_t first, std::uint64_t length) {
    for (std::uint64_t i = first; i < first + length; ++i) offsets.push_back(i);
  });
  return offsets;
}

std::optional<std::vector<std::uint64_t>> core_offsets(const Bytes& b, std::uint64_t n) {
  try {
    return offsets_of(decode_selection(b.data(), b.size(), {n}));
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::corrupt_data) << e.what();
    return std::nullopt;
  }
}

// Tag 6 with a forced parameter k, written bit by bit.
Bytes rice_with(const ChunkSelection& s, unsigned k) { return h5sparse_test::reference_rice_encode(offsets_of(s), k); }

}  // namespace

TEST(RiceDecoder, MatchesTheReferenceOnValidStreams) {
  std::mt19937_64 rng(29);
  int streams = 0;
  for (std::uint64_t n : {1u, 63u, 64u, 65u, 224u, 225u, 300u, 1000u, 4096u, 65536u})
    for (double density : {0.0005, 0.005, 0.02, 0.05, 0.1, 0.2, 0.35, 0.6, 0.9, 1.0})
      for (int rep = 0; rep < 3; ++rep) {
        if (n == 65536 && rep == 1) continue;  // the largest chunk: random and clustered only
        ChunkSelection s(n);
        std::bernoulli_distribution pick(density);
        for (std::uint64_t i = 0; i < n; ++i)
          if (pick(rng)) s.set(i);
        // Clustered stretches too: long gaps between dense runs (long unary codes, big patterns).
        if (rep == 2 && n > 200)
          for (std::uint64_t i = 0; i < n; ++i)
            if ((i / 97) % 3) s.reset(i);
        std::vector<Bytes> streams_of_s{encode_selection_as(SelectionEncoding::rice_offsets, s, {n})};
        for (unsigned k = 0; k <= 12; ++k) streams_of_s.push_back(rice_with(s, k));
        for (const Bytes& b : streams_of_s) {
          const auto expected = h5sparse_test::reference_rice_offsets(b.data(), b.size(), n);
          ASSERT_TRUE(expected.has_value());
          const auto got = core_offsets(b, n);
          ASSERT_TRUE(got.has_value()) << "n " << n << " density " << density << " k " << int(b[b.size() > 3 ? 2 : 1]);
          ASSERT_EQ(*got, *expected) << "n " << n << " density " << density;
          ++streams;
        }
      }
  EXPECT_EQ(streams, (9 * 3 + 2) * 10 * 14);
}

TEST(RiceDecoder, AgreesWithTheReferenceOnCorruptStreams) {
  std::mt19937_64 rng(31);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::uint64_t n = std::uint64_t(1) << (6 + rng() % 9);  // 64 to 16,384
    ChunkSelection s(n);
    std::bernoulli_distribution pick(std::uniform_real_distribution<double>(0.001, 0.5)(rng));
    for (std::uint64_t i = 0; i < n; ++i)
      if (pick(rng)) s.set(i);
    Bytes b = trial % 2 ? encode_selection_as(SelectionEncoding::rice_offsets, s, {n}) : rice_with(s, rng() % 8);
    switch (trial % 5) {
      case 0:  // flipped bits in the stream
        for (int f = 1 + int(rng() % 3); f > 0 && b.size() > 3; --f) b[3 + rng() % (b.size() - 3)] ^= std::uint8_t(1 << rng() % 8);
        break;
      case 1:  // truncated
        b.resize(b.size() - std::min<std::size_t>(b.size() - 1, 1 + rng() % 8));
        break;
      case 2:  // extra bytes, zero or not
        for (int e = 1 + int(rng() % 9); e > 0; --e) b.push_back(std::uint8_t(rng() % 2 ? 0 : rng()));
        break;
      case 3:  // count off by a little (one-byte varint counts only)
        if (b.size() > 2 && b[1] < 0x7F && b[1] > 0) b[1] = std::uint8_t(b[1] + (rng() % 2 ? 1 : -1));
        break;
      default:  // another parameter
        if (b.size() > 2 && b[1] < 0x80) b[2] = std::uint8_t(rng() % 40);
        break;
    }
    const auto expected = h5sparse_test::reference_rice_offsets(b.data(), b.size(), n);
    const auto got = core_offsets(b, n);
    ASSERT_EQ(got.has_value(), expected.has_value()) << "trial " << trial << " n " << n;
    if (got) {
      ASSERT_EQ(*got, *expected) << "trial " << trial;
    }
    refused += !got;
  }
  EXPECT_GT(refused, 1000);
}
