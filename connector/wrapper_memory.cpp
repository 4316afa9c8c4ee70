// The free list of wrapper blocks (wrapper_memory.hpp).
#include "wrapper_memory.hpp"

namespace h5sparse::vol {

WrapperMemory wrapper_memory;

void* WrapperMemory::take_from_heap(std::size_t size) noexcept { return std::malloc(size); }
void WrapperMemory::give_to_heap(void* memory) noexcept { std::free(memory); }

void WrapperMemory::drain() noexcept {
  if (!try_lock()) return;
  while (free_list_ != nullptr) {
    FreeBlock* next = free_list_->next;
    std::free(free_list_);
    free_list_ = next;
  }
  kept_ = 0;
  unlock();
}

}  // namespace h5sparse::vol
