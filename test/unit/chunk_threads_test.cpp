// chunk_threads.hpp: the thread count policy and the parallel loop the connector runs chunk
// work with (failures captured per index, the lead on the calling thread, nested pool use).
#include "h5sparse/chunk_threads.hpp"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

struct EnvGuard {
  explicit EnvGuard(const char* value) {
    if (value)
      setenv("H5SPARSE_NTHREADS", value, 1);
    else
      unsetenv("H5SPARSE_NTHREADS");
  }
  ~EnvGuard() { unsetenv("H5SPARSE_NTHREADS"); }
};

int affinity_default() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const int n = CPU_COUNT(&set);
  return n < 1 ? 1 : n > kMaxChunkThreads ? kMaxChunkThreads : n;
}

TEST(ChunkThreads, EnvironmentOrAffinityMask) {
  { EnvGuard env("1"); EXPECT_EQ(chunk_threads(), 1); }
  { EnvGuard env("3"); EXPECT_EQ(chunk_threads(), 3); }
  { EnvGuard env("100000"); EXPECT_EQ(chunk_threads(), kMaxChunkThreads); }
  for (const char* bad : {"0", "-2", "x", "", "2x", "99999999999999999999"}) {
    EnvGuard env(bad);
    EXPECT_EQ(chunk_threads(), affinity_default()) << bad;
  }
  { EnvGuard env(nullptr); EXPECT_EQ(chunk_threads(), affinity_default()); }
}

TEST(ChunkThreads, SmallCallsStayOnTheCallingThreadUnlessAsked) {
  const int machine = affinity_default();
  {
    EnvGuard env(nullptr);
    EXPECT_EQ(chunk_threads_for(1, std::uint64_t(1) << 30), 1);
    EXPECT_EQ(chunk_threads_for(2, 1024), 1);
    EXPECT_EQ(chunk_threads_for(kParallelMinChunks - 1, kParallelMinBytes - 1), 1);
    EXPECT_EQ(chunk_threads_for(kParallelMinChunks, 16), machine);
    EXPECT_EQ(chunk_threads_for(2, kParallelMinBytes), machine);
  }
  {
    EnvGuard env("3");
    EXPECT_EQ(chunk_threads_for(1, std::uint64_t(1) << 30), 1);
    EXPECT_EQ(chunk_threads_for(2, 16), 3);
  }
}

TEST(ChunkThreads, AffinityMaskOfOneCpuGivesOne) {
  // A bound MPI rank: this thread's mask is what sched_getaffinity(0) reports.
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &saved)) ++cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EnvGuard env(nullptr);
  const int threads = chunk_threads();
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
  EXPECT_EQ(threads, 1);
}

TEST(ParallelFor, EveryIndexOnceOnItsSlot) {
  for (int threads = 1; threads <= 4; ++threads) {
    for (std::size_t count : {0u, 1u, 2u, 3u, 7u, 50u}) {
      std::vector<std::atomic<int>> runs(count);
      std::atomic<int> bad_slot{0};
      const auto failure = parallel_for(count, threads, [&](std::size_t i, int slot) {
        if (slot < 0 || slot >= threads) ++bad_slot;
        ++runs[i];
      });
      EXPECT_FALSE(failure);
      EXPECT_EQ(bad_slot.load(), 0);
      for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(runs[i].load(), 1) << threads << " " << i;
    }
  }
}

TEST(ParallelFor, SlotZeroIsTheCallingThreadAndSlotsAreExclusive) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::atomic<int>> busy(3);
  std::atomic<int> overlaps{0}, wrong_thread{0};
  parallel_for(200, 3, [&](std::size_t, int slot) {
    if (busy[slot]++ != 0) ++overlaps;
    if (slot == 0 && std::this_thread::get_id() != caller) ++wrong_thread;
    volatile int spin = 0;
    for (int k = 0; k < 2000; ++k) spin = spin + k;
    --busy[slot];
  });
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(wrong_thread.load(), 0);
}

TEST(ParallelFor, LowestFailureWinsAndEveryIndexBelowRan) {
  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<std::atomic<int>> runs(100);
    const auto failure = parallel_for(100, threads, [&](std::size_t i, int) {
      ++runs[i];
      if (i == 23 || i == 61) throw Error(ErrorCode::corrupt_data, "bad " + std::to_string(i));
    });
    ASSERT_TRUE(failure);
    EXPECT_EQ(failure->index, 23u);
    for (std::size_t i = 0; i < 23; ++i) EXPECT_EQ(runs[i].load(), 1) << i;
    try {
      std::rethrow_exception(failure->error);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::corrupt_data);
      EXPECT_EQ(std::string(e.what()), "bad 23");
    }
  }
}

TEST(ParallelFor, AnyExceptionIsCaughtOnItsThread) {
  const auto failure = parallel_for(40, 2, [&](std::size_t i, int) {
    if (i == 5) throw std::bad_alloc();
  });
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->index, 5u);
  EXPECT_THROW(std::rethrow_exception(failure->error), std::bad_alloc);
}

TEST(ParallelFor, LeadRunsOnTheCallingThreadAndItsErrorIsKept) {
  for (int threads = 1; threads <= 3; ++threads) {
    const std::thread::id caller = std::this_thread::get_id();
    std::thread::id lead_thread;
    std::atomic<int> runs{0};
    std::exception_ptr lead_error;
    const auto failure = parallel_for(
        30, threads, [&](std::size_t, int) { ++runs; },
        [&] {
          lead_thread = std::this_thread::get_id();
          throw Error(ErrorCode::invalid_argument, "lead");
        },
        &lead_error);
    EXPECT_FALSE(failure);
    EXPECT_EQ(runs.load(), 30);
    EXPECT_EQ(lead_thread, caller);
    ASSERT_TRUE(lead_error);
    EXPECT_THROW(std::rethrow_exception(lead_error), Error);
  }
}

TEST(ParallelFor, NestedPoolUseRunsSeriallyWithoutDeadlock) {
  // A Blosc section decoded with BLOSC_NTHREADS > 1 inside a parallel chunk decode.
  std::atomic<long> sum{0};
  const auto failure = parallel_for(16, 3, [&](std::size_t i, int) {
    auto inner = [&](int k) { sum += long(i) * 10 + k; };
    run_shared(4, inner);
  });
  EXPECT_FALSE(failure);
  long want = 0;
  for (long i = 0; i < 16; ++i)
    for (long k = 0; k < 4; ++k) want += i * 10 + k;
  EXPECT_EQ(sum.load(), want);
}

TEST(ParallelFor, ConcurrentCallersNeverWaitForEachOther) {
  std::atomic<long> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int round = 0; round < 50; ++round)
        EXPECT_FALSE(parallel_for(20, 3, [&](std::size_t i, int) { total += long(i); }));
    });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), 4L * 50 * 190);
}

}  // namespace
}  // namespace h5sparse

namespace h5sparse {
namespace {

// stream_parallel: every item produced in order on the calling thread, then consumed once,
// never more than `window` produced and unconsumed, for every thread count and window.
TEST(StreamParallel, EveryItemProducedInOrderThenConsumedOnceWithinTheWindow) {
  for (int threads = 1; threads <= 4; ++threads)
    for (std::size_t window : {1u, 2u, 3u, 8u})
      for (std::size_t count : {0u, 1u, 2u, 5u, 60u}) {
        const std::thread::id caller = std::this_thread::get_id();
        std::vector<std::atomic<int>> consumed(count);
        std::vector<int> buffer(window, -1);  // what each buffer holds
        std::atomic<std::size_t> produced{0}, done{0};
        std::atomic<int> errors{0};
        std::exception_ptr produce_error;
        const auto failure = stream_parallel(
            count, threads, window,
            [&](std::size_t i) {
              if (std::this_thread::get_id() != caller || i != produced.load()) ++errors;
              if (i >= done.load() + window) ++errors;  // more than the window ahead
              buffer[i % window] = int(i);
              ++produced;
            },
            [&](std::size_t i, int slot) {
              if (slot < 0 || slot >= threads || buffer[i % window] != int(i) || i >= produced.load()) ++errors;
              ++consumed[i];
              // `done`: the consumed prefix (every item below it consumed), advanced before
              // stream_parallel frees this item's buffer.
              std::size_t d = done.load();
              while (d < count && consumed[d].load())
                if (done.compare_exchange_weak(d, d + 1)) ++d;
            },
            &produce_error);
        EXPECT_FALSE(failure);
        EXPECT_FALSE(produce_error);
        EXPECT_EQ(errors.load(), 0) << threads << " " << window << " " << count;
        for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(consumed[i].load(), 1) << i;
      }
}

TEST(StreamParallel, LowestConsumeFailureWinsAndEveryItemBelowRan) {
  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<std::atomic<int>> consumed(100);
    std::exception_ptr produce_error;
    const auto failure = stream_parallel(
        100, threads, 8, [](std::size_t) {},
        [&](std::size_t i, int) {
          ++consumed[i];
          if (i == 37 || i == 41) throw Error(ErrorCode::corrupt_data, "bad " + std::to_string(i));
        },
        &produce_error);
    ASSERT_TRUE(failure);
    EXPECT_EQ(failure->index, 37u);
    EXPECT_FALSE(produce_error);
    for (std::size_t i = 0; i < 37; ++i) EXPECT_EQ(consumed[i].load(), 1) << i;
    for (std::size_t i = 49; i < 100; ++i) EXPECT_EQ(consumed[i].load(), 0) << i;  // past the window
  }
}

TEST(StreamParallel, ProduceFailureStopsThereAfterEverythingBelow) {
  for (int threads = 1; threads <= 3; ++threads) {
    std::vector<std::atomic<int>> consumed(50);
    std::exception_ptr produce_error;
    const auto failure = stream_parallel(
        50, threads, 4,
        [&](std::size_t i) {
          if (i == 20) throw Error(ErrorCode::invalid_argument, "read failed");
        },
        [&](std::size_t i, int) { ++consumed[i]; }, &produce_error);
    EXPECT_FALSE(failure);
    ASSERT_TRUE(produce_error);
    for (std::size_t i = 0; i < 50; ++i) EXPECT_EQ(consumed[i].load(), i < 20 ? 1 : 0) << i;
  }
}

TEST(StreamParallel, ConsumeFailureBelowAProduceFailureIsTheOneReported) {
  std::exception_ptr produce_error;
  const auto failure = stream_parallel(
      30, 2, 4,
      [&](std::size_t i) {
        if (i == 12) throw Error(ErrorCode::invalid_argument, "read failed");
      },
      [&](std::size_t i, int) {
        if (i == 9) throw Error(ErrorCode::corrupt_data, "bad");
      },
      &produce_error);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->index, 9u);
}

TEST(StreamParallel, ConcurrentCallersAndNestedPoolUseFinish) {
  std::atomic<long> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&] {
      for (int round = 0; round < 30; ++round) {
        std::exception_ptr produce_error;
        EXPECT_FALSE(stream_parallel(
            20, 3, 4, [](std::size_t) {},
            [&](std::size_t i, int) {
              auto inner = [&](int k) { total += long(i) * 4 + k; };
              run_shared(4, inner);
            },
            &produce_error));
      }
    });
  for (std::thread& t : callers) t.join();
  long want = 0;
  for (long i = 0; i < 20; ++i)
    for (long k = 0; k < 4; ++k) want += i * 4 + k;
  EXPECT_EQ(total.load(), 3L * 30 * want);
}

}  // namespace
}  // namespace h5sparse
