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

/// Pushes a record of our class onto the default error stack. Never throws.
void push_error(Origin origin, ErrorCode code, const char* function, const std::string& message) noexcept;

/// Calls `body()`; on an exception pushes an error record (naming `function`) and returns
/// `on_error`. Order: our Error (its own code), bad_alloc, any std::exception, anything else.
template <typename Result, typename Body>
Result call_guarded(Origin origin, const char* function, Result on_error, Body&& body) noexcept {
  try {
    return body();
  } catch (const Error& e) {
    push_error(origin, e.code(), function, e.what());
  } catch (const std::bad_alloc&) {
    push_error(origin, ErrorCode::out_of_memory, function, "out of memory");
  } catch (const std::exception& e) {
    push_error(origin, ErrorCode::codec_failure, function, e.what());
  } catch (...) {
    push_error(origin, ErrorCode::codec_failure, function, "unknown exception");
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
/// so call_guarded adds context without repeating HDF5's message.
void throw_if_negative(long long hdf5_result, const char* what);

}  // namespace h5sparse::hdf5
