// Unit tests of the codec core: round trips, known layouts, and rejection of corrupt input.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"
#include "h5sparse/section_pipeline.hpp"

using namespace h5sparse;

namespace {

Bytes smooth_floats(std::size_t count) {
  Bytes out(count * 4);
  for (std::size_t i = 0; i < count; ++i) {
    const float v = float(std::sin(double(i) * 0.001) * 100.0);
    std::memcpy(&out[i * 4], &v, 4);
  }
  return out;
}

Bytes slow_counts(std::size_t count) {  // uint32 values that repeat: compressible without shuffle
  Bytes out(count * 4);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t v = std::uint32_t(i / 37);
    std::memcpy(&out[i * 4], &v, 4);
  }
  return out;
}

Bytes random_bytes(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  Bytes out(count);
  for (auto& b : out) b = std::uint8_t(rng());
  return out;
}

}  // namespace

TEST(Shuffle, ByteShuffleLayoutAndRoundTrip) {
  const Bytes src = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  // two 4-byte elements of 4, remainder 3
  Bytes shuffled(src.size()), back(src.size());
  shuffle_bytes(shuffled.data(), src.data(), src.size(), 4);
  EXPECT_EQ(shuffled, (Bytes{1, 5, 2, 6, 3, 7, 4, 8, 9, 10, 11}));
  unshuffle_bytes(back.data(), shuffled.data(), src.size(), 4);
  EXPECT_EQ(back, src);
  for (std::size_t es : {1, 2, 3, 4, 8, 12, 16}) {
    const Bytes data = random_bytes(1001, unsigned(es));
    Bytes s(data.size()), u(data.size());
    shuffle_bytes(s.data(), data.data(), data.size(), es);
    unshuffle_bytes(u.data(), s.data(), data.size(), es);
    EXPECT_EQ(u, data) << "element size " << es;
  }
}

TEST(Deflate, RoundTripAndCorruption) {
  const Bytes data = smooth_floats(10000);
  Bytes packed(data.size());
  const std::size_t n = deflate_compress(packed.data(), packed.size(), data.data(), data.size(), 6);
  ASSERT_GT(n, 0u);
  ASSERT_LT(n, data.size());
  Bytes out(data.size());
  deflate_decompress_exact(out.data(), out.size(), packed.data(), n);
  EXPECT_EQ(out, data);
  EXPECT_EQ(deflate_decompress(packed.data(), n, 16, data.size()), data);
  // Wrong expected size, truncation and a flipped byte are all corrupt data.
  EXPECT_THROW(deflate_decompress_exact(out.data(), out.size() - 1, packed.data(), n), Error);
  EXPECT_THROW(deflate_decompress(packed.data(), n / 2, 16, data.size()), Error);
  EXPECT_THROW(deflate_decompress(packed.data(), n, 16, data.size() - 1), Error);
  packed[n / 2] ^= 0x55;
  EXPECT_THROW(deflate_decompress_exact(out.data(), out.size(), packed.data(), n), Error);
  // Incompressible input that cannot fit returns 0.
  const Bytes noise = random_bytes(4096, 1);
  Bytes small(4096);
  EXPECT_EQ(deflate_compress(small.data(), small.size(), noise.data(), noise.size(), 9), 0u);
  EXPECT_THROW(deflate_compress(small.data(), small.size(), noise.data(), noise.size(), 10), Error);
}

class BloscCompressors : public ::testing::TestWithParam<BloscCompressor> {};

TEST_P(BloscCompressors, RoundTripEveryLevelAndShuffle) {
  const Bytes data = smooth_floats(50000);
  for (int clevel : {0, 1, 5, 9}) {
    for (Shuffle shuffle : {Shuffle::none, Shuffle::byte, Shuffle::bit}) {
      BloscParams p{clevel, shuffle, GetParam(), 4, 2};
      Bytes packed(blosc_compress_bound(data.size()));
      const std::size_t n = blosc_compress(packed.data(), packed.size(), data.data(), data.size(), p);
      ASSERT_GT(n, 0u);
      if (clevel > 0 && shuffle != Shuffle::none) {  // unshuffled floats defeat lz4
        EXPECT_LT(n, data.size());
      }
      EXPECT_EQ(blosc_decoded_size(packed.data(), n), data.size());
      Bytes out(data.size());
      EXPECT_EQ(blosc_decompress(out.data(), out.size(), packed.data(), n, 1), data.size());
      EXPECT_EQ(out, data);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, BloscCompressors,
                         ::testing::Values(BloscCompressor::blosclz, BloscCompressor::lz4,
                                           BloscCompressor::lz4hc, BloscCompressor::zlib,
                                           BloscCompressor::zstd),
                         [](const auto& info) { return std::string(blosc_compressor_name(info.param)); });

TEST(Blosc, RejectsCorruptFrames) {
  const Bytes data = smooth_floats(20000);
  Bytes packed(blosc_compress_bound(data.size()));
  const std::size_t n = blosc_compress(packed.data(), packed.size(), data.data(), data.size(),
                                       BloscParams{5, Shuffle::byte, BloscCompressor::lz4, 4, 1});
  Bytes out(data.size());
  EXPECT_THROW(blosc_decoded_size(packed.data(), n - 1), Error);   // truncated
  EXPECT_THROW(blosc_decoded_size(packed.data(), 8), Error);       // shorter than a header
  Bytes oversized = packed;
  oversized[4] = 0xFF; oversized[5] = 0xFF; oversized[6] = 0xFF; oversized[7] = 0x7F;  // nbytes
  EXPECT_THROW(blosc_decompress(out.data(), out.size(), oversized.data(), n, 1), Error);
  // Flipped payload bytes either fail or decode; they must never overrun (ASan checks).
  std::mt19937 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    Bytes bad(packed.begin(), packed.begin() + long(n));
    bad[16 + rng() % (n - 16)] ^= std::uint8_t(1 + rng() % 255);
    try {
      blosc_decompress(out.data(), out.size(), bad.data(), n, 1);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::corrupt_data);
    }
  }
}

TEST(Blosc, IncompressibleDataDoesNotPay) {
  const Bytes noise = random_bytes(8192, 9);
  Bytes packed(noise.size());
  EXPECT_EQ(blosc_compress(packed.data(), packed.size(), noise.data(), noise.size(),
                           BloscParams{5, Shuffle::none, BloscCompressor::blosclz, 1, 1}),
            0u);
}

TEST(Blosc, ThreadsFromEnvironment) {
  setenv("BLOSC_NTHREADS", "2", 1);
  EXPECT_EQ(blosc_threads_from_environment(), 2);
  setenv("BLOSC_NTHREADS", "x", 1);
  EXPECT_EQ(blosc_threads_from_environment(), 1);
  unsetenv("BLOSC_NTHREADS");
  EXPECT_EQ(blosc_threads_from_environment(), 1);
}

TEST(Lzf, RoundTripAndCorruption) {
  const Bytes data = slow_counts(30000);
  Bytes packed(data.size());
  const std::size_t n = lzf_compress(packed.data(), packed.size(), data.data(), data.size());
  ASSERT_GT(n, 0u);
  Bytes out(data.size());
  EXPECT_EQ(lzf_decompress(out.data(), out.size(), packed.data(), n), data.size());
  EXPECT_EQ(out, data);
  try {
    lzf_decompress(out.data(), out.size() / 2, packed.data(), n);
    FAIL() << "expected buffer_too_small";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::buffer_too_small);
  }
  std::mt19937 rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    Bytes bad(packed.begin(), packed.begin() + long(n));
    bad[rng() % n] ^= std::uint8_t(1 + rng() % 255);
    const std::size_t cut = trial % 3 == 0 ? n / 2 : n;
    try {
      lzf_decompress(out.data(), out.size(), bad.data(), cut);
    } catch (const Error&) {
    }
  }
  const Bytes noise = random_bytes(4096, 2);
  Bytes small(noise.size());
  EXPECT_EQ(lzf_compress(small.data(), small.size(), noise.data(), noise.size()), 0u);
}

// What mandatory filters store when compression does not pay: each codec's stored form decodes
// to the input, with the decoders the filters and section pipelines use.
TEST(Lzf, StoredStreamIsLiteralRunsThatDecode) {
  for (std::size_t size : {1, 31, 32, 33, 64, 4097}) {
    const Bytes noise = random_bytes(size, unsigned(size));
    Bytes stored(lzf_store_bound(size));
    ASSERT_EQ(stored.size(), size + (size + 31) / 32);
    EXPECT_EQ(lzf_store(stored.data(), stored.size() - 1, noise.data(), size), 0u) << "no room: refused";
    ASSERT_EQ(lzf_store(stored.data(), stored.size(), noise.data(), size), stored.size());
    EXPECT_EQ(stored[0], std::uint8_t(std::min<std::size_t>(size, 32) - 1));  // a literal run's control byte
    Bytes out(size);
    EXPECT_EQ(lzf_decompress(out.data(), out.size(), stored.data(), stored.size()), size);
    EXPECT_EQ(out, noise);
  }
}

TEST(Blosc, StoredFrameIsACopiedFrameThatDecodes) {
  const Bytes noise = random_bytes(8192, 9);
  const BloscParams p{5, Shuffle::byte, BloscCompressor::lz4, 4, 1};
  Bytes frame(blosc_compress_bound(noise.size()));
  EXPECT_EQ(blosc_store(frame.data(), frame.size() - 1, noise.data(), noise.size(), p), 0u);
  ASSERT_EQ(blosc_store(frame.data(), frame.size(), noise.data(), noise.size(), p), frame.size());
  EXPECT_EQ(blosc_decoded_size(frame.data(), frame.size()), noise.size());
  Bytes out(noise.size());
  EXPECT_EQ(blosc_decompress(out.data(), out.size(), frame.data(), frame.size(), 1), noise.size());
  EXPECT_EQ(out, noise);
}

TEST(SectionPipeline, NonShrinkingFiltersAreSkippedWhenOptionalAndStoreWhenMandatory) {
  const Bytes noise = random_bytes(5000, 4);
  for (const int id : {kFilterLzf, kFilterBlosc}) {
    std::uint32_t mask = 99;
    const SectionPipeline optional{{id, kFilterFlagOptional, {}}};
    EXPECT_EQ(apply_pipeline(optional, noise, 1, &mask), noise) << id;
    EXPECT_EQ(mask, 1u) << id;
    const SectionPipeline mandatory{{id, 0, {}}};
    const Bytes stored = apply_pipeline(mandatory, noise, 1, &mask);
    EXPECT_EQ(mask, 0u) << id;
    EXPECT_EQ(stored.size(), id == kFilterLzf ? lzf_store_bound(noise.size()) : blosc_compress_bound(noise.size()));
    EXPECT_EQ(reverse_pipeline(mandatory, {stored.data(), stored.size()}, mask, 1, noise.size()), noise) << id;
  }
}
