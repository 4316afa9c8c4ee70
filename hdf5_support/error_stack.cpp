// The "h5sparse" HDF5 error class and its messages, registered lazily on first use and
// re-registered if HDF5 was closed and reopened in between (H5close frees registered classes).
#include "error_stack.hpp"

#include <mutex>

namespace h5sparse::hdf5 {
namespace {

struct ErrorIds {
  hid_t error_class = H5I_INVALID_HID;
  hid_t major[4] = {H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID, H5I_INVALID_HID};
  hid_t minor[kErrorCodeCount + 1] = {};
};

std::mutex ids_mutex;
ErrorIds ids;

const ErrorIds& error_ids() {
  std::lock_guard<std::mutex> lock(ids_mutex);
  if (ids.error_class >= 0 && H5Iis_valid(ids.error_class) > 0) return ids;
  ids = ErrorIds{};
  ids.error_class = H5Eregister_class("h5sparse", "h5sparse", H5SPARSE_VERSION_STRING);
  if (ids.error_class < 0) return ids;
  static const char* const kMajors[] = {"Filter plugin", "Sparse VOL connector", "Sparse client library",
                                        "Command-line tool"};
  for (int i = 0; i < 4; ++i) ids.major[i] = H5Ecreate_msg(ids.error_class, H5E_MAJOR, kMajors[i]);
  for (int code = 1; code <= kErrorCodeCount; ++code)
    ids.minor[code] = H5Ecreate_msg(ids.error_class, H5E_MINOR, error_code_name(ErrorCode(code)));
  return ids;
}

}  // namespace

void push_error(Origin origin, ErrorCode code, const char* function, const std::string& message, const char* file,
                int line) noexcept {
  try {
    // Looking the class up calls HDF5 API functions, which clear the stack: keep the records
    // already on it (HDF5's, or ours from the connector below a client call) under ours.
    const ErrorIds* ids_found = nullptr;
    preserving_error_stack([&] { ids_found = &error_ids(); });
    const ErrorIds& e = *ids_found;
    if (e.error_class < 0) return;
    const int c = int(code) >= 1 && int(code) <= kErrorCodeCount ? int(code) : int(ErrorCode::internal_error);
    H5Epush2(H5E_DEFAULT, file ? file : "h5sparse", function, unsigned(line), e.error_class, e.major[int(origin)],
             e.minor[c], "%s", message.c_str());
  } catch (...) {
    // Reporting must never throw; losing the record is the lesser evil.
  }
}

void report_current_exception(Origin origin, const char* function) noexcept {
  try {
    throw;
  } catch (const Error& e) {
    push_error(origin, e.code(), function, e.what(), e.file(), e.line());
  } catch (const std::bad_alloc&) {
    push_error(origin, ErrorCode::out_of_memory, function, "out of memory");
  } catch (const std::exception& e) {
    push_error(origin, ErrorCode::internal_error, function, e.what());
  } catch (...) {
    push_error(origin, ErrorCode::internal_error, function, "unknown exception");
  }
}

}  // namespace h5sparse::hdf5

#include "handle.hpp"

namespace h5sparse::hdf5 {

Handle checked(hid_t id, const char* what) {
  throw_if_negative(id, what);
  return Handle(id);
}

}  // namespace h5sparse::hdf5
