// The shared worker pool. One job at a time: a caller publishes (task, state, count) under the
// pool's mutex, with a ticket (job number, next index) that everybody claims indices from.
// The caller runs index 0, then claims and runs indices like any worker, so a worker that wakes
// late costs nothing: the caller has taken its share by then. The caller then waits only for
// the indices workers claimed and still run, and a worker that finished a job waits for the
// next. By default both sleep at once: the library never busy-waits on a machine it shares.
// H5SPARSE_POLL_US=N lets them poll up to N us first (as libgomp's OMP_WAIT_POLICY=active),
// which takes a job or a result that comes within that time without a wake-up, for callers
// that own their cores.
//
// Lifetime: the pool is allocated once and never destroyed (no destructor can run while a
// worker might still wake), and the shared object holding this code is pinned in memory
// (RTLD_NODELETE), because HDF5 unloads filter plugins at exit while the workers still exist.
// After fork() the child has none of the parent's threads: a pool belongs to the process that
// made it, and a child makes its own.
#include "h5sparse/worker_pool.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>

#include "pinned_object.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace h5sparse {
namespace {

using Task = void (*)(void*, int);
using Clock = std::chrono::steady_clock;
constexpr int kMaxWorkers = 255;
constexpr long kMaxPollMicroseconds = 100000;

// How long a thread polls before it sleeps: H5SPARSE_POLL_US (0 to 100000), default 0.
std::chrono::microseconds poll_budget() noexcept {
  static const std::chrono::microseconds budget = [] {
    const char* text = std::getenv("H5SPARSE_POLL_US");
    char* end = nullptr;
    const long us = text != nullptr ? std::strtol(text, &end, 10) : 0;
    const bool valid = text != nullptr && end != text && *end == '\0' && us >= 0 && us <= kMaxPollMicroseconds;
    return std::chrono::microseconds(valid ? us : 0);
  }();
  return budget;
}

void relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls `done()` for up to `budget`; true when it came true.
template <typename Done>
bool poll_for(std::chrono::microseconds budget, Done done) noexcept {
  if (done() || budget.count() == 0) return done();
  const Clock::time_point until = Clock::now() + budget;
  do {
    for (int i = 0; i < 64; ++i) {
      relax();
      if (done()) return true;
    }
  } while (Clock::now() < until);
  return done();
}

// A ticket: the job's number in the high 32 bits, the next unclaimed index in the low 32.
constexpr std::uint64_t job_of(std::uint64_t ticket) { return ticket >> 32; }
constexpr std::uint64_t index_of(std::uint64_t ticket) { return ticket & 0xffffffffu; }

// True on a thread while it runs a pool job's tasks (as the caller or as a worker): a task
// that calls run_shared again runs its tasks itself. The caller's thread already holds `busy`,
// and try_lock on a std::mutex the thread owns is undefined behaviour.
thread_local bool t_running_job = false;

struct RunningJob {
  RunningJob() noexcept { t_running_job = true; }
  ~RunningJob() { t_running_job = false; }
};

class Pool {
 public:
  explicit Pool(pid_t owner) : owner_(owner) {}
  pid_t owner() const noexcept { return owner_; }

  std::mutex busy;  // held by the caller whose job the pool runs

  // Under `busy`.
  void run(int count, Task task, void* state) {
    if (start_workers(count - 1) == 0) {
      for (int i = 0; i < count; ++i) task(state, i);
      return;
    }
    std::uint64_t job;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job = job_of(ticket_.load(std::memory_order_relaxed)) + 1;
      task_ = task;
      state_ = state;
      count_ = count;
      finished_.store(0, std::memory_order_relaxed);
      ticket_.store(job << 32 | 1, std::memory_order_release);  // index 0 is the caller's
    }
    wake_.notify_all();
    task(state, 0);
    int mine = 1;
    for (int i; (i = claim(job, count)) >= 0; ++mine) task(state, i);
    if (finished_.fetch_add(mine, std::memory_order_acq_rel) + mine == count) return;
    auto all_done = [&] { return finished_.load(std::memory_order_acquire) == count; };
    if (poll_for(poll_budget(), all_done)) return;
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, all_done);
  }

  int workers() const noexcept { return started_.load(std::memory_order_relaxed); }

  // Under `busy`.
  void prestart(int count) { start_workers(count - 1); }

 private:
  // Under `busy`: makes sure `wanted` workers exist; returns how many do.
  int start_workers(int wanted) {
    if (wanted > kMaxWorkers) wanted = kMaxWorkers;
    int have = started_.load(std::memory_order_relaxed);
    if (have == 0 && wanted > 0) detail::pin_object_holding(reinterpret_cast<const void*>(&poll_budget));
    while (have < wanted) {
      try {
        std::thread(&Pool::work, this, job_of(ticket_.load(std::memory_order_acquire))).detach();
      } catch (const std::system_error&) {
        break;  // no more threads: the caller runs the rest itself
      }
      started_.store(++have, std::memory_order_relaxed);
    }
    return have < wanted ? have : wanted;
  }

  // The next unclaimed index of job `job`, or -1 when the job has none left (or is over).
  int claim(std::uint64_t job, int count) noexcept {
    std::uint64_t ticket = ticket_.load(std::memory_order_acquire);
    for (;;) {
      if (job_of(ticket) != job || index_of(ticket) >= std::uint64_t(count)) return -1;
      if (ticket_.compare_exchange_weak(ticket, ticket + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        return int(index_of(ticket));
      }
    }
  }

  void work(std::uint64_t seen) {
    t_running_job = true;  // a worker runs nothing but job tasks
    for (;;) {
      Task task;
      void* state;
      int count;
      poll_for(poll_budget(), [&] { return job_of(ticket_.load(std::memory_order_acquire)) != seen; });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return job_of(ticket_.load(std::memory_order_relaxed)) != seen; });
        seen = job_of(ticket_.load(std::memory_order_relaxed));
        task = task_;
        state = state_;
        count = count_;
      }
      // Claims fail once the job is over (all claimed) or a later one has replaced it.
      for (int i; (i = claim(seen, count)) >= 0;) {
        task(state, i);
        if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == count) {
          { std::lock_guard<std::mutex> lock(mutex_); }  // the caller checks finished_ under it
          done_.notify_one();
        }
      }
    }
  }

  const pid_t owner_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<std::uint64_t> ticket_{0};
  std::atomic<int> finished_{0};  // indices of the current job run to the end
  std::atomic<int> started_{0};
  // The current job, written under mutex_ before its ticket.
  Task task_ = nullptr;
  void* state_ = nullptr;
  int count_ = 0;
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
  Pool* pool = count > 1 && !t_running_job ? this_process_pool() : nullptr;
  std::unique_lock<std::mutex> lock;
  if (pool != nullptr) lock = std::unique_lock<std::mutex>(pool->busy, std::try_to_lock);
  if (!lock.owns_lock()) {
    for (int i = 0; i < count; ++i) task(state, i);
    return;
  }
  const RunningJob running;
  pool->run(count, task, state);
}

void prestart_shared_workers(int count) noexcept {
  if (count <= 1 || t_running_job || shared_pool_workers() >= count - 1) return;
  try {
    Pool* pool = this_process_pool();
    std::unique_lock<std::mutex> lock(pool->busy, std::try_to_lock);
    if (lock.owns_lock()) pool->prestart(count);
  } catch (...) {  // no memory for the pool: the first parallel call tries again
  }
}

int shared_pool_workers() noexcept {
  Pool* pool = g_pool.load(std::memory_order_acquire);
  return pool != nullptr && pool->owner() == getpid() ? pool->workers() : 0;
}

}  // namespace h5sparse
