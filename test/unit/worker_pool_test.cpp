// The core's worker pool (worker_pool.hpp), which the connector's chunk threads run on: every
// task runs once, back-to-back jobs keep their own state, task 0 runs on the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "h5sparse/worker_pool.hpp"

using namespace h5sparse;

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
