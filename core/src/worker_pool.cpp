// The shared worker pool. One job at a time: a caller publishes (task, state, helpers) under
// the pool's mutex and bumps a generation counter; workers 1..helpers run their index and count
// down `pending_`, and the last one wakes the caller. Nobody polls: on this shared 2-core VM a
// polling thread mostly takes the core its partner needs (measured: a job of two 100 us tasks
// took 340 us with 50/500 us of polling, 230 us without; a bare round trip costs 10 us).
//
// Lifetime: the pool is allocated once and never destroyed (no destructor can run while a
// worker might still wake), and the shared object holding this code is pinned in memory
// (RTLD_NODELETE), because HDF5 unloads filter plugins at exit while the workers still exist.
// After fork() the child has none of the parent's threads: a pool belongs to the process that
// made it, and a child makes its own.
#include "h5sparse/worker_pool.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <system_error>
#include <thread>

namespace h5sparse {
namespace {

using Task = void (*)(void*, int);
constexpr int kMaxWorkers = 255;

// Keeps the shared object (or executable) holding this code loaded until the process ends.
void pin_this_object() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&pin_this_object), &info) != 0 && info.dli_fname != nullptr) {
    dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);  // handle kept on purpose
  }
}

class Pool {
 public:
  explicit Pool(pid_t owner) : owner_(owner) {}
  pid_t owner() const noexcept { return owner_; }

  std::mutex busy;  // held by the caller whose job the pool runs

  // Under `busy`.
  void run(int count, Task task, void* state) {
    const int helpers = start_workers(count - 1);
    if (helpers > 0) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        task_ = task;
        state_ = state;
        helpers_ = helpers;
        pending_.store(helpers, std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
      }
      wake_.notify_all();
    }
    for (int i = 0; i < count; ++i) {
      if (i == 0 || i > helpers) task(state, i);
    }
    if (helpers > 0) wait_for_helpers();
  }

  int workers() const noexcept { return started_.load(std::memory_order_relaxed); }

 private:
  // Under `busy`: makes sure `wanted` workers exist; returns how many do.
  int start_workers(int wanted) {
    if (wanted > kMaxWorkers) wanted = kMaxWorkers;
    int have = started_.load(std::memory_order_relaxed);
    if (have == 0 && wanted > 0) pin_this_object();
    while (have < wanted) {
      try {
        std::thread(&Pool::work, this, have + 1, generation_.load(std::memory_order_acquire)).detach();
      } catch (const std::system_error&) {
        break;  // no more threads: the caller runs the rest itself
      }
      started_.store(++have, std::memory_order_relaxed);
    }
    return have < wanted ? have : wanted;
  }

  void wait_for_helpers() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
  }

  void work(int index, std::uint64_t seen) {
    for (;;) {
      Task task;
      void* state;
      int helpers;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return generation_.load(std::memory_order_relaxed) != seen; });
        seen = generation_.load(std::memory_order_relaxed);
        task = task_;
        state = state_;
        helpers = helpers_;
      }
      if (index > helpers) continue;  // this job needs fewer workers
      task(state, index);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        { std::lock_guard<std::mutex> lock(mutex_); }  // the caller checks pending_ under it
        done_.notify_one();
      }
    }
  }

  const pid_t owner_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> started_{0};
  Task task_ = nullptr;
  void* state_ = nullptr;
  int helpers_ = 0;
};

std::atomic<Pool*> g_pool{nullptr};

Pool* this_process_pool() {
  const pid_t pid = getpid();
  Pool* pool = g_pool.load(std::memory_order_acquire);
  if (pool != nullptr && pool->owner() == pid) return pool;
  // First use, or a forked child holding its parent's pool (whose threads it does not have;
  // that pool is left alone, its mutexes may be held forever).
  Pool* fresh = new Pool(pid);
  if (g_pool.compare_exchange_strong(pool, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;  // another thread of this process made one first
  return pool;
}

}  // namespace

void run_shared(int count, Task task, void* state) {
  if (count <= 0) return;
  Pool* pool = count > 1 ? this_process_pool() : nullptr;
  std::unique_lock<std::mutex> lock;
  if (pool != nullptr) lock = std::unique_lock<std::mutex>(pool->busy, std::try_to_lock);
  if (!lock.owns_lock()) {
    for (int i = 0; i < count; ++i) task(state, i);
    return;
  }
  pool->run(count, task, state);
}

int shared_pool_workers() noexcept {
  Pool* pool = g_pool.load(std::memory_order_acquire);
  return pool != nullptr && pool->owner() == getpid() ? pool->workers() : 0;
}

}  // namespace h5sparse
