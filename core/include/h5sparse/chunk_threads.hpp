// Chunks of one read or write decoded and encoded on several threads. HDF5 is not thread-safe
// (the connector runs under its library lock), so the caller keeps every HDF5 call on its own
// thread and hands only the pure core work of independent chunks (decode, scatter into disjoint
// parts of the caller's buffer, fill scan, encode, checksums) to the shared worker pool.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <type_traits>
#include <vector>

#include "h5sparse/worker_pool.hpp"

namespace h5sparse {

/// The most threads chunk work uses, whatever it is told: beyond this a read or write of one
/// dataset is bound by the memory bus and the serial HDF5 calls, not by decoding.
constexpr int kMaxChunkThreads = 16;

/// Threads for the chunks of one call: $H5SPARSE_NTHREADS when it is a positive integer, else
/// the CPUs in this process's affinity mask (MPI launchers bind each rank to its cores, so a
/// rank bound to one core gets 1), at most kMaxChunkThreads. 1 is the serial path.
int chunk_threads();

/// Below both of these a call's chunks stay on the calling thread unless H5SPARSE_NTHREADS
/// asks otherwise: waking a worker (~10-30 us on a loaded machine) costs more than a few
/// small chunks take to decode.
constexpr std::uint64_t kParallelMinBytes = std::uint64_t(64) << 10;
constexpr std::uint64_t kParallelMinChunks = 8;

/// Threads for a call touching `chunks` chunks and `bytes` bytes of the caller's buffer: 1 for
/// a single chunk; chunk_threads() when H5SPARSE_NTHREADS is set or the call is large enough
/// (kParallelMinBytes or kParallelMinChunks); else 1 (without asking the system).
int chunk_threads_for(std::uint64_t chunks, std::uint64_t bytes);

/// The first failure of a parallel loop: the lowest index whose work threw, and what it threw.
struct IndexedFailure {
  std::size_t index;
  std::exception_ptr error;
};

/// The failure with the lowest index among the threads' (those without an error are none).
inline std::optional<IndexedFailure> lowest_failure(const std::vector<IndexedFailure>& failures) {
  const IndexedFailure* first = nullptr;
  for (const IndexedFailure& f : failures)
    if (f.error && (first == nullptr || f.index < first->index)) first = &f;
  if (first == nullptr) return std::nullopt;
  return *first;
}

/// Runs work(i, slot) for every i in [0, count) on up to `threads` threads (the calling thread
/// and workers of the shared pool). `slot` in [0, threads) names the thread running the call,
/// for per-thread scratch; slot 0 is the calling thread. Indices are taken in increasing order;
/// an exception from work(i) is caught on its thread, after which no further index starts,
/// and the lowest failed index is returned with its exception: every index below it ran (as in
/// a serial loop stopped at its first failure). Nothing crosses threads as an exception.
/// With `lead`, the calling thread first runs lead() (for HDF5 calls, which must stay on the
/// calling thread: reading the next batch while the workers decode this one), then joins the
/// loop; an exception from lead() goes to `*lead_error`. With threads <= 1 (or the pool busy
/// with another caller) everything runs on the calling thread, lead first, then in index order.
template <typename Work, typename Lead>
std::optional<IndexedFailure> parallel_for(std::size_t count, int threads, Work&& work, Lead&& lead,
                                           std::exception_ptr* lead_error) {
  auto run_lead = [&] {
    try {
      lead();
    } catch (...) {
      *lead_error = std::current_exception();
    }
  };
  if (threads <= 1 || count == 0) {
    run_lead();
    for (std::size_t i = 0; i < count; ++i) {
      try {
        work(i, 0);
      } catch (...) {
        return IndexedFailure{i, std::current_exception()};
      }
    }
    return std::nullopt;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::vector<IndexedFailure> failures(std::size_t(threads), IndexedFailure{count, nullptr});
  auto task = [&](int slot) {
    if (slot == 0) run_lead();
    while (!failed.load(std::memory_order_relaxed)) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= count) return;
      try {
        work(i, slot);
      } catch (...) {
        failures[std::size_t(slot)] = IndexedFailure{i, std::current_exception()};
        failed.store(true, std::memory_order_relaxed);
        return;
      }
    }
  };
  run_shared(threads, task);
  return lowest_failure(failures);
}

/// Streams items 0 .. count-1 through up to `threads` threads in one parallel region (one
/// wait for the workers at the end, not one per batch): produce(i) runs on the calling thread
/// in index order (HDF5 reads), consume(i, slot) on any thread once item i is produced, into
/// buffer `i % window` (at most `window` items produced and not yet consumed; the calling
/// thread consumes too whenever it cannot produce). After a failure at item i (consume) or p
/// (produce) no item at or above it is produced or started, while every item below it still
/// runs, so the lowest consume failure is returned with every item below it done, as in a
/// serial loop; a produce failure goes to `*produce_error` and counts as the failure of item
/// p. slot 0 is the calling thread. With threads <= 1 it is that serial loop.
namespace detail {

// stream_parallel's shared state and the steps of its two roles: the calling thread produces
// (and consumes whenever it cannot produce), the workers consume.
template <typename Produce, typename Consume>
class Stream {
 public:
  Stream(std::size_t count, int threads, std::size_t window, Produce& produce, Consume& consume,
         std::exception_ptr* produce_error)
      : window_(window), produce_(produce), consume_(consume), produce_error_(produce_error),
        limit_(count), finished_(window), failures_(std::size_t(threads), IndexedFailure{count, nullptr}) {
    for (auto& f : finished_) f.store(0, std::memory_order_relaxed);
  }

  void task(int slot) {
    if (slot != 0) return consume_claimed(slot);
    produce_and_consume();
  }

  std::optional<IndexedFailure> lowest() const { return lowest_failure(failures_); }

 private:
  void wake() {
    { std::lock_guard<std::mutex> lock(mutex_); }  // waiters check their condition under it
    changed_.notify_all();
  }

  void lower_limit(std::size_t to) {
    std::size_t now = limit_.load(std::memory_order_relaxed);
    while (to < now && !limit_.compare_exchange_weak(now, to, std::memory_order_acq_rel)) {
    }
    wake();
  }

  // Consumes a claimed, produced item; false after a failure.
  bool run(std::size_t i, int slot) {
    try {
      consume_(i, slot);
    } catch (...) {
      failures_[std::size_t(slot)] = IndexedFailure{i, std::current_exception()};
      lower_limit(i);
      return false;
    }
    finished_[i % window_].store(i + 1, std::memory_order_release);
    wake();
    return true;
  }

  // Item i - window (the buffer's previous item) consumed.
  bool buffer_free(std::size_t i) const {
    return i < window_ || finished_[i % window_].load(std::memory_order_acquire) >= i - window_ + 1;
  }

  // A worker: claims items in order and consumes each once it is produced.
  void consume_claimed(int slot) {
    for (;;) {
      const std::size_t i = claimed_.fetch_add(1, std::memory_order_acq_rel);
      if (i >= limit_.load(std::memory_order_acquire)) return;
      if (produced_.load(std::memory_order_acquire) <= i) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] {
          return produced_.load(std::memory_order_acquire) > i || i >= limit_.load(std::memory_order_acquire);
        });
      }
      if (produced_.load(std::memory_order_acquire) <= i || !run(i, slot)) return;
    }
  }

  // Produces the next item into its buffer; false when it failed (the limit is lowered).
  bool produce_next(std::size_t& next) {
    try {
      produce_(next);
    } catch (...) {
      *produce_error_ = std::current_exception();
      lower_limit(next);
      return false;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      produced_.store(++next, std::memory_order_release);
    }
    changed_.notify_all();
    return true;
  }

  // The calling thread: produces while a buffer is free, else consumes a produced item, else
  // waits for the oldest item to finish.
  void produce_and_consume() {
    std::size_t next = 0;  // the next item to produce
    for (;;) {
      const std::size_t stop = limit_.load(std::memory_order_acquire);
      if (next < stop && buffer_free(next)) {
        produce_next(next);
        continue;
      }
      std::size_t i = claimed_.load(std::memory_order_acquire);
      if (i < std::min(next, stop) && claimed_.compare_exchange_strong(i, i + 1, std::memory_order_acq_rel)) {
        run(i, 0);
        continue;
      }
      if (next >= stop && claimed_.load(std::memory_order_acquire) >= std::min(next, stop)) return;
      if (next >= stop) continue;  // an item is being claimed meanwhile
      // The window is full and every produced item is taken: wait for the oldest to finish.
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return buffer_free(next) || limit_.load(std::memory_order_acquire) != stop; });
    }
  }

  const std::size_t window_;
  Produce& produce_;
  Consume& consume_;
  std::exception_ptr* produce_error_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::atomic<std::size_t> produced_{0};  // items below are ready
  std::atomic<std::size_t> claimed_{0};   // the next item to start
  std::atomic<std::size_t> limit_;        // no item at or above is produced or started
  std::vector<std::atomic<std::size_t>> finished_;  // per buffer: consumed items' index + 1
  std::vector<IndexedFailure> failures_;
};

// stream_parallel with one thread: produce, consume, item after item.
template <typename Produce, typename Consume>
std::optional<IndexedFailure> stream_serially(std::size_t count, Produce& produce, Consume& consume,
                                              std::exception_ptr* produce_error) {
  for (std::size_t i = 0; i < count; ++i) {
    try {
      produce(i);
    } catch (...) {
      *produce_error = std::current_exception();
      return std::nullopt;
    }
    try {
      consume(i, 0);
    } catch (...) {
      return IndexedFailure{i, std::current_exception()};
    }
  }
  return std::nullopt;
}

}  // namespace detail

/// Streams items 0 .. count-1 through up to `threads` threads in one parallel region (one
/// wait for the workers at the end, not one per batch): produce(i) runs on the calling thread
/// in index order (HDF5 reads), consume(i, slot) on any thread once item i is produced, into
/// buffer `i % window` (at most `window` items produced and not yet consumed; the calling
/// thread consumes too whenever it cannot produce). After a failure at item i (consume) or p
/// (produce) no item at or above it is produced or started, while every item below it still
/// runs, so the lowest consume failure is returned with every item below it done, as in a
/// serial loop; a produce failure goes to `*produce_error` and counts as the failure of item
/// p. slot 0 is the calling thread. With threads <= 1 it is that serial loop.
template <typename Produce, typename Consume>
std::optional<IndexedFailure> stream_parallel(std::size_t count, int threads, std::size_t window, Produce&& produce,
                                              Consume&& consume, std::exception_ptr* produce_error) {
  if (threads <= 1 || count <= 1 || window < 2) return detail::stream_serially(count, produce, consume, produce_error);
  detail::Stream<std::remove_reference_t<Produce>, std::remove_reference_t<Consume>> stream(
      count, threads, window, produce, consume, produce_error);
  auto task = [&](int slot) { stream.task(slot); };
  run_shared(threads, task);
  return stream.lowest();
}

/// parallel_for without a lead.
template <typename Work>
std::optional<IndexedFailure> parallel_for(std::size_t count, int threads, Work&& work) {
  if (std::size_t(threads) > count) threads = int(count);
  return parallel_for(count, threads, work, [] {}, nullptr);
}

}  // namespace h5sparse
