#include "h5sparse/populate_pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "h5sparse/worker_pool.hpp"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14 and later
#endif

namespace h5sparse {
namespace {

constexpr std::uintptr_t kPiece = std::uintptr_t(2) << 20;  // a transparent huge page
std::atomic<bool> g_unsupported{false};  // the kernel said EINVAL once: never ask again

}  // namespace

void populate_pages_for_writing(std::uint8_t* data, std::size_t size, int threads) noexcept {
  if (g_unsupported.load(std::memory_order_relaxed) || size == 0) return;
  const std::uintptr_t page = std::uintptr_t(sysconf(_SC_PAGESIZE));
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) & ~(page - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + size) & ~(page - 1);
  if (end <= begin) return;
  // Pieces on 2 MiB boundaries, so that no two threads fault the same huge page.
  const std::uintptr_t first_boundary = (begin + kPiece) & ~(kPiece - 1);
  const std::size_t pieces = std::size_t((end - first_boundary + kPiece - 1) / kPiece) + 1;
  auto populate = [&](int slot) {
    for (std::size_t k = std::size_t(slot); k < pieces; k += std::size_t(threads)) {
      if (g_unsupported.load(std::memory_order_relaxed)) return;
      const std::uintptr_t from = k == 0 ? begin : first_boundary + (k - 1) * kPiece;
      std::uintptr_t to = k == 0 ? first_boundary : from + kPiece;
      if (to > end) to = end;
      if (from >= to) continue;
      if (madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
        g_unsupported.store(true, std::memory_order_relaxed);
      }
    }
  };
  run_shared(threads < 1 ? 1 : threads, populate);
}

}  // namespace h5sparse
