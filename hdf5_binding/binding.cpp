// See binding.hpp.
#include "binding.hpp"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <mutex>

extern "C" {
// Defined by the generated trampolines: one slot a function, each starting at
// h5sparse_hdf5_unbound.
extern void* h5sparse_hdf5_function_slots[];
[[gnu::visibility("hidden")]] void h5sparse_hdf5_unbound() {
  std::fputs("h5sparse: an HDF5 function was called before h5sparse was bound to an HDF5 library\n", stderr);
  std::abort();
}
}

namespace h5sparse::hdf5_binding {
namespace {

#include "hdf5_names.inc"
constexpr std::size_t kDataSlots = kDataCount + 1;  // + 1: a build may read no data global

// Until bound, every data global reads as an invalid identifier (or false), so a stray use fails
// in HDF5.
hid_t unbound_identifier = H5I_INVALID_HID;
const bool data_slots_start_invalid = [] {
  for (std::size_t i = 0; i < kDataCount; ++i) h5sparse_hdf5_data_slots[i] = &unbound_identifier;
  return true;
}();

std::mutex binding_mutex;
Dl_info bound{};  // dli_fbase identifies the bound library; null while unbound
bool high_level_bound = false;

struct Slots {
  void* functions[kFunctionCount];
  void* data[kDataSlots];
};

// Every name looked up in `library`; the first missing one is reported.
std::string look_up(void* library, Slots& slots) {
  for (std::size_t i = 0; i < kLibraryFunctionCount; ++i)
    if ((slots.functions[i] = dlsym(library, kFunctionNames[i])) == nullptr)
      return std::string("it has no function ") + kFunctionNames[i];
  for (std::size_t i = 0; i < kDataCount; ++i)
    if ((slots.data[i] = dlsym(library, kDataNames[i])) == nullptr)
      return std::string("it has no variable ") + kDataNames[i];
  return {};
}

// The series this build's headers describe: 1.14.x binds only to 1.14.y, 2.x only to 2.y.
std::string check_series(void* library) {
  using Version = herr_t (*)(unsigned*, unsigned*, unsigned*);
  const auto version = reinterpret_cast<Version>(dlsym(library, "H5get_libversion"));
  unsigned major = 0, minor = 0, release = 0;
  if (version == nullptr || version(&major, &minor, &release) < 0) return "H5get_libversion failed";
  if (major == H5_VERS_MAJOR && (H5_VERS_MAJOR >= 2 || minor == H5_VERS_MINOR)) return {};
  char text[160];
  std::snprintf(text, sizeof text, "it is HDF5 %u.%u.%u; this h5sparse build is for HDF5 %d.%s", major, minor,
                release, H5_VERS_MAJOR, H5_VERS_MAJOR >= 2 ? "x" : "14.x");
  return text;
}

void install(const Slots& slots) {
  for (std::size_t i = 0; i < kLibraryFunctionCount; ++i) h5sparse_hdf5_function_slots[i] = slots.functions[i];
  for (std::size_t i = 0; i < kDataCount; ++i) h5sparse_hdf5_data_slots[i] = slots.data[i];
}

std::string bind_locked(const void* address) {
  Dl_info found{};
  if (dladdr(address, &found) == 0 || found.dli_fname == nullptr) return "the address is in no loaded library";
  if (bound.dli_fbase != nullptr) {
    if (found.dli_fbase == bound.dli_fbase) return {};
    return std::string("h5sparse is bound to ") + bound.dli_fname + " already; refusing a second HDF5, " +
           found.dli_fname;
  }
  // RTLD_NOLOAD: the library is mapped already; the reference taken keeps it mapped for us.
  void* library = dlopen(found.dli_fname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) return std::string("dlopen failed: ") + dlerror();
  Slots slots{};
  std::string problem = check_series(library);
  if (problem.empty()) problem = look_up(library, slots);
  if (!problem.empty()) {
    dlclose(library);
    return std::string(found.dli_fname) + ": " + problem;
  }
  install(slots);
  bound = found;
  return {};
}

std::string directory_of(const std::string& path) { return path.substr(0, path.find_last_of('/') + 1); }

// A loaded "libhdf5*_hl*" beside `library` (h5py.libs/libhdf5_hl-<hash>.so.N beside
// libhdf5-<hash>.so.N; Debian's libhdf5_serial_hl.so.N beside libhdf5_serial.so.N).
std::string high_level_library_beside(const std::string& library) {
  struct Search {
    std::string directory, found;
  } search{directory_of(library), {}};
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        const std::string path = info->dlpi_name ? info->dlpi_name : "";
        const std::string name = path.substr(path.find_last_of('/') + 1);
        if (directory_of(path) == s->directory && name.rfind("libhdf5", 0) == 0 &&
            name.find("_hl") != std::string::npos)
          s->found = path;
        return s->found.empty() ? 0 : 1;
      },
      &search);
  return search.found;
}

std::string bind_high_level_locked() {
  if (bound.dli_fbase == nullptr) return "h5sparse is bound to no HDF5 library yet";
  if (high_level_bound) return {};
  const std::string path = high_level_library_beside(bound.dli_fname);
  if (path.empty()) return std::string("no high-level HDF5 library is loaded beside ") + bound.dli_fname;
  void* library = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (library == nullptr) return std::string("dlopen failed: ") + dlerror();
  void* found[kFunctionCount] = {};
  for (std::size_t i = kLibraryFunctionCount; i < kFunctionCount; ++i)
    if ((found[i] = dlsym(library, kFunctionNames[i])) == nullptr)
      return path + ": it has no function " + kFunctionNames[i];
  for (std::size_t i = kLibraryFunctionCount; i < kFunctionCount; ++i) h5sparse_hdf5_function_slots[i] = found[i];
  high_level_bound = true;
  return {};
}

}  // namespace

std::string bind_high_level() noexcept {
  try {
    std::lock_guard<std::mutex> lock(binding_mutex);
    return bind_high_level_locked();
  } catch (...) {
    return "out of memory while binding to HDF5";
  }
}

std::string bind_to_library_at(const void* address) noexcept {
  try {
    std::lock_guard<std::mutex> lock(binding_mutex);
    return bind_locked(address);
  } catch (...) {
    return "out of memory while binding to HDF5";
  }
}

bool bind_plugin(const void* caller, const char* plugin) noexcept {
  const std::string problem = bind_to_library_at(caller);
  if (problem.empty()) return true;
  static std::once_flag reported;
  std::call_once(reported, [&] { std::fprintf(stderr, "h5sparse: the %s does not load: %s\n", plugin, problem.c_str()); });
  return false;
}

}  // namespace h5sparse::hdf5_binding

extern "C" {

void* h5sparse_hdf5_data_slots[h5sparse::hdf5_binding::kDataSlots] = {};

const char* h5sparse_bind_hdf5(const void* address) {
  static thread_local std::string message;
  message = h5sparse::hdf5_binding::bind_to_library_at(address);
  return message.empty() ? nullptr : message.c_str();
}

const char* h5sparse_bind_hdf5_high_level() {
  static thread_local std::string message;
  message = h5sparse::hdf5_binding::bind_high_level();
  return message.empty() ? nullptr : message.c_str();
}
}
