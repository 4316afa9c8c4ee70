#include "h5sparse/prefault_ahead.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14 and later
#endif

namespace h5sparse {
namespace {

constexpr std::uintptr_t kPiece = std::uintptr_t(2) << 20;  // a transparent huge page
std::atomic<bool> g_unsupported{false};  // the kernel said EINVAL once: never ask again

std::uintptr_t page_size() noexcept {
  static const std::uintptr_t size = [] {
    const long s = sysconf(_SC_PAGESIZE);
    return s > 0 ? std::uintptr_t(s) : std::uintptr_t(4096);
  }();
  return size;
}

}  // namespace

// Whole pages inside the range only: a page the destination shares with other memory is
// left to the writes.
PrefaultAhead::PrefaultAhead(std::uint8_t* data, std::size_t size) noexcept {
  const std::uintptr_t page = page_size();
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) & ~(page - 1);
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(data) + size) & ~(page - 1);
  data_ = reinterpret_cast<std::uintptr_t>(data);
  end_ = end > begin ? end : begin;
  next_.store(begin, std::memory_order_relaxed);
}

bool PrefaultAhead::populate_next(std::uintptr_t limit) noexcept {
  std::uintptr_t from = next_.load(std::memory_order_relaxed);
  std::uintptr_t to;
  do {
    if (from >= end_ || from >= limit) return false;
    to = (from + kPiece) & ~(kPiece - 1);
    if (to > end_) to = end_;
  } while (!next_.compare_exchange_weak(from, to, std::memory_order_relaxed));
  if (madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
    g_unsupported.store(true, std::memory_order_relaxed);
  }
  return true;
}

void PrefaultAhead::advance(std::uint64_t needed, std::uint64_t ahead) noexcept {
  if (g_unsupported.load(std::memory_order_relaxed)) return;
  const std::uint64_t room = end_ - data_;  // offsets beyond the destination mean its end
  while (populate_next(data_ + std::uintptr_t(needed < room ? needed : room))) {
  }
  populate_next(data_ + std::uintptr_t(ahead < room ? ahead : room));
}

}  // namespace h5sparse
