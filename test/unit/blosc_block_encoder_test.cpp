// Our zstd/zlib/lz4hc/lz4/blosclz Blosc encoder (blosc_block_encoder.hpp) against c-blosc 1.21's
// blosc_compress_ctx: the same return value and the same frame bytes for every codec, clevel
// 0-9, shuffle, typesize, size, forced block size and output capacity tried, and c-blosc
// decodes the frames back to the input.
#include <blosc.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "h5sparse/blosc_block_encoder.hpp"
#include "h5sparse/codecs.hpp"

using namespace h5sparse;

namespace {

constexpr BloscCompressor kCompressors[] = {BloscCompressor::zstd, BloscCompressor::zlib, BloscCompressor::lz4hc,
                                            BloscCompressor::lz4, BloscCompressor::blosclz};
constexpr Shuffle kShuffles[] = {Shuffle::none, Shuffle::byte, Shuffle::bit};

enum class Kind { smooth, noise, constant, repeats };

Bytes make_data(std::size_t nbytes, std::size_t typesize, Kind kind, unsigned seed) {
  Bytes out(nbytes);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < nbytes; ++i) {
    switch (kind) {
      case Kind::smooth: {
        // Smooth values with noisy low bytes, and a noisy stretch that some streams store raw.
        const std::size_t item = i / typesize, byte = i % typesize;
        const double v = std::sin(double(item) * 0.003) * 3000.0;
        out[i] = byte == 0 ? std::uint8_t(rng() % 16) : std::uint8_t(std::int64_t(v) >> (byte % 4));
        if (i > nbytes / 2 && i < nbytes / 2 + nbytes / 10) out[i] = std::uint8_t(rng());
        break;
      }
      case Kind::noise: out[i] = std::uint8_t(rng()); break;
      case Kind::constant: out[i] = 0x5a; break;
      case Kind::repeats: {
        // Noise that repeats pieces of itself from near (< 8 KiB), far (8-72 KiB) and too far
        // back (73,725 is one past the farthest), in runs of every length: BloscLZ's short,
        // long, near and far matches.
        static constexpr std::size_t kBack[] = {3, 700, 9000, 30'000, 73'724, 73'725};
        const std::size_t back = kBack[(i / 997) % 6];
        out[i] = i >= back && (i / 61) % 3 != 0 ? out[i - back] : std::uint8_t(rng());
        if ((i / 4001) % 7 == 3) out[i] = std::uint8_t(i / 300);  // runs
        break;
      }
    }
  }
  return out;
}

struct Result {
  int rc;
  Bytes frame;
};

Result ours(const Bytes& data, BloscParams p, std::size_t forced, std::size_t capacity) {
  Bytes out(capacity + 1, 0xEE);  // one guard byte
  const int rc = blosc_encode_frame(out.data(), capacity, data.data(), data.size(), p, forced);
  EXPECT_EQ(out[capacity], 0xEE) << "wrote past the capacity";
  out.resize(rc > 0 ? std::size_t(rc) : 0);
  return {rc, out};
}

Result theirs(const Bytes& data, const BloscParams& p, std::size_t forced, std::size_t capacity) {
  // Room for c-blosc's unchecked offset write past a too small capacity (it then fails anyway).
  Bytes out(capacity + 64, 0xEE);
  const int rc = blosc_compress_ctx(p.clevel, int(p.shuffle), p.typesize, data.size(), data.data(), out.data(),
                                    capacity, blosc_compressor_name(p.compressor), forced, 1);
  out.resize(rc > 0 ? std::size_t(rc) : 0);
  return {rc, out};
}

std::string describe(const BloscParams& p, std::size_t nbytes, std::size_t forced, std::size_t capacity, Kind kind) {
  return std::string(blosc_compressor_name(p.compressor)) + " clevel " + std::to_string(p.clevel) + " shuffle " +
         std::to_string(int(p.shuffle)) + " typesize " + std::to_string(p.typesize) + " nbytes " +
         std::to_string(nbytes) + " forced " + std::to_string(forced) + " capacity " + std::to_string(capacity) +
         " data " + std::to_string(int(kind));
}

// Compares one case; returns c-blosc's frame size (0 on failure).
int expect_same(const Bytes& data, const BloscParams& p, std::size_t forced, std::size_t capacity, Kind kind) {
  SCOPED_TRACE(describe(p, data.size(), forced, capacity, kind));
  const Result a = ours(data, p, forced, capacity);
  const Result b = theirs(data, p, forced, capacity);
  EXPECT_EQ(a.rc, b.rc);
  EXPECT_TRUE(a.frame == b.frame) << "frames differ";
  if (a.rc > 0 && a.frame == b.frame) {
    Bytes back(data.size() + 1);
    EXPECT_EQ(blosc_decompress_ctx(a.frame.data(), back.data(), back.size(), 1), int(data.size()));
    back.resize(data.size());
    EXPECT_TRUE(back == data) << "c-blosc does not decode our frame back to the input";
  }
  return b.rc;
}

}  // namespace

TEST(BloscBlockEncoder, SmallBuffersEveryLevelShuffleAndTypesize) {
  for (BloscCompressor c : kCompressors) {
    for (int clevel = 0; clevel <= 9; ++clevel) {
      for (Shuffle shuffle : kShuffles) {
        for (std::size_t typesize : {1, 2, 4, 8, 16, 24, 255, 300}) {
          for (std::size_t nbytes : {0, 1, 7, 127, 128, 129, 1000, 4099}) {
            for (Kind kind : {Kind::smooth, Kind::noise, Kind::constant}) {
              if (kind != Kind::smooth && nbytes < 1000) continue;
              const BloscParams p{clevel, shuffle, c, typesize, 1};
              const Bytes data = make_data(nbytes, typesize, kind, unsigned(nbytes + typesize));
              expect_same(data, p, 0, nbytes + BLOSC_MAX_OVERHEAD, kind);
            }
          }
        }
      }
    }
  }
}

TEST(BloscBlockEncoder, SeveralBlocksAndLeftoversEveryLevel) {
  // Sizes that are no multiple of the typesize or the block size; automatic blocks at low
  // levels give several blocks, at high levels one or two.
  for (BloscCompressor c : kCompressors) {
    for (int clevel = 1; clevel <= 9; ++clevel) {
      for (Shuffle shuffle : kShuffles) {
        for (std::size_t typesize : {1, 4, 24}) {
          if (clevel > 5 && typesize != 4) continue;  // the slow levels: fewer cases
          const std::size_t nbytes = clevel >= 8 ? 70'003 : 200'007;
          const BloscParams p{clevel, shuffle, c, typesize, 1};
          for (Kind kind : {Kind::smooth, Kind::constant}) {
            const Bytes data = make_data(nbytes, typesize, kind, unsigned(clevel));
            expect_same(data, p, 0, nbytes + BLOSC_MAX_OVERHEAD, kind);
          }
        }
      }
    }
  }
}

TEST(BloscBlockEncoder, ForcedBlockSizes) {
  for (BloscCompressor c : kCompressors) {
    for (Shuffle shuffle : kShuffles) {
      for (std::size_t typesize : {1, 2, 16, 24}) {
        for (std::size_t forced : {128, 1000, 4099, 65536, 200'000}) {
          const std::size_t nbytes = 100'001;
          const BloscParams p{3, shuffle, c, typesize, 1};
          const Bytes data = make_data(nbytes, typesize, Kind::smooth, unsigned(forced));
          expect_same(data, p, forced, nbytes + BLOSC_MAX_OVERHEAD, Kind::smooth);
        }
      }
    }
  }
}

TEST(BloscBlockEncoder, TightCapacitiesAndIncompressibleData) {
  for (BloscCompressor c : kCompressors) {
    for (Shuffle shuffle : {Shuffle::none, Shuffle::byte}) {
      for (std::size_t typesize : {1, 4}) {
        for (Kind kind : {Kind::smooth, Kind::noise}) {
          const std::size_t nbytes = 100'000;
          const BloscParams p{5, shuffle, c, typesize, 1};
          const Bytes data = make_data(nbytes, typesize, kind, 7);
          const int full = expect_same(data, p, 4096, nbytes + BLOSC_MAX_OVERHEAD, kind);
          ASSERT_GT(full, 0);
          // At, just below and well below the frame's size, and around the header and the
          // copied frame's size: frames that no longer fit, streams stored raw at the end.
          for (std::size_t capacity : {std::size_t(full), std::size_t(full) - 1, std::size_t(full) / 2,
                                       nbytes + BLOSC_MAX_OVERHEAD - 1, std::size_t(16), std::size_t(17),
                                       std::size_t(20), std::size_t(16 + 4 * 25), std::size_t(16 + 4 * 25 + 5)}) {
            expect_same(data, p, 4096, capacity, kind);
          }
        }
      }
    }
  }
}

TEST(BloscBlockEncoder, OutOfRangeParametersAnswerAsCBlosc) {
  const Bytes data = make_data(5000, 4, Kind::smooth, 1);
  for (BloscCompressor c : kCompressors) {
    for (int clevel : {-1, 10}) {
      const BloscParams p{clevel, Shuffle::byte, c, 4, 1};
      EXPECT_EQ(ours(data, p, 0, 6000).rc, theirs(data, p, 0, 6000).rc);
    }
    const BloscParams p{5, Shuffle(3), c, 4, 1};
    EXPECT_EQ(ours(data, p, 0, 6000).rc, theirs(data, p, 0, 6000).rc);
  }
}

TEST(BloscBlockEncoder, ThreadsKeepTheirOwnContexts) {
  // Several threads encoding at once, each switching codecs and levels, still write c-blosc's frames.
  std::vector<Bytes> inputs;
  for (unsigned t = 0; t < 4; ++t) inputs.push_back(make_data(90'001, 4, Kind::smooth, t));
  std::vector<std::thread> threads;
  std::vector<int> mismatches(inputs.size(), 0);
  for (std::size_t t = 0; t < inputs.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        for (BloscCompressor c : kCompressors) {
          const BloscParams p{int(1 + (t + round) % 6), Shuffle::byte, c, 4, 1};
          const Result a = ours(inputs[t], p, 0, inputs[t].size() + 16);
          const Result b = theirs(inputs[t], p, 0, inputs[t].size() + 16);
          if (a.rc != b.rc || a.frame != b.frame) ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

TEST(BloscBlockEncoder, BlosclzEveryLevelTypesizeAndShuffle) {
  // BloscLZ's own choices hang on the clevel (hash size, probe threshold, second hash at 9),
  // the split flag (minimum match) and the data: every clevel, typesizes 1-16 and odd sizes.
  for (int clevel = 0; clevel <= 9; ++clevel) {
    for (Shuffle shuffle : kShuffles) {
      for (std::size_t typesize = 1; typesize <= 16; ++typesize) {
        for (Kind kind : {Kind::smooth, Kind::noise, Kind::constant, Kind::repeats}) {
          const std::size_t nbytes = kind == Kind::repeats ? 300'007 : 66'001 + typesize * 37;
          const BloscParams p{clevel, shuffle, BloscCompressor::blosclz, typesize, 1};
          const Bytes data = make_data(nbytes, typesize, kind, unsigned(clevel * 100 + typesize));
          expect_same(data, p, 0, nbytes + BLOSC_MAX_OVERHEAD, kind);
        }
      }
    }
  }
}

TEST(BloscBlockEncoder, BlosclzShortStreamsAndTightCapacities) {
  // Streams around BloscLZ's limits (16 bytes, a 66-byte capacity, the 4 KiB probe) and
  // frames cut short at every few bytes of their size.
  for (int clevel : {1, 4, 9}) {
    for (std::size_t nbytes : {128, 129, 130, 200, 263, 300, 1000, 4096 * 4 + 3, 20'000}) {
      for (std::size_t typesize : {1, 2, 3, 8, 16}) {
        for (Kind kind : {Kind::smooth, Kind::constant, Kind::repeats}) {
          const BloscParams p{clevel, Shuffle::byte, BloscCompressor::blosclz, typesize, 1};
          const Bytes data = make_data(nbytes, typesize, kind, unsigned(nbytes));
          const int full = expect_same(data, p, 0, nbytes + BLOSC_MAX_OVERHEAD, kind);
          for (std::size_t forced : {std::size_t(0), std::size_t(128), std::size_t(1000)}) {
            for (std::size_t cut = 1; full > 0 && cut < std::size_t(full); cut += 1 + std::size_t(full) / 23) {
              expect_same(data, p, forced, std::size_t(full) - cut, kind);
            }
          }
        }
      }
    }
  }
}
