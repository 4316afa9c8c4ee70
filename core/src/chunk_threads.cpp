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

}  // namespace

int chunk_threads() {
  int threads = 0;
  if (const char* text = std::getenv("H5SPARSE_NTHREADS")) {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (errno == 0 && end != text && *end == '\0' && value > 0)
      threads = value > kMaxChunkThreads ? kMaxChunkThreads : int(value);
  }
  if (threads == 0) threads = affinity_cpus();
  if (threads < 1) threads = 1;
  return threads > kMaxChunkThreads ? kMaxChunkThreads : threads;
}

}  // namespace h5sparse
