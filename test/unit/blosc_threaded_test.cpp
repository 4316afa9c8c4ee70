// Blosc frames shared between threads (blosc_threaded.hpp) and the worker pool under them:
// joined frames are c-blosc's own frames for the same block size, byte for byte; threaded
// decoding equals serial decoding; corrupt frames fail cleanly on the threaded path too; the
// pool survives concurrent callers and fork().
#include <blosc.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "h5sparse/blosc_blocks.hpp"
#include "h5sparse/blosc_threaded.hpp"
#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/worker_pool.hpp"

using namespace h5sparse;

namespace {

constexpr BloscCompressor kCompressors[] = {BloscCompressor::blosclz, BloscCompressor::lz4, BloscCompressor::lz4hc,
                                            BloscCompressor::zlib, BloscCompressor::zstd};

// Smooth values of `typesize` bytes each (the low bytes vary, the high ones barely), with a
// stretch of noise so some blocks store streams raw.
Bytes field(std::size_t nbytes, std::size_t typesize, unsigned seed) {
  Bytes out(nbytes);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < nbytes; ++i) {
    const std::size_t item = i / typesize, byte = i % typesize;
    const double v = std::sin(double(item) * 0.0007) * 1000.0;
    out[i] = byte == 0 && typesize > 1 ? std::uint8_t(rng() % 8) : std::uint8_t(std::int64_t(v) >> (byte % 3));
  }
  for (std::size_t i = nbytes / 3; i < nbytes / 3 + nbytes / 20; ++i) out[i] = std::uint8_t(rng());
  return out;
}

// c-blosc's own single-threaded frame with the block size several threads get.
Bytes reference_frame(const Bytes& data, const BloscParams& p) {
  const std::size_t forced = blosc_block_size_for_threads(p.compressor, p.clevel, p.typesize, data.size(), p.nthreads,
                                                          BloscSplitMode::forward_compat);
  Bytes out(data.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(p.clevel, int(p.shuffle), p.typesize, data.size(), data.data(), out.data(),
                                   out.size(), blosc_compressor_name(p.compressor), forced, 1);
  EXPECT_GT(n, 0);
  out.resize(std::size_t(n > 0 ? n : 0));
  return out;
}

Bytes compressed(const Bytes& data, const BloscParams& p) {
  Bytes out(blosc_compress_bound(data.size()));
  out.resize(blosc_compress(out.data(), out.size(), data.data(), data.size(), p));
  return out;
}

std::size_t blocks_of(const Bytes& frame) {
  std::size_t nbytes = 0, cbytes = 0, blocksize = 0;
  blosc_cbuffer_sizes(frame.data(), &nbytes, &cbytes, &blocksize);
  return (nbytes + blocksize - 1) / blocksize;
}

}  // namespace

TEST(BloscThreaded, JoinedFramesAreCBloscsFramesByteForByte) {
  for (BloscCompressor c : kCompressors) {
    for (Shuffle shuffle : {Shuffle::none, Shuffle::byte, Shuffle::bit}) {
      for (std::size_t typesize : {1, 4, 24}) {
        for (std::size_t nbytes : {std::size_t(1) << 20, std::size_t(700'008)}) {
          for (int nthreads : {2, 3}) {
            if (nthreads == 3 && nbytes != (1u << 20)) continue;
            if (c == BloscCompressor::lz4hc || c == BloscCompressor::zlib) {
              if (nthreads == 3 || nbytes != (1u << 20) || typesize == 24) continue;  // the slow codecs: fewer cases
            }
            SCOPED_TRACE(std::string(blosc_compressor_name(c)) + " shuffle " + std::to_string(int(shuffle)) +
                         " typesize " + std::to_string(typesize) + " nbytes " + std::to_string(nbytes) +
                         " threads " + std::to_string(nthreads));
            const Bytes data = field(nbytes, typesize, unsigned(nbytes + typesize));
            const BloscParams p{5, shuffle, c, typesize, nthreads};
            const Bytes frame = compressed(data, p);
            ASSERT_GT(frame.size(), 0u);
            EXPECT_EQ(frame, reference_frame(data, p));
            EXPECT_GE(blocks_of(frame), 2u);
            // ... and it came from the threads, not from the serial fallback.
            const std::size_t forced = blosc_block_size_for_threads(c, 5, typesize, nbytes, nthreads,
                                                                    BloscSplitMode::forward_compat);
            Bytes joined(blosc_compress_bound(nbytes));
            const auto size = blosc_compress_threaded(
                joined.data(), joined.size(), data.data(), nbytes, p, forced,
                blosc_frame_block_size(c, 5, typesize, nbytes, forced, BloscSplitMode::forward_compat));
            ASSERT_TRUE(size.has_value());
            joined.resize(*size);
            EXPECT_EQ(joined, frame);
            Bytes direct(nbytes);  // each thread decodes its blocks straight from the frame
            EXPECT_TRUE(blosc_decompress_threaded(direct.data(), direct.size(), frame.data(), frame.size(), nthreads));
            EXPECT_EQ(direct, data);
            for (int readers : {1, 2, 3}) {
              Bytes out(data.size());
              ASSERT_EQ(blosc_decompress(out.data(), out.size(), frame.data(), frame.size(), readers), data.size());
              EXPECT_EQ(out, data);
            }
          }
        }
      }
    }
  }
}

TEST(BloscThreaded, DecodesOtherWritersFramesOfAnyShape) {
  // c-blosc's frames with automatic and odd forced block sizes, leftover blocks, sizes that are
  // not a multiple of the type size, every flag combination.
  int threaded = 0;
  for (BloscCompressor c : {BloscCompressor::blosclz, BloscCompressor::lz4, BloscCompressor::zstd}) {
    for (Shuffle shuffle : {Shuffle::none, Shuffle::byte, Shuffle::bit}) {
      for (std::size_t typesize : {1, 8, 24, 255}) {
        for (std::size_t nbytes : {std::size_t(300'000), std::size_t(1'048'583)}) {
          const Bytes data = field(nbytes, typesize, unsigned(nbytes + typesize));
          for (std::size_t forced : {0, 4096, 262'144}) {
            Bytes frame(nbytes + BLOSC_MAX_OVERHEAD);
            const int n = blosc_compress_ctx(5, int(shuffle), typesize, nbytes, data.data(), frame.data(),
                                             frame.size(), blosc_compressor_name(c), forced, 1);
            ASSERT_GT(n, 0);
            Bytes shared(nbytes, 0xEE);
            if (blosc_decompress_threaded(shared.data(), shared.size(), frame.data(), std::size_t(n), 2)) {
              ++threaded;
              EXPECT_EQ(shared, data);
            }
            for (int readers : {2, 4}) {
              Bytes out(nbytes, 0xEE);
              ASSERT_EQ(blosc_decompress(out.data(), out.size(), frame.data(), std::size_t(n), readers), nbytes);
              ASSERT_EQ(out, data) << blosc_compressor_name(c) << " typesize " << typesize << " nbytes " << nbytes
                                   << " forced " << forced << " readers " << readers;
            }
          }
        }
      }
    }
  }
  EXPECT_GE(threaded, 30);
}

// The frame with its blocks stored last to first (c-blosc's own threads store blocks in the
// order they finish): still a valid frame, as the offset table says where each block is.
Bytes blocks_reversed(const Bytes& frame) {
  const std::size_t n = blocks_of(frame), table = 16 + 4 * n;
  std::vector<std::uint32_t> at(n + 1);
  for (std::size_t j = 0; j < n; ++j) std::memcpy(&at[j], &frame[16 + 4 * j], 4);
  at[n] = std::uint32_t(frame.size());
  Bytes out(frame.begin(), frame.begin() + long(table));
  for (std::size_t j = n; j-- > 0;) {
    const std::uint32_t start = std::uint32_t(out.size());
    std::memcpy(&out[16 + 4 * j], &start, 4);
    out.insert(out.end(), frame.begin() + at[j], frame.begin() + at[j + 1]);
  }
  return out;
}

TEST(BloscThreaded, BlocksOutOfOrderDecodeOnThreads) {
  for (BloscCompressor c : {BloscCompressor::lz4, BloscCompressor::zstd, BloscCompressor::blosclz}) {
    for (Shuffle shuffle : {Shuffle::byte, Shuffle::bit}) {
      const Bytes data = field(1 << 20, 8, 4);
      const Bytes frame = blocks_reversed(compressed(data, BloscParams{5, shuffle, c, 8, 2}));
      ASSERT_GE(blocks_of(frame), 4u);
      Bytes out(data.size());
      ASSERT_EQ(blosc_decompress_ctx(frame.data(), out.data(), out.size(), 1), int(data.size()));  // valid
      ASSERT_EQ(out, data);
      Bytes shared(data.size());
      EXPECT_TRUE(blosc_decompress_threaded(shared.data(), shared.size(), frame.data(), frame.size(), 2));
      EXPECT_EQ(shared, data);
      std::mt19937 rng(5);
      for (int trial = 0; trial < 100; ++trial) {  // and damaged
        Bytes bad = frame;
        bad[trial < 30 ? rng() % (16 + 4 * blocks_of(frame)) : rng() % bad.size()] ^= std::uint8_t(1 + rng() % 255);
        try {
          EXPECT_EQ(blosc_decompress(shared.data(), shared.size(), bad.data(), bad.size(), 2), data.size());
        } catch (const Error& e) {
          EXPECT_TRUE(e.code() == ErrorCode::corrupt_data || e.code() == ErrorCode::buffer_too_small) << e.what();
        }
      }
    }
  }
}

TEST(BloscThreaded, CorruptFramesFailOnTheThreadedPath) {
  const Bytes data = field(1 << 20, 4, 5);
  for (BloscCompressor c : {BloscCompressor::lz4, BloscCompressor::zstd, BloscCompressor::blosclz}) {
    const Bytes frame = compressed(data, BloscParams{5, Shuffle::byte, c, 4, 2});
    ASSERT_GE(blocks_of(frame), 4u);
    Bytes out(data.size());
    auto decode = [&](const Bytes& bad) {  // fails cleanly or decodes; never overruns (ASan checks)
      try {
        const std::size_t got = blosc_decompress(out.data(), out.size(), bad.data(), bad.size(), 2);
        EXPECT_EQ(got, data.size());
      } catch (const Error& e) {
        EXPECT_TRUE(e.code() == ErrorCode::corrupt_data || e.code() == ErrorCode::buffer_too_small) << e.what();
      }
    };
    std::mt19937 rng(11);
    for (int trial = 0; trial < 200; ++trial) {  // flipped bytes anywhere, header and offsets included
      Bytes bad = frame;
      const std::size_t at = trial < 60 ? rng() % (16 + 4 * blocks_of(frame)) : rng() % bad.size();
      bad[at] ^= std::uint8_t(1 + rng() % 255);
      decode(bad);
    }
    for (std::size_t j = 0; j < blocks_of(frame); ++j) {  // block offsets past the end, negative, into the table
      for (std::uint32_t offset : {std::uint32_t(frame.size()), std::uint32_t(frame.size() - 2), 0xFFFFFFF0u, 4u}) {
        Bytes bad = frame;
        std::memcpy(&bad[16 + 4 * j], &offset, 4);
        EXPECT_THROW(blosc_decompress(out.data(), out.size(), bad.data(), bad.size(), 2), Error);
      }
    }
    Bytes truncated(frame.begin(), frame.end() - 100);  // header still claims the full size
    EXPECT_THROW(blosc_decompress(out.data(), out.size(), truncated.data(), truncated.size(), 2), Error);
    std::uint32_t cbytes = std::uint32_t(truncated.size());  // header agrees with the truncation
    std::memcpy(&truncated[12], &cbytes, 4);
    EXPECT_THROW(blosc_decompress(out.data(), out.size(), truncated.data(), truncated.size(), 2), Error);
    Bytes small(data.size() / 2);  // frame larger than the output
    EXPECT_THROW(blosc_decompress(small.data(), small.size(), frame.data(), frame.size(), 2), Error);
  }
}

TEST(BloscThreaded, IncompressibleChunksGiveCBloscsAnswer) {
  std::mt19937 rng(2);
  Bytes noise(1 << 20);
  for (auto& b : noise) b = std::uint8_t(rng());
  for (BloscCompressor c : {BloscCompressor::blosclz, BloscCompressor::lz4, BloscCompressor::zstd}) {
    const BloscParams p{5, Shuffle::none, c, 1, 2};
    Bytes out(noise.size());  // the filter's case: the frame must be smaller than the chunk
    EXPECT_EQ(blosc_compress(out.data(), out.size(), noise.data(), noise.size(), p), 0u);
    Bytes roomy(blosc_compress_bound(noise.size()));  // room for c-blosc's copied frame
    const std::size_t n = blosc_compress(roomy.data(), roomy.size(), noise.data(), noise.size(), p);
    ASSERT_GT(n, 0u);
    Bytes back(noise.size());
    EXPECT_EQ(blosc_decompress(back.data(), back.size(), roomy.data(), n, 2), noise.size());
    EXPECT_EQ(back, noise);
    Bytes half = noise;  // noise in the first half only: the second half pays for it
    std::fill(half.begin() + long(half.size() / 2), half.end(), std::uint8_t(0));
    const Bytes frame = compressed(half, p);
    ASSERT_GT(frame.size(), 0u);
    EXPECT_EQ(frame, reference_frame(half, p));
    const std::size_t fits = blosc_compress(out.data(), out.size(), half.data(), half.size(), p);
    EXPECT_EQ(Bytes(out.begin(), out.begin() + long(fits)), frame);
  }
}

TEST(BloscThreaded, ConcurrentCallersAndForkedChildren) {
  const Bytes data = field(1 << 20, 4, 9);
  const Bytes frame = compressed(data, BloscParams{5, Shuffle::byte, BloscCompressor::lz4, 4, 2});
  EXPECT_GE(shared_pool_workers(), 1);
  std::vector<std::thread> callers;
  std::vector<int> good(4, 0);
  for (int i = 0; i < 4; ++i) {  // the pool runs one caller's job; the others run theirs alone
    callers.emplace_back([&, i] {
      for (int k = 0; k < 20; ++k) {
        Bytes out(data.size());
        Bytes again(blosc_compress_bound(data.size()));
        again.resize(blosc_compress(again.data(), again.size(), data.data(), data.size(),
                                    BloscParams{5, Shuffle::byte, BloscCompressor::lz4, 4, 2}));
        good[i] += blosc_decompress(out.data(), out.size(), frame.data(), frame.size(), 2) == data.size() &&
                   out == data && again == frame;
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(good, std::vector<int>(4, 20));

  const pid_t child = fork();  // the child has none of the pool's threads: it makes its own
  if (child == 0) {
    Bytes out(data.size());
    const bool ok = blosc_decompress(out.data(), out.size(), frame.data(), frame.size(), 2) == data.size() &&
                    out == data && shared_pool_workers() >= 1;
    _exit(ok ? 0 : 1);
  }
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(WorkerPool, RunsEveryTaskOnce) {
  for (int count : {1, 2, 3, 8, 100}) {
    std::vector<int> runs(std::size_t(count), 0);
    auto task = [&](int i) { ++runs[std::size_t(i)]; };
    run_shared(count, task);
    EXPECT_EQ(runs, std::vector<int>(std::size_t(count), 1)) << count;
  }
}

TEST(WorkerPool, BackToBackJobsRunEachTaskOnceWithItsOwnState) {
  // Workers poll for the next job and claim indices from a ticket that names the job: a worker
  // that wakes late for one job must not take an index of the next job and run it with the
  // old job's task and state. Jobs alternate between two tasks with counters of their own, so
  // such a run shows as a count of 0 in one and 2 in the other.
  for (int count : {2, 3}) {
    std::atomic<int> runs[2][3] = {};
    auto busy = [](int i) {  // a few microseconds, so that workers take part
      volatile unsigned x = 0;
      for (int k = 0; k < 500 * (i + 1); ++k) x = x + 1;
    };
    auto task_a = [&](int i) { busy(i), runs[0][i].fetch_add(1, std::memory_order_relaxed); };
    auto task_b = [&](int i) { busy(i), runs[1][i].fetch_add(1, std::memory_order_relaxed); };
    int wrong = 0;
    for (int job = 0; job < 20000; ++job) {
      const int which = job % 2;
      for (auto& r : runs[which]) r.store(0);
      if (which == 0) {
        run_shared(count, task_a);
      } else {
        run_shared(count, task_b);
      }
      for (int i = 0; i < count; ++i) wrong += runs[which][i].load() != 1;
    }
    EXPECT_EQ(wrong, 0) << count;
  }
}

TEST(WorkerPool, TaskZeroRunsOnTheCallerAndResultsAreVisibleOnReturn) {
  // Concurrent callers: one gets the pool, the others run alone; either way every index runs
  // once, index 0 on the calling thread, and what the tasks wrote is there when run_shared returns.
  std::vector<std::thread> callers;
  std::vector<int> bad(4, 0);
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < 2000; ++round) {
        const int count = 2 + round % 3;
        std::vector<std::uint64_t> written(std::size_t(count), 0);
        std::thread::id first;
        auto task = [&](int i) {
          if (i == 0) first = std::this_thread::get_id();
          written[std::size_t(i)] += 0x9E3779B97F4A7C15ull * std::uint64_t(round + i + 1);
        };
        run_shared(count, task);
        bad[std::size_t(c)] += first != std::this_thread::get_id();
        for (int i = 0; i < count; ++i) {
          bad[std::size_t(c)] += written[std::size_t(i)] != 0x9E3779B97F4A7C15ull * std::uint64_t(round + i + 1);
        }
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(bad, std::vector<int>(4, 0));
}
