// HDF5 error reporting of the project's own error class ("h5sparse"), shared by the filter
// plugins and the connector. Every C entry point into our code is wrapped by call_guarded(),
// which catches whatever the core throws and pushes one readable record onto the error stack,
// so no C++ exception ever unwinds through HDF5.
#pragma once

#include <hdf5.h>

#include <new>
#include <string>

#include "h5sparse/error.hpp"

namespace h5sparse::hdf5 {

/// Which part of the project reports: becomes the record's major message.
enum class Origin { filter, connector, client, tool };

/// Pushes a record of our class onto the default error stack, with the file and line where
/// the failure was found (`file` null: "h5sparse", line 0). Never throws.
void push_error(Origin origin, ErrorCode code, const char* function, const std::string& message,
                const char* file = nullptr, int line = 0) noexcept;

/// Reports the exception being handled (call only inside a catch block): pushes one record
/// naming `function`. Order: our Error (its own code), bad_alloc, any std::exception, anything
/// else. Out of line and cold, so the guarded callers stay small.
[[gnu::cold, gnu::noinline]] void report_current_exception(Origin origin, const char* function) noexcept;

/// Calls `body()`; on an exception pushes an error record (naming `function`) and returns
/// `on_error`. Inlined into each callback: the try costs nothing until something throws, and
/// one call site per callback (not one function per callback and lambda) keeps the forwarding
/// code few cache lines long, which is what a passthrough's overhead is made of.
template <typename Result, typename Body>
[[gnu::always_inline]] inline Result call_guarded(Origin origin, const char* function, Result on_error,
                                                  Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    report_current_exception(origin, function);
  }
  return on_error;
}

/// Runs cleanup code (dropping references, freeing info) without letting it disturb the
/// error stack the caller is about to report. Saving the stack costs an ID registration, so it
/// is only done when there is something on it.
template <typename Cleanup>
void preserving_error_stack(Cleanup&& cleanup) noexcept {
  if (H5Eget_num(H5E_DEFAULT) <= 0) {
    cleanup();
    return;
  }
  const hid_t saved = H5Eget_current_stack();
  cleanup();
  if (saved >= 0) H5Eset_current_stack(saved);
}

/// Thrown inside a guarded body when an HDF5 call failed and already pushed its own record,
/// so call_guarded adds context without repeating HDF5's message: Error(hdf5_call) located at
/// the caller.
inline void throw_if_negative(long long hdf5_result, const char* what, const char* file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  if (hdf5_result < 0) throw Error(ErrorCode::hdf5_call, what, file, line);
}
inline void throw_if_negative(long long hdf5_result, const std::string& what, const char* file = __builtin_FILE(),
                              int line = __builtin_LINE()) {
  if (hdf5_result < 0) throw Error(ErrorCode::hdf5_call, what, file, line);
}

}  // namespace h5sparse::hdf5
