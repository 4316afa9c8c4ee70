// Keeping a shared object loaded until the process ends. Threads that wait between calls (the
// worker pool's, c-blosc's global pool) run its code, and HDF5 unloads filter plugins, with the
// libraries only they hold, at H5close and at exit. Private to core.
#pragma once

#include <dlfcn.h>

namespace h5sparse::detail {

/// Pins the shared object (or the executable) holding `address`.
inline void pin_object_holding(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) != 0 && info.dli_fname != nullptr) {
    dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);  // handle kept on purpose
  }
}

}  // namespace h5sparse::detail
