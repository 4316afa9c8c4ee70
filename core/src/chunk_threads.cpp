#include "h5sparse/chunk_threads.hpp"

#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

namespace h5sparse {
namespace {

// The CPUs this process may run on (not the machine's: a bound MPI rank or a taskset).
int affinity_cpus() {
#ifdef CPU_COUNT
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
  return int(std::thread::hardware_concurrency());  // 0 when unknown
}

// $H5SPARSE_NTHREADS when it is a positive integer (at most kMaxChunkThreads), else 0.
int threads_asked() {
  const char* text = std::getenv("H5SPARSE_NTHREADS");
  if (text == nullptr) return 0;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value <= 0) return 0;
  return value > kMaxChunkThreads ? kMaxChunkThreads : int(value);
}

}  // namespace

int chunk_threads() {
  int threads = threads_asked();
  if (threads == 0) threads = affinity_cpus();
  if (threads < 1) threads = 1;
  return threads > kMaxChunkThreads ? kMaxChunkThreads : threads;
}

int chunk_threads_for(std::uint64_t chunks, std::uint64_t bytes) {
  if (chunks < 2) return 1;
  if (bytes < kParallelMinBytes && chunks < kParallelMinChunks && threads_asked() == 0) return 1;
  return chunk_threads();
}

}  // namespace h5sparse
