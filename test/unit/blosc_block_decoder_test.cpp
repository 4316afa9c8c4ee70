// Our Blosc decoder (blosc_block_decoder.hpp) against c-blosc 1.21's blosc_decompress_ctx:
// frames written by c-blosc for every codec, clevel, shuffle, type size, size and forced block
// size (with one thread and with several, split and unsplit, copied) decode to the same bytes
// with one and with several threads; damaged frames fail exactly when c-blosc's fail, and
// never read or write out of bounds (the sanitizer configuration runs these too).
#include <blosc.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "h5sparse/blosc_block_decoder.hpp"
#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"

using namespace h5sparse;

namespace {

constexpr BloscCompressor kCompressors[] = {BloscCompressor::blosclz, BloscCompressor::lz4, BloscCompressor::lz4hc,
                                            BloscCompressor::zlib, BloscCompressor::zstd};
constexpr Shuffle kShuffles[] = {Shuffle::none, Shuffle::byte, Shuffle::bit};

// Smooth values with noisy low bytes and a stretch of noise (some streams are stored raw).
Bytes make_data(std::size_t nbytes, std::size_t typesize, unsigned seed) {
  Bytes out(nbytes);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < nbytes; ++i) {
    const std::size_t item = i / typesize, byte = i % typesize;
    const double v = std::sin(double(item) * 0.002) * 3000.0;
    out[i] = byte == 0 ? std::uint8_t(rng() % 8) : std::uint8_t(std::int64_t(v) >> (byte % 4));
    if (i > nbytes / 2 && i < nbytes / 2 + nbytes / 10) out[i] = std::uint8_t(rng());
  }
  return out;
}

Bytes c_blosc_frame(const Bytes& data, int clevel, Shuffle shuffle, BloscCompressor c, std::size_t typesize,
                    std::size_t forced, int threads = 1) {
  Bytes frame(data.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(clevel, int(shuffle), typesize, data.size(), data.data(), frame.data(), frame.size(),
                                   blosc_compressor_name(c), forced, threads);
  EXPECT_GT(n, 0);
  frame.resize(n > 0 ? std::size_t(n) : 0);
  return frame;
}

// c-blosc's verdict on a frame: the bytes when it decodes all of them, else nothing.
std::optional<Bytes> c_blosc_decode(const Bytes& frame, std::size_t capacity) {
  std::size_t nbytes = 0;
  if (blosc_cbuffer_validate(frame.data(), frame.size(), &nbytes) != 0 || nbytes > capacity) return std::nullopt;
  Bytes out(capacity);
  const int rc = blosc_decompress_ctx(frame.data(), out.data(), capacity, 1);
  if (rc != int(nbytes) || (nbytes == 0 && rc != 0)) return std::nullopt;
  out.resize(nbytes);
  return out;
}

// Ours, with a guard byte after the output.
std::optional<Bytes> our_decode(const Bytes& frame, std::size_t capacity, int threads) {
  Bytes out(capacity + 1, 0xEE);
  try {
    const std::size_t n = blosc_decompress(out.data(), capacity, frame.data(), frame.size(), threads);
    EXPECT_EQ(out[capacity], 0xEE) << "wrote past the capacity";
    out.resize(n);
    return out;
  } catch (const Error& e) {
    EXPECT_TRUE(e.code() == ErrorCode::corrupt_data || e.code() == ErrorCode::buffer_too_small) << e.what();
    EXPECT_EQ(out[capacity], 0xEE) << "wrote past the capacity";
    return std::nullopt;
  }
}

void expect_same_decoding(const Bytes& frame, std::size_t capacity, int threads) {
  const std::optional<Bytes> theirs = c_blosc_decode(frame, capacity);
  const std::optional<Bytes> ours = our_decode(frame, capacity, threads);
  ASSERT_EQ(theirs.has_value(), ours.has_value()) << "c-blosc " << (theirs ? "decodes" : "refuses") << ", we "
                                                  << (ours ? "decode" : "refuse");
  if (theirs) {
    ASSERT_EQ(*ours, *theirs);
  }
}

std::size_t blocks_of(const Bytes& frame) {
  std::int32_t nbytes, blocksize;
  std::memcpy(&nbytes, &frame[4], 4);
  std::memcpy(&blocksize, &frame[8], 4);
  return (frame[2] & BLOSC_MEMCPYED) ? 0 : std::size_t((nbytes + blocksize - 1) / blocksize);
}

}  // namespace

TEST(BloscBlockDecoder, DecodesEveryShapeOfFrameLikeCBlosc) {
  int frames = 0;
  for (BloscCompressor c : kCompressors) {
    for (int clevel = 0; clevel <= 9; ++clevel) {
      for (Shuffle shuffle : kShuffles) {
        for (std::size_t typesize : {1, 2, 3, 4, 8, 17, 255, 300}) {
          for (std::size_t nbytes : {0, 1, 7, 127, 128, 129, 1000, 4099, 70'003}) {
            if (nbytes > 4099 && clevel % 4 != 1) continue;  // the big ones at clevels 1, 5 and 9
            for (std::size_t forced : {0, 128, 3000}) {
              SCOPED_TRACE(std::string(blosc_compressor_name(c)) + " clevel " + std::to_string(clevel) + " shuffle " +
                           std::to_string(int(shuffle)) + " typesize " + std::to_string(typesize) + " nbytes " +
                           std::to_string(nbytes) + " forced " + std::to_string(forced));
              const Bytes data = make_data(nbytes, typesize, unsigned(nbytes + typesize + clevel));
              const Bytes frame = c_blosc_frame(data, clevel, shuffle, c, typesize, forced);
              const std::optional<Bytes> ours = our_decode(frame, nbytes, 1);
              ASSERT_TRUE(ours.has_value());
              ASSERT_EQ(*ours, data);
              ASSERT_EQ(ours, c_blosc_decode(frame, nbytes));
              ++frames;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(frames, 10'000);
}

TEST(BloscBlockDecoder, ThreadsDecodeManyBlocksTheSameWay) {
  // Frames of many blocks, written by c-blosc with one thread and with three (its threads
  // store blocks in the order they finish), split and unsplit, shared by 1-3 readers.
  for (BloscCompressor c : kCompressors) {
    for (Shuffle shuffle : kShuffles) {
      for (std::size_t typesize : {4, 8, 24}) {
        const Bytes data = make_data(1'048'583, typesize, unsigned(typesize));
        for (int writers : {1, 3}) {
          for (std::size_t forced : {std::size_t(0), std::size_t(65'536), std::size_t(10'000)}) {
            SCOPED_TRACE(std::string(blosc_compressor_name(c)) + " shuffle " + std::to_string(int(shuffle)) +
                         " typesize " + std::to_string(typesize) + " writers " + std::to_string(writers) +
                         " forced " + std::to_string(forced));
            const Bytes frame = c_blosc_frame(data, 5, shuffle, c, typesize, forced, writers);
            for (int readers : {1, 2, 3}) {
              const std::optional<Bytes> ours = our_decode(frame, data.size(), readers);
              ASSERT_TRUE(ours.has_value());
              ASSERT_EQ(*ours, data);
            }
          }
        }
      }
    }
  }
}

TEST(BloscBlockDecoder, SplitModesAndCopiedFrames) {
  // Frames split for every codec (BLOSC_ALWAYS_SPLIT, as c-blosc before the split flag wrote
  // them) and never split; c-blosc's split mode is process-wide, so it is put back after.
  const Bytes data = make_data(300'000, 8, 3);
  for (int mode : {BLOSC_ALWAYS_SPLIT, BLOSC_NEVER_SPLIT, BLOSC_AUTO_SPLIT}) {
    blosc_set_splitmode(mode);
    for (BloscCompressor c : kCompressors) {
      for (Shuffle shuffle : kShuffles) {
        const Bytes frame = c_blosc_frame(data, 4, shuffle, c, 8, 0);
        const std::optional<Bytes> ours = our_decode(frame, data.size(), 2);
        EXPECT_TRUE(ours && *ours == data) << "mode " << mode << " " << blosc_compressor_name(c);
      }
    }
  }
  blosc_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);
  std::mt19937 rng(1);
  Bytes noise(200'000);
  for (auto& b : noise) b = std::uint8_t(rng());
  for (int clevel : {0, 5}) {  // clevel 0 and data that does not compress: copied frames
    const Bytes frame = c_blosc_frame(noise, clevel, Shuffle::byte, BloscCompressor::lz4, 4, 0);
    ASSERT_TRUE(frame[2] & BLOSC_MEMCPYED);
    for (int readers : {1, 2}) {
      const std::optional<Bytes> ours = our_decode(frame, noise.size(), readers);
      EXPECT_TRUE(ours && *ours == noise);
    }
    Bytes bad = frame;  // a copied frame must hold exactly header + data
    bad.pop_back();
    const std::int32_t size = std::int32_t(bad.size());
    std::memcpy(&bad[12], &size, 4);
    expect_same_decoding(bad, noise.size(), 1);
  }
}

TEST(BloscBlockDecoder, DamagedFramesFailWhenCBloscsFail) {
  // Flipped bytes anywhere (header, offsets, streams), truncations, oversized header fields:
  // we decode exactly the frames c-blosc decodes, to the same bytes, with 1 and 2 threads.
  std::mt19937 rng(7);
  int refused = 0;
  for (BloscCompressor c : kCompressors) {
    for (Shuffle shuffle : kShuffles) {
      Bytes data = make_data(600'000, 4, unsigned(int(c) * 3 + int(shuffle)));
      for (std::size_t i = 0; i < data.size() / 2; ++i) data[i] = std::uint8_t(i / 512);  // so that blosclz pays
      const Bytes frame = c_blosc_frame(data, 5, shuffle, c, 4, 16'384);
      ASSERT_GE(blocks_of(frame), 4u);
      for (int trial = 0; trial < 60; ++trial) {
        Bytes bad = frame;
        const std::size_t table = 16 + 4 * blocks_of(frame);
        const std::size_t at = trial < 20 ? rng() % table : rng() % bad.size();
        bad[at] ^= std::uint8_t(1 + rng() % 255);
        SCOPED_TRACE(std::string(blosc_compressor_name(c)) + " byte " + std::to_string(at));
        const std::size_t capacity = trial % 3 == 0 ? data.size() + 1000 : data.size();
        expect_same_decoding(bad, capacity, 1 + trial % 2);
        refused += !c_blosc_decode(bad, capacity);
      }
      for (std::size_t cut : {std::size_t(1), std::size_t(100), frame.size() / 2, frame.size() - 17}) {
        Bytes truncated(frame.begin(), frame.end() - long(cut));
        expect_same_decoding(truncated, data.size(), 2);
        const std::int32_t size = std::int32_t(truncated.size());  // and with the header agreeing
        std::memcpy(&truncated[12], &size, 4);
        expect_same_decoding(truncated, data.size(), 2);
      }
      for (std::size_t field : {4, 8}) {  // decoded size and block size, oversized or negative
        for (std::int32_t value : {0x7FFFFFFF, -1, 1 << 30, 3, 1}) {
          Bytes bad = frame;
          std::memcpy(bad.data() + field, &value, 4);
          expect_same_decoding(bad, data.size(), 2);
        }
      }
      for (std::uint32_t offset : {std::uint32_t(frame.size()), std::uint32_t(frame.size() - 3), 0xFFFFFFF0u, 4u,
                                   16u}) {  // block offsets past the end, negative, into the header
        Bytes bad = frame;
        std::memcpy(&bad[16 + 4 * (blocks_of(frame) - 1)], &offset, 4);
        expect_same_decoding(bad, data.size(), 2);
      }
      Bytes future = frame;  // the reserved flag, an unknown codec format version
      future[2] |= 0x08;
      expect_same_decoding(future, data.size(), 1);
      future = frame;
      future[1] = 2;
      expect_same_decoding(future, data.size(), 1);
    }
  }
  EXPECT_GT(refused, 100);
}

TEST(BloscBlockDecoder, BlosclzStreamEdges) {
  // Hand-made blosclz streams (blosclz_decompress's token format) and c-blosc's verdicts.
  auto decode = [](const Bytes& stream, std::size_t capacity) {
    Bytes out(capacity);
    return std::pair<std::size_t, Bytes>(blosclz_decode(out.data(), capacity, stream.data(), stream.size()), out);
  };
  // Literal "abc" (control byte 2: three bytes), then a match: control byte 0x40 gives the
  // length (0x40 >> 5) - 1 + 3 = 4, the next byte 2 the distance 2 + 1 = 3; then literal "z".
  const Bytes run = {0x02, 'a', 'b', 'c', 0x40, 0x02, 0x00, 'z'};
  auto [n, out] = decode(run, 8);
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(std::string(out.begin(), out.end()), "abcabcaz");
  // A short match wants two bytes after its control byte; a long match (0xE0: length 6 plus
  // the bytes that follow) that ends the stream is not copied: c-blosc stops before it.
  EXPECT_EQ(decode({0x02, 'a', 'b', 'c', 0x40, 0x02}, 7).first, 0u);
  EXPECT_EQ(decode({0x02, 'a', 'b', 'c', 0xE0, 0x00, 0x02}, 12).first, 3u);
  // A match reaching before the output, a literal past the input's or output's end.
  EXPECT_EQ(decode({0x00, 'a', 0x20, 0x05, 0x00, 'b'}, 8).first, 0u);
  EXPECT_EQ(decode({0x05, 'a', 'b'}, 8).first, 0u);
  EXPECT_EQ(decode({0x05, 'a', 'b', 'c', 'd', 'e', 'f'}, 4).first, 0u);
  EXPECT_EQ(decode({}, 4).first, 0u);
  // A run of one byte (distance 1) with a long length: ctrl 0xE0 = length 6 + more bytes.
  const Bytes long_run = {0x00, 'x', 0xE0, 0xFF, 0x10, 0x00, 0x00, 'y'};
  const auto [m, rows] = decode(long_run, 1 + (6 + 255 + 16 + 3) + 1);
  ASSERT_EQ(m, rows.size());
  EXPECT_EQ(rows[0], 'x');
  EXPECT_EQ(rows[rows.size() - 2], 'x');
  EXPECT_EQ(rows.back(), 'y');
  // Real streams: c-blosc's blosclz frames of every size decode through it above; here a
  // frame whose only block is one unsplit stream is checked against c-blosc byte for byte.
  for (std::size_t nbytes : {200, 5000, 100'000}) {
    Bytes data(nbytes);
    for (std::size_t i = 0; i < nbytes; ++i) data[i] = std::uint8_t((i * 7) % 251 < 30 ? i : i / 64);
    const Bytes frame = c_blosc_frame(data, 9, Shuffle::none, BloscCompressor::blosclz, 1, 0);
    expect_same_decoding(frame, nbytes, 1);
  }
}

TEST(BloscBlockDecoder, BlocksOverTheKeptBufferSize) {
  // A forced block of 20 MiB (byte-shuffled): its unshuffle buffer is not kept after the call;
  // decoding it twice, with one thread and with two, gives c-blosc's bytes.
  const Bytes data = make_data(std::size_t(24) << 20, 4, 12);
  const Bytes frame = c_blosc_frame(data, 1, Shuffle::byte, BloscCompressor::zstd, 4, std::size_t(20) << 20);
  ASSERT_EQ(blocks_of(frame), 2u);
  for (int readers : {1, 2}) {
    const std::optional<Bytes> ours = our_decode(frame, data.size(), readers);
    ASSERT_TRUE(ours.has_value());
    EXPECT_TRUE(*ours == data);
  }
}
