// Packing non-fill elements: the run-time chosen kernel (AVX2 where the CPU has it) and the
// baseline give exactly what an element-by-element reference gives, for 4- and 8-byte and
// other widths, any alignment of the stretch in the chunk, any density, any fill value.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "h5sparse/fill_scan.hpp"

using namespace h5sparse;

TEST(FillScan, KernelsMatchElementwiseReference) {
  std::mt19937_64 rng(17);
  for (std::size_t es : {1u, 2u, 3u, 4u, 8u, 12u}) {
    for (int trial = 0; trial < 400; ++trial) {
      const std::uint64_t n = 512;
      // A quarter of the stretches start on a word of the selection (the 64-element kernel),
      // some with nothing or everything differing (whole words skipped or copied).
      const std::uint64_t start = trial % 4 ? rng() % 200 : (rng() % 3) * 64 + (trial % 8 ? 0 : 8);
      const std::uint64_t length = rng() % (n - start);
      const double density = trial % 16 == 0 ? 1.0 : trial % 16 == 4 ? 0.0
                                                    : std::uniform_real_distribution<double>(0, 1)(rng);
      std::vector<std::uint8_t> fill(es);
      for (auto& b : fill) b = trial % 3 ? std::uint8_t(rng()) : 0;
      std::vector<std::uint8_t> src(length * es);
      std::bernoulli_distribution differs(density);
      for (std::uint64_t k = 0; k < length; ++k) {
        std::memcpy(&src[k * es], fill.data(), es);
        if (differs(rng)) src[k * es + rng() % es] ^= std::uint8_t(1 + rng() % 255);  // one byte differs
      }
      ChunkSelection expected_bits(n);
      std::vector<std::uint8_t> expected;
      for (std::uint64_t k = 0; k < length; ++k) {
        if (std::memcmp(&src[k * es], fill.data(), es) == 0) continue;
        expected.insert(expected.end(), &src[k * es], &src[(k + 1) * es]);
        expected_bits.set(start + k);
      }
      for (bool baseline : {false, true}) {
        ChunkSelection bits(n);
        bits.set(0);  // bits set before stay set
        std::vector<std::uint8_t> out(length * es + kPackSlack);
        std::uint8_t* end = baseline ? pack_differing_baseline(src.data(), length, start, fill.data(), es, bits, out.data())
                                     : pack_differing(src.data(), length, start, fill.data(), es, bits, out.data());
        ASSERT_EQ(std::size_t(end - out.data()), expected.size()) << "width " << es << (baseline ? " baseline" : "");
        EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out.begin()));
        ChunkSelection want = expected_bits;
        want.set(0);
        EXPECT_EQ(bits, want);
      }
    }
  }
}

TEST(FillScan, AllElementsEqualFindsAnyDifferingByte) {
  for (std::size_t es : {1u, 3u, 4u, 8u, 12u}) {
    const std::vector<std::uint8_t> value = [&] {
      std::vector<std::uint8_t> v(es);
      for (std::size_t b = 0; b < es; ++b) v[b] = std::uint8_t(0x5a + b);
      return v;
    }();
    for (std::uint64_t count : {0ull, 1ull, 2ull, 7ull, 64ull, 1000ull}) {
      std::vector<std::uint8_t> src;
      for (std::uint64_t i = 0; i < count; ++i) src.insert(src.end(), value.begin(), value.end());
      EXPECT_TRUE(h5sparse::all_elements_equal(src.data(), count, value.data(), es));
      for (std::size_t pos = 0; pos < src.size(); pos += 1 + src.size() / 17) {
        src[pos] ^= 0x01;
        EXPECT_FALSE(h5sparse::all_elements_equal(src.data(), count, value.data(), es))
            << "element size " << es << ", count " << count << ", byte " << pos;
        src[pos] ^= 0x01;
      }
    }
  }
}
