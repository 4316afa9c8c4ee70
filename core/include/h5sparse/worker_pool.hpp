// A process-wide pool of persistent worker threads for splitting one transfer's work (its
// chunks, decoded or encoded one per thread: chunk_threads.hpp) between threads. Starting
// threads per call costs more than decoding a 1 MiB chunk, and c-blosc's own pool is global
// state shared with every other c-blosc user in the process (PyTables, hdf5plugin), so the
// core keeps its own.
#pragma once

#include <type_traits>

namespace h5sparse {

/// Runs task(0) .. task(count - 1) and returns when all have finished: task(0) on the calling
/// thread, the others on pool workers (started on first use, kept for the life of the process),
/// each by whichever thread is free first, the caller included: after task(0) the caller runs
/// the indices no worker has taken yet, so a worker slow to wake delays nothing. Two indices
/// never run at the same time on one thread, but an index other than 0 may run on any. A caller that finds the pool busy with another thread's tasks runs all of its tasks itself,
/// one after the other, so concurrent callers never wait for each other. Tasks must not throw;
/// they report failures through the state they share with the caller.
void run_shared(int count, void (*task)(void* state, int index), void* state);

template <typename Task>
void run_shared(int count, Task& task) {
  static_assert(std::is_invocable_v<Task&, int>, "task(index)");
  run_shared(count, [](void* state, int index) { (*static_cast<Task*>(state))(index); }, &task);
}

/// Starts workers ahead of use, so that a later run_shared(count) finds them: a process's
/// first parallel call otherwise waits for thread creation and for the new thread's first
/// time slice (0.1-5 ms measured, more under load). Does nothing when the pool is busy or
/// already has them; a worker started here polls briefly for a job, then sleeps.
void prestart_shared_workers(int count) noexcept;

/// Workers the pool has started so far in this process (for tests).
int shared_pool_workers() noexcept;

}  // namespace h5sparse
