// The process-wide account of kept memory (kept_memory.hpp).
#include "h5sparse/kept_memory.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>

namespace h5sparse {
namespace {

constexpr std::size_t kDefaultBudgetMiB = 256;

std::atomic<std::size_t> g_kept{0};

// Keepers of every thread; a keeper leaves when its thread ends. Never destroyed: threads may
// end after static destruction.
struct Registry {
  std::mutex mutex;
  std::set<Keeper*> keepers;
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

std::size_t kept_memory_budget() noexcept {
  static const std::size_t budget = [] {
    const char* text = std::getenv("H5SPARSE_KEPT_MB");
    char* end = nullptr;
    const unsigned long long mib = text != nullptr ? std::strtoull(text, &end, 10) : kDefaultBudgetMiB;
    const bool valid = text == nullptr || (end != text && *end == '\0' && mib < (1ull << 30));
    return std::size_t(valid ? mib : kDefaultBudgetMiB) << 20;
  }();
  return budget;
}

std::size_t kept_memory() noexcept { return g_kept.load(std::memory_order_relaxed); }

Keeper::Keeper() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.keepers.insert(this);
}

Keeper::~Keeper() {
  g_kept.fetch_sub(counted_, std::memory_order_relaxed);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.keepers.erase(this);
}

void Keeper::settle() noexcept {
  const std::size_t now = held();
  if (now >= counted_) g_kept.fetch_add(now - counted_, std::memory_order_relaxed);
  else g_kept.fetch_sub(counted_ - now, std::memory_order_relaxed);
  counted_ = now;
  if (g_kept.load(std::memory_order_relaxed) > kept_memory_budget()) release();
}

void Keeper::release() noexcept {
  free_buffers();
  g_kept.fetch_sub(counted_, std::memory_order_relaxed);
  counted_ = 0;
}

void release_kept_memory() noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (Keeper* k : r.keepers) k->release();
}

}  // namespace h5sparse
