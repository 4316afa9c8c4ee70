// See close_release.hpp.
#include "close_release.hpp"

#include <hdf5.h>

#include <atomic>

#include "h5sparse/kept_memory.hpp"

namespace h5sparse::hdf5 {
namespace {

std::atomic<bool> registered{false};

void on_hdf5_close(void*) {
  release_kept_memory();
  registered.store(false);
}

}  // namespace

void release_kept_memory_at_close() noexcept {
  if (registered.load(std::memory_order_acquire) || registered.exchange(true)) return;
  if (H5atclose(on_hdf5_close, nullptr) < 0) registered.store(false);  // kept memory then waits for the budget
}

}  // namespace h5sparse::hdf5
