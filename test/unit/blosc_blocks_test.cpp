// Block sizes of Blosc frames: the mirror of c-blosc's rules against the frames c-blosc writes,
// and what several threads get (enough blocks, frames any reader decodes, no global state left).
#include <blosc.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "h5sparse/blosc_blocks.hpp"
#include "h5sparse/codecs.hpp"

using namespace h5sparse;

namespace {

constexpr BloscCompressor kCompressors[] = {BloscCompressor::blosclz, BloscCompressor::lz4, BloscCompressor::lz4hc,
                                            BloscCompressor::zlib, BloscCompressor::zstd};

std::size_t header_block_size(const Bytes& frame) {
  std::size_t nbytes = 0, cbytes = 0, blocksize = 0;
  blosc_cbuffer_sizes(frame.data(), &nbytes, &cbytes, &blocksize);
  return blocksize;
}

// c-blosc's own frame for these parameters, one thread, context API.
Bytes ctx_frame(const Bytes& data, BloscCompressor c, int clevel, std::size_t typesize, std::size_t forced) {
  Bytes out(data.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(clevel, 1, typesize, data.size(), data.data(), out.data(), out.size(),
                                   blosc_compressor_name(c), forced, 1);
  EXPECT_GT(n, 0);
  out.resize(std::size_t(n > 0 ? n : 0));
  return out;
}

Bytes smooth_floats(std::size_t count) {
  Bytes out(count * 4);
  for (std::size_t i = 0; i < count; ++i) {
    const float v = float(std::sin(double(i) * 0.001) * 100.0 + double(i % 7) * 0.01);
    std::memcpy(&out[i * 4], &v, 4);
  }
  return out;
}

struct SplitModeScope {  // c-blosc's split mode is global: restore its default
  explicit SplitModeScope(BloscSplitMode m) {
    const int codes[] = {BLOSC_ALWAYS_SPLIT, BLOSC_NEVER_SPLIT, BLOSC_AUTO_SPLIT, BLOSC_FORWARD_COMPAT_SPLIT};
    blosc_set_splitmode(codes[int(m)]);
  }
  ~SplitModeScope() { blosc_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT); }
};

}  // namespace

TEST(BloscBlocks, MirrorMatchesTheFramesCBloscWrites) {
  const Bytes zeros((3 << 20) + 4, 0);  // the largest size below; compresses quickly with every codec; the header is what counts
  for (BloscSplitMode mode : {BloscSplitMode::forward_compat, BloscSplitMode::always, BloscSplitMode::never,
                              BloscSplitMode::automatic}) {
    SplitModeScope scope(mode);
    for (BloscCompressor c : kCompressors) {
      for (int clevel : {1, 5, 9}) {
        for (std::size_t typesize : {1, 2, 4, 8, 16, 24}) {
          for (std::size_t nbytes : {std::size_t(1000), std::size_t(40000), std::size_t(1) << 20, (std::size_t(3) << 20) + 4}) {
            for (std::size_t forced : {0, 4096, 65536, 300000}) {
              if (nbytes > (1u << 20) && clevel != 9) continue;  // the largest automatic blocks
              if (mode != BloscSplitMode::forward_compat && (nbytes > (1u << 20) || forced == 4096)) continue;
              const Bytes data(zeros.begin(), zeros.begin() + long(nbytes));
              const Bytes frame = ctx_frame(data, c, clevel, typesize, forced);
              ASSERT_GE(frame.size(), std::size_t(BLOSC_MIN_HEADER_LENGTH));
              EXPECT_EQ(blosc_frame_block_size(c, clevel, typesize, nbytes, forced, mode), header_block_size(frame))
                  << blosc_compressor_name(c) << " clevel " << clevel << " typesize " << typesize << " nbytes "
                  << nbytes << " forced " << forced << " mode " << int(mode);
            }
          }
        }
      }
    }
  }
}

TEST(BloscBlocks, SeveralThreadsGetTwoBlocksEach) {
  for (BloscCompressor c : kCompressors) {
    for (std::size_t typesize : {1, 2, 4, 8, 16, 24}) {
      for (int nthreads : {2, 3, 4}) {
        const std::size_t forced =
            blosc_block_size_for_threads(c, 5, typesize, 1 << 20, nthreads, BloscSplitMode::forward_compat);
        const std::size_t block =
            blosc_frame_block_size(c, 5, typesize, 1 << 20, forced, BloscSplitMode::forward_compat);
        EXPECT_GE(((1u << 20) + block - 1) / block, std::size_t(2 * nthreads))
            << blosc_compressor_name(c) << " typesize " << typesize << " threads " << nthreads;
        EXPECT_GE(block, std::size_t(64 * 1024));
      }
    }
  }
  // One thread, small chunks, and chunks that already have enough blocks keep c-blosc's choice.
  EXPECT_EQ(blosc_block_size_for_threads(BloscCompressor::lz4hc, 5, 4, 1 << 20, 1, BloscSplitMode::forward_compat), 0u);
  EXPECT_EQ(blosc_block_size_for_threads(BloscCompressor::lz4hc, 5, 4, 128 << 10, 2, BloscSplitMode::forward_compat), 0u);
  EXPECT_EQ(blosc_block_size_for_threads(BloscCompressor::zstd, 5, 4, 1 << 20, 2, BloscSplitMode::forward_compat), 0u);
  EXPECT_EQ(blosc_block_size_for_threads(BloscCompressor::blosclz, 5, 4, 16 << 20, 2, BloscSplitMode::forward_compat), 0u);
  EXPECT_EQ(blosc_block_size_for_threads(BloscCompressor::zlib, 0, 4, 1 << 20, 2, BloscSplitMode::forward_compat), 0u);
}

TEST(BloscBlocks, ThreadedFramesHaveTheBlocksAndDecodeAnywhere) {
  const Bytes data = smooth_floats(1 << 18);  // 1 MiB of float32, one benchmark-sized chunk
  for (BloscCompressor c : kCompressors) {
    SCOPED_TRACE(blosc_compressor_name(c));
    BloscParams p{5, Shuffle::byte, c, 4, 1};
    Bytes single(blosc_compress_bound(data.size()));
    single.resize(blosc_compress(single.data(), single.size(), data.data(), data.size(), p));
    EXPECT_EQ(single, ctx_frame(data, c, 5, 4, 0));  // one thread: c-blosc's frame, byte for byte

    p.nthreads = 2;
    Bytes threaded(blosc_compress_bound(data.size()));
    threaded.resize(blosc_compress(threaded.data(), threaded.size(), data.data(), data.size(), p));
    ASSERT_GT(threaded.size(), 0u);
    const std::size_t block = header_block_size(threaded);
    EXPECT_GE((data.size() + block - 1) / block, 4u);
    EXPECT_EQ(blosc_get_blocksize(), 0);  // the forced size did not outlive the call
    for (int readers : {1, 2, 3}) {
      Bytes out(data.size());
      EXPECT_EQ(blosc_decompress(out.data(), out.size(), threaded.data(), threaded.size(), readers), data.size());
      EXPECT_EQ(out, data);
    }
    Bytes out(data.size());  // and c-blosc's context API, as any other reader uses it
    EXPECT_EQ(blosc_decompress_ctx(threaded.data(), out.data(), out.size(), 1), int(data.size()));
    EXPECT_EQ(out, data);
  }
}
