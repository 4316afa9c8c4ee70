// Section 0 codecs: every encoding round-trips, the smallest one is chosen, the Lifeboat
// benchmark patterns meet their size targets, and corrupt input is rejected, never trusted.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "h5sparse/error.hpp"
#include "../fuzz/rice_reference.hpp"
#include "h5sparse/selection_codec.hpp"

using namespace h5sparse;

namespace {

using Dims = std::vector<std::uint64_t>;

ChunkSelection random_selection(std::uint64_t n, double density, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution pick(density);
  ChunkSelection s(n);
  for (std::uint64_t i = 0; i < n; ++i)
    if (pick(rng)) s.set(i);
  return s;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> runs_of(const ChunkSelection& s) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
  s.for_each_run([&](std::uint64_t f, std::uint64_t l) { runs.emplace_back(f, l); });
  return runs;
}

}  // namespace

TEST(ChunkSelection, RunsMatchBits) {
  for (double density : {0.01, 0.3, 0.7, 0.99}) {
    const ChunkSelection s = random_selection(1000, density, 7);
    ChunkSelection rebuilt(1000);
    for (auto [f, l] : runs_of(s)) rebuilt.set_range(f, l);
    EXPECT_EQ(rebuilt, s);
    const auto runs = runs_of(s);
    for (std::size_t k = 1; k < runs.size(); ++k)
      EXPECT_GT(runs[k].first, runs[k - 1].first + runs[k - 1].second);  // maximal: gaps between
  }
  ChunkSelection full(130);
  full.set_range(0, 130);
  EXPECT_EQ(runs_of(full), (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 130}}));
}

TEST(SelectionCodec, EveryEncodingRoundTrips) {
  const Dims dims{7, 9, 13};
  for (double density : {0.0, 0.02, 0.5, 0.97, 1.0}) {
    const ChunkSelection s = random_selection(7 * 9 * 13, density, unsigned(density * 100));
    for (auto e : {SelectionEncoding::bitmap, SelectionEncoding::offsets, SelectionEncoding::runs,
                   SelectionEncoding::rice_offsets, SelectionEncoding::elias_fano}) {
      if (e == SelectionEncoding::elias_fano && s.none()) continue;  // the empty tag's
      const Bytes b = encode_selection_as(e, s, dims);
      std::uint64_t defined = ~std::uint64_t(0);
      EXPECT_EQ(decode_selection(b.data(), b.size(), dims, &defined), s);
      EXPECT_EQ(defined, s.defined_count());  // the count the decoder reports
    }
    const Bytes best = encode_selection(s, dims);
    EXPECT_EQ(decode_selection(best.data(), best.size(), dims), s);
  }
}

TEST(SelectionCodec, ChoosesTheSmallest) {
  const Dims dims{64, 64};
  ChunkSelection empty(4096), all(4096), rect(4096);
  all.set_range(0, 4096);
  for (int r = 10; r < 30; ++r) rect.set_range(std::uint64_t(r * 64 + 5), 40);
  EXPECT_EQ(encode_selection(empty, dims), Bytes{0});
  EXPECT_EQ(encode_selection(all, dims), Bytes{1});
  const Bytes block = encode_selection(rect, dims);
  EXPECT_EQ(block[0], std::uint8_t(SelectionEncoding::blocks));
  EXPECT_LE(block.size(), 8u);
  EXPECT_EQ(decode_selection(block.data(), block.size(), dims), rect);
  ChunkSelection few(4096);
  few.set(1000);
  few.set(3000);
  EXPECT_EQ(encode_selection(few, dims)[0], std::uint8_t(SelectionEncoding::offsets));
  EXPECT_EQ(encode_selection(random_selection(4096, 0.01, 1), dims)[0],
            std::uint8_t(SelectionEncoding::elias_fano));  // within 1/8 of the Rice coding
  EXPECT_EQ(encode_selection(random_selection(4096, 0.5, 1), dims)[0], std::uint8_t(SelectionEncoding::bitmap));
}

// The three patterns of the Lifeboat benchmark (1024x1024 uint8, 10% defined, one chunk).
TEST(SelectionCodec, LifeboatPatternsMeetTargets) {
  const Dims dims{1024, 1024};
  std::mt19937_64 rng(42);
  ChunkSelection points(1 << 20), rect(1 << 20), row_runs(1 << 20);
  for (std::uint64_t r = 0; r < 1024; ++r) {
    std::vector<std::uint64_t> cols(1024);
    for (std::uint64_t c = 0; c < 1024; ++c) cols[c] = c;
    std::shuffle(cols.begin(), cols.end(), rng);
    for (int k = 0; k < 102; ++k) points.set(r * 1024 + cols[std::size_t(k)]);
    row_runs.set_range(r * 1024 + rng() % (1024 - 102), 102);
  }
  for (std::uint64_t r = 0; r < 324; ++r) rect.set_range((100 + r) * 1024 + 200, 324);
  // Rice-coded offsets: about 4.9 bits per point (entropy bound 60,723 bytes; varint gaps 104 KB);
  // the writer's Elias-Fano offsets within 1/8 of that (Lifeboat's target: 131,072).
  EXPECT_LE(encode_selection_as(SelectionEncoding::rice_offsets, points, dims).size(), 66000u);
  EXPECT_LE(encode_selection(points, dims).size(), 66000u * 9 / 8);
  EXPECT_LE(encode_selection(rect, dims).size(), 64u);
  EXPECT_LE(encode_selection(row_runs, dims).size(), 4200u);
}

TEST(SelectionCodec, RejectsCorruptInput) {
  const Dims dims{16, 16};
  auto corrupt = [&](Bytes b) {
    try {
      decode_selection(b.data(), b.size(), dims);
      return false;
    } catch (const Error& e) {
      return e.code() == ErrorCode::corrupt_data;
    }
  };
  EXPECT_TRUE(corrupt({}));
  EXPECT_TRUE(corrupt({9}));                  // unknown tag
  EXPECT_TRUE(corrupt({0, 0}));               // trailing byte
  EXPECT_TRUE(corrupt({2, 1, 2}));            // short bitmap
  EXPECT_TRUE(corrupt({3, 2, 5}));            // truncated offsets
  EXPECT_TRUE(corrupt({3, 1, 0x80, 0x02}));   // offset 256 outside 256 elements
  EXPECT_TRUE(corrupt({4, 1, 250, 1, 10}));   // run past the end
  EXPECT_TRUE(corrupt({5, 1, 15, 1, 0, 0}));  // block past the end
  EXPECT_TRUE(corrupt({3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));  // overlong varint
  // Rice offsets (k = 2): gap 5 is 1 one, a zero, low bits 01 -> bits 1,0,1,0 = byte 0x05.
  EXPECT_FALSE(corrupt({6, 1, 2, 0x05}));
  EXPECT_TRUE(corrupt({6, 1}));                  // no parameter
  EXPECT_TRUE(corrupt({6, 1, 2}));               // no gap
  EXPECT_TRUE(corrupt({6, 1, 33, 0}));           // parameter above 32
  EXPECT_TRUE(corrupt({6, 1, 2, 0x05, 0x00}));   // trailing byte
  EXPECT_TRUE(corrupt({6, 1, 2, 0x15}));         // nonzero padding bit
  EXPECT_FALSE(corrupt({6, 2, 2, 0x05}));        // the padding bits give a second gap, 0
  EXPECT_TRUE(corrupt({6, 3, 2, 0x05}));         // third gap truncated
  EXPECT_TRUE(corrupt({6, 1, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                       0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                       0xFF, 0xFF, 0xFF, 0xFF, 0x00}));  // unary run of 256: past the chunk
  EXPECT_FALSE(corrupt({6, 1, 8, 0xFE, 0x01}));        // k = 8: q 0, low 255: the last element
  EXPECT_TRUE(corrupt({6, 2, 8, 0xFE, 0x01, 0x00}));   // and then one past it
  EXPECT_TRUE(corrupt({6, 1, 8, 0x01, 0x00}));         // q 1: gap 256 and more
  // Random bytes after each tag: decode either succeeds with a valid selection or says corrupt.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20000; ++trial) {
    Bytes b(1 + rng() % 12);
    for (auto& x : b) x = std::uint8_t(rng());
    b[0] = std::uint8_t(rng() % 8);
    try {
      const ChunkSelection s = decode_selection(b.data(), b.size(), dims);
      EXPECT_LE(s.defined_count(), 256u);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::corrupt_data);
    }
  }
}

// The writer's choice (lower bounds, candidates abandoned once they reach the best size, a
// cheap pre-check before the block search) equals an exhaustive search: every encoding built
// in full, the smallest kept, ties to the lower tag.
TEST(SelectionCodec, ChoiceMatchesExhaustiveSearch) {
  std::mt19937_64 rng(2024);
  const std::vector<Dims> shapes{{200}, {64}, {16, 16}, {13, 40}, {7, 9, 13}, {4, 4, 4, 4}, {256, 256}};
  int trials = 0;
  for (const Dims& dims : shapes) {
    std::uint64_t n = 1;
    for (std::uint64_t d : dims) n *= d;
    for (int t = 0; t < 300; ++t, ++trials) {
      ChunkSelection s(n);
      switch (t % 4) {
        case 0: s = random_selection(n, std::uniform_real_distribution<double>(0, 1)(rng), unsigned(rng())); break;
        case 1: s = random_selection(n, 0.02, unsigned(rng())); break;
        case 2: {  // a few runs
          for (int k = int(rng() % 4); k >= 0; --k) {
            const std::uint64_t first = rng() % n;
            s.set_range(first, 1 + rng() % (n - first));
          }
          break;
        }
        default: {  // one rectangle, sometimes with one element more or less
          std::vector<std::uint64_t> lo(dims.size()), ext(dims.size());
          for (std::size_t d = 0; d < dims.size(); ++d) {
            lo[d] = rng() % dims[d];
            ext[d] = 1 + rng() % (dims[d] - lo[d]);
          }
          for (std::uint64_t i = 0; i < n; ++i) {
            std::uint64_t rest = i;
            bool inside = true;
            for (std::size_t d = dims.size(); d-- > 0;) {
              const std::uint64_t c = rest % dims[d];
              rest /= dims[d];
              inside = inside && c >= lo[d] && c < lo[d] + ext[d];
            }
            if (inside) s.set(i);
          }
          if (rng() % 3 == 0) {
            const std::uint64_t i = rng() % n;
            s.test(i) ? s.reset(i) : s.set(i);
          }
        }
      }
      Bytes expected;
      if (s.none()) expected = {0};
      else if (s.all()) expected = {1};
      else {
        for (auto e : {SelectionEncoding::bitmap, SelectionEncoding::offsets, SelectionEncoding::runs,
                       SelectionEncoding::blocks, SelectionEncoding::rice_offsets}) {
          Bytes b;
          try {
            b = encode_selection_as(e, s, dims);
          } catch (const Error&) {
            continue;  // not one block
          }
          if (expected.empty() || b.size() < expected.size()) expected = b;
        }
        // Then the writers' one preference (docs/FORMAT.md): Elias-Fano over Rice within 1/8.
        if (expected[0] == std::uint8_t(SelectionEncoding::rice_offsets)) {
          const Bytes ef = encode_selection_as(SelectionEncoding::elias_fano, s, dims);
          if (ef.size() * 8 <= expected.size() * 9) expected = ef;
        }
      }
      const Bytes chosen = encode_selection(s, dims);
      ASSERT_EQ(chosen, expected) << "shape rank " << dims.size() << ", trial " << t;
      ASSERT_EQ(decode_selection(chosen.data(), chosen.size(), dims), s);
    }
  }
  EXPECT_EQ(trials, 2100);
}

namespace {

// Tag 6 written bit by bit, independently of the core's writer (docs/FORMAT.md).
Bytes reference_rice(const ChunkSelection& s, unsigned k) {
  std::vector<std::uint64_t> offsets;
  s.for_each_run([&](std::uint64_t first, std::uint64_t length) {
    for (std::uint64_t i = first; i < first + length; ++i) offsets.push_back(i);
  });
  return h5sparse_test::reference_rice_encode(offsets, k);
}

}  // namespace

// The writer's bitstream is the format's (an independent bit-by-bit writer agrees), and its
// Rice parameter, chosen from the mean gap, is the best one for random selections.
TEST(SelectionCodec, RiceOffsetsMatchTheFormatAndTheBestParameter) {
  const Dims dims{256, 256};
  for (double density : {0.0001, 0.001, 0.003, 0.01, 0.05, 0.1, 0.2, 0.3, 0.6}) {
    const ChunkSelection s = random_selection(65536, density, unsigned(density * 1e4));
    const Bytes written = encode_selection_as(SelectionEncoding::rice_offsets, s, dims);
    ASSERT_GE(written.size(), 3u);
    std::size_t best = SIZE_MAX;
    unsigned best_k = 0;
    for (unsigned kk = 0; kk <= 20; ++kk) {
      const Bytes ref = reference_rice(s, kk);
      EXPECT_EQ(decode_selection(ref.data(), ref.size(), dims), s);
      if (ref.size() < best) best = ref.size(), best_k = kk;
    }
    EXPECT_EQ(written.size(), best) << "density " << density << ", best k " << best_k;
    // The same bytes as the reference writer with the writer's parameter.
    bool matched = false;
    for (unsigned kk = 0; kk <= 32 && !matched; ++kk) matched = reference_rice(s, kk) == written;
    EXPECT_TRUE(matched) << "density " << density;
  }
  // 66 random points of 65,536 (the density benchmark's 0.1% chunk): ~99 bytes, tag 3 ~134.
  std::mt19937_64 rng(3);
  ChunkSelection points(65536);
  while (points.defined_count() < 66) points.set(rng() % 65536);
  const Bytes rice = encode_selection_as(SelectionEncoding::rice_offsets, points, dims);
  EXPECT_LE(rice.size(), 104u);
  EXPECT_LE(rice.size() * 5, encode_selection_as(SelectionEncoding::offsets, points, dims).size() * 4);
  const Bytes chosen = encode_selection(points, dims);  // Elias-Fano, within 1/8 of the Rice coding
  EXPECT_EQ(chosen[0], std::uint8_t(SelectionEncoding::elias_fano));
  EXPECT_LE(chosen.size() * 8, rice.size() * 9);
}

namespace {

std::vector<std::uint32_t> offsets_of(const ChunkSelection& s) {
  std::vector<std::uint32_t> out;
  for (std::uint64_t i = 0; i < s.element_count(); ++i)
    if (s.test(i)) out.push_back(std::uint32_t(i));
  return out;
}

// A selection of one rectangle, of runs, or of scattered points, at a given density.
ChunkSelection shaped_selection(const Dims& dims, int shape, double density, unsigned seed) {
  std::uint64_t n = 1;
  for (std::uint64_t d : dims) n *= d;
  if (shape == 0) return random_selection(n, density, seed);
  ChunkSelection s(n);
  std::mt19937_64 rng(seed);
  if (shape == 1) {  // runs
    for (std::uint64_t i = 0; i < n; i += 1 + rng() % 200) s.set_range(i, std::min<std::uint64_t>(n - i, 1 + rng() % 9));
    return s;
  }
  const std::uint64_t row = dims.back(), rows = n / row;  // a rectangle over the last two dims
  const std::uint64_t r0 = rng() % rows, c0 = rng() % row;
  for (std::uint64_t r = r0; r < std::min(rows, r0 + 3); ++r) s.set_range(r * row + c0, std::min(row - c0, std::uint64_t(5)));
  return s;
}

}  // namespace

// Coordinate I/O encodes and decodes offset lists: the same bytes and the same elements as the
// bitmap form, for every encoding the chooser can pick.
TEST(SelectionCodec, OffsetListsEncodeAndDecodeAsBitmaps) {
  int checked = 0;
  for (const Dims& dims : {Dims{64}, Dims{256, 256}, Dims{1024, 1024}, Dims{16, 16, 16}}) {
    for (int shape : {0, 1, 2}) {
      for (double density : {0.0, 0.0001, 0.003, 0.05, 0.4, 0.97, 1.0}) {
        const ChunkSelection s = shaped_selection(dims, shape, density, unsigned(checked));
        const std::vector<std::uint32_t> offsets = offsets_of(s);
        const Bytes expected = encode_selection(s, dims);
        const Bytes got = encode_selection(offsets.data(), offsets.size(), dims);
        ASSERT_EQ(got, expected) << "shape " << shape << " density " << density << " tag " << int(expected[0]);
        std::vector<std::uint32_t> decoded{99};
        decode_selection_offsets(expected.data(), expected.size(), dims, decoded);
        ASSERT_EQ(decoded, offsets) << "tag " << int(expected[0]);
        ++checked;
      }
    }
  }
  for (SelectionEncoding e : {SelectionEncoding::bitmap, SelectionEncoding::offsets, SelectionEncoding::runs,
                              SelectionEncoding::rice_offsets,
                              SelectionEncoding::elias_fano}) {  // each encoding decodes to offsets
    const ChunkSelection s = random_selection(5000, 0.1, 3);
    const Bytes encoded = encode_selection_as(e, s, Dims{50, 100});
    std::vector<std::uint32_t> decoded;
    decode_selection_offsets(encoded.data(), encoded.size(), Dims{50, 100}, decoded);
    EXPECT_EQ(decoded, offsets_of(s)) << int(e);
  }
}

TEST(SelectionCodec, OffsetListDecoderRejectsCorruptInput) {
  const Dims dims{100};
  std::vector<std::uint32_t> out;
  const std::vector<Bytes> corrupt = {
      {},                                                  // no tag
      {std::uint8_t(SelectionEncoding::offsets), 2, 5},    // truncated
      {std::uint8_t(SelectionEncoding::offsets), 1, 100},  // outside
      {std::uint8_t(SelectionEncoding::runs), 1, 90, 20},  // run past the end
      {std::uint8_t(SelectionEncoding::offsets), 1, 5, 0}, // trailing byte
      {std::uint8_t(SelectionEncoding::rice_offsets), 1, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
       0xFF, 0xFF, 0xFF, 0xFF, 0xFF},  // a gap past the chunk
      {std::uint8_t(SelectionEncoding::elias_fano), 1, 0, 0x00},  // trailing zero byte
      {std::uint8_t(SelectionEncoding::elias_fano), 2, 0, 0x01},  // one high bit for two offsets
      {std::uint8_t(SelectionEncoding::elias_fano), 2, 0, 0x03},  // the same offset twice
      {std::uint8_t(SelectionEncoding::elias_fano), 1, 33, 0, 0, 0, 0, 0, 0x01},  // 33 low bits
      {std::uint8_t(SelectionEncoding::elias_fano), 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01},  // 104
      {std::uint8_t(SelectionEncoding::elias_fano), 1, 4, 0x10, 0x01},  // nonzero low padding
      {std::uint8_t(SelectionEncoding::elias_fano), 0, 0, 0x01},  // no offsets
      {std::uint8_t(SelectionEncoding::elias_fano), 1, 4},        // truncated
      {42},                                                // unknown tag
  };
  for (const Bytes& b : corrupt)
    EXPECT_THROW(decode_selection_offsets(b.data(), b.size(), dims, out), Error) << testing::PrintToString(b);
}

// Elias-Fano offsets (tag 7) as docs/FORMAT.md describes them, written by hand: offsets 3, 17
// and 18 of 32 with 2 low bits: lows 3, 1, 2 (bits 11 10 01 -> 0b100111 = 0x27), highs 0, 4, 4
// at high bits 0, 5, 6 (0b1100001 = 0x61).
TEST(SelectionCodec, EliasFanoMatchesTheFormat) {
  const Dims dims{4, 8};
  const Bytes written{std::uint8_t(SelectionEncoding::elias_fano), 3, 2, 0x27, 0x61};
  ChunkSelection s(32);
  for (std::uint64_t i : {3, 17, 18}) s.set(i);
  EXPECT_EQ(decode_selection(written.data(), written.size(), dims), s);
  EXPECT_EQ(encode_selection_as(SelectionEncoding::elias_fano, s, dims), written);
}

// Ranges that go backwards or overlap are refused before anything is read (the room for the
// elements is sized by their widths).
TEST(SelectionCodec, RangesMustAscendWithoutOverlapping) {
  const Dims dims{8, 8};
  const ChunkSelection s = random_selection(64, 0.5, 3);
  for (auto e : {SelectionEncoding::bitmap, SelectionEncoding::elias_fano}) {
    const Bytes b = encode_selection_as(e, s, dims);
    std::vector<std::uint32_t> offsets;
    std::vector<RankRun> runs;
    for (const std::vector<OffsetRange>& bad :
         {std::vector<OffsetRange>{{0, 1}, {1, 2}, {3, 2}}, std::vector<OffsetRange>{{0, 10}, {5, 15}}}) {
      try {
        decode_selection_in(b.data(), b.size(), dims, bad, offsets, runs);
        FAIL() << "no error";
      } catch (const Error& err) {
        EXPECT_EQ(err.code(), ErrorCode::invalid_argument);
      }
    }
  }
}

// Reads of ranges of a selection (decode_selection_in) give the offsets inside and their ranks,
// in every encoding, for lines, columns and single elements of a chunk.
TEST(SelectionCodec, RangesGiveTheirOffsetsAndRanks) {
  const Dims dims{64, 96};
  std::mt19937_64 rng(7);
  for (double density : {0.001, 0.03, 0.2, 0.7}) {
    const ChunkSelection s = random_selection(64 * 96, density, unsigned(density * 1000));
    const std::vector<std::uint32_t> all = offsets_of(s);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<OffsetRange> ranges;
      for (std::uint64_t at = rng() % 200; at < 64 * 96; at += 1 + rng() % 700) {
        const std::uint64_t end = std::min<std::uint64_t>(64 * 96, at + 1 + rng() % (trial % 2 ? 1 : 150));
        ranges.push_back({at, end});
        at = end;
      }
      std::vector<std::uint32_t> expected;
      std::vector<std::uint64_t> expected_ranks;
      for (std::size_t k = 0; k < all.size(); ++k)
        for (const OffsetRange& r : ranges)
          if (all[k] >= r.first && all[k] < r.end) expected.push_back(all[k]), expected_ranks.push_back(k);
      for (auto e : {SelectionEncoding::bitmap, SelectionEncoding::offsets, SelectionEncoding::runs,
                     SelectionEncoding::rice_offsets, SelectionEncoding::elias_fano}) {
        const Bytes b = encode_selection_as(e, s, dims);
        std::vector<std::uint32_t> offsets{1};
        std::vector<RankRun> runs{{1, 1}};
        EXPECT_EQ(decode_selection_in(b.data(), b.size(), dims, ranges, offsets, runs), all.size());
        ASSERT_EQ(offsets, expected) << "encoding " << int(e) << ", density " << density;
        std::vector<std::uint64_t> ranks;
        for (const RankRun& run : runs) {
          ASSERT_GT(run.count, 0u);
          if (!ranks.empty()) {
            ASSERT_GT(run.rank, ranks.back());
          }
          for (std::uint64_t k = 0; k < run.count; ++k) ranks.push_back(run.rank + k);
        }
        ASSERT_EQ(ranks, expected_ranks) << "encoding " << int(e);
      }
    }
  }
}

