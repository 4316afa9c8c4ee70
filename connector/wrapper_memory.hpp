// Recycled memory for wrappers (Object). A passthrough makes and frees a wrapper for every
// group, attribute or dataset opened; the blocks of freed wrappers are kept on a free list
// (up to kKeptBlocks of them) and handed out again, so that making or freeing one is a few
// inline instructions instead of calls into libstdc++ and malloc, whose code is otherwise not
// in the instruction cache at that moment (docs/DESIGN.md, "Performance notes").
//
// Callbacks run under HDF5's library lock (or in a library without threads), so the list is
// never contended; it is guarded anyway, by a flag that is only tried: whoever finds it taken
// uses malloc/free instead of waiting. Every block comes from malloc, so either path may free
// any block.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>

namespace h5sparse::vol {

class WrapperMemory {
 public:
  /// A block of `size` bytes (always the same size), nullptr when out of memory.
  void* take(std::size_t size) noexcept {
    if (__builtin_expect(try_lock(), 1)) {
      FreeBlock* block = free_list_;
      if (block != nullptr) {
        free_list_ = block->next;
        --kept_;
      }
      unlock();
      if (__builtin_expect(block != nullptr, 1)) return block;
    }
    return take_from_heap(size);
  }

  void give(void* memory) noexcept {
    if (__builtin_expect(try_lock(), 1)) {
      if (__builtin_expect(kept_ < kKeptBlocks, 1)) {
        auto* block = static_cast<FreeBlock*>(memory);
        block->next = free_list_;
        free_list_ = block;
        ++kept_;
        unlock();
        return;
      }
      unlock();
    }
    give_to_heap(memory);
  }

  /// Returns every kept block to the heap (the connector's terminate callback).
  void drain() noexcept;

 private:
  struct FreeBlock {
    FreeBlock* next;
  };
  static constexpr unsigned kKeptBlocks = 1024;  // 40 KiB: what a few hundred open objects leave

  [[gnu::noinline]] static void* take_from_heap(std::size_t size) noexcept;
  [[gnu::cold, gnu::noinline]] static void give_to_heap(void* memory) noexcept;
  bool try_lock() noexcept { return !busy_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { busy_.store(false, std::memory_order_release); }

  std::atomic<bool> busy_{false};
  FreeBlock* free_list_ = nullptr;
  unsigned kept_ = 0;
};

/// The connector's one instance (trivially destructible: wrappers may still be freed while the
/// process exits, after static destructors ran).
extern WrapperMemory wrapper_memory;

}  // namespace h5sparse::vol
