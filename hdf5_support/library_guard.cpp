// See library_guard.hpp.
#include "library_guard.hpp"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <hdf5.h>
#include <link.h>
#include <limits.h>
#include <stdlib.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace h5sparse::hdf5 {
namespace {

std::string real_path(const char* path) {
  char resolved[PATH_MAX];
  return realpath(path, resolved) ? std::string(resolved) : std::string(path);
}

// "libhdf5.so...", "libhdf5_serial.so...", "libhdf5_openmpi.so...": the C library itself, not
// its hl/cpp/fortran companions.
bool is_hdf5_c_library(const std::string& path) {
  const std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.rfind("libhdf5", 0) != 0) return false;
  const std::size_t so = name.find(".so");
  if (so == std::string::npos) return false;
  const std::string flavour = name.substr(7, so - 7);  // "", "_serial", "_openmpi", "_mpich"
  return flavour.empty() || flavour == "_serial" || flavour == "_openmpi" || flavour == "_mpich";
}

int collect(struct dl_phdr_info* info, size_t, void* data) {
  if (info->dlpi_name && *info->dlpi_name && is_hdf5_c_library(info->dlpi_name))
    static_cast<std::vector<std::string>*>(data)->push_back(real_path(info->dlpi_name));
  return 0;
}

}  // namespace

bool single_hdf5_library(const char* plugin) noexcept {
  try {
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&H5open), &self) == 0 || self.dli_fname == nullptr) return true;
    const std::string ours = real_path(self.dli_fname);
    std::vector<std::string> loaded;
    dl_iterate_phdr(collect, &loaded);
    for (const std::string& other : loaded) {
      if (other == ours) continue;
      static bool reported = false;
      if (!reported) {
        reported = true;
        std::fprintf(stderr,
                     "h5sparse: refusing to load the %s plugin: it was built against %s, but this process "
                     "uses %s. Use the plugins of the matching flavour (h5plugin-config --flavour; "
                     "h5plugin-config --parallel --env for parallel HDF5).\n",
                     plugin, ours.c_str(), other.c_str());
      }
      return false;
    }
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace h5sparse::hdf5
