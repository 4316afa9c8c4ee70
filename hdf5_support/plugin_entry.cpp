// See plugin_entry.hpp.
#include "plugin_entry.hpp"

#include <hdf5.h>

#include <atomic>

#include "h5sparse/kept_memory.hpp"
#include "library_guard.hpp"

namespace h5sparse::hdf5 {
namespace {

std::atomic<bool> close_hook_registered{false};

void on_hdf5_close(void*) {
  release_kept_memory();
  close_hook_registered.store(false);
}

}  // namespace

bool plugin_entry(const char* plugin) noexcept {
  if (!single_hdf5_library(plugin)) return false;
  if (!close_hook_registered.exchange(true) && H5atclose(on_hdf5_close, nullptr) < 0)
    close_hook_registered.store(false);  // kept memory then lasts until each thread's next call
  return true;
}

}  // namespace h5sparse::hdf5
