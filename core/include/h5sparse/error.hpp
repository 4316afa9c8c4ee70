// The project's one exception type. The core throws it; every C entry point (filter callback,
// VOL callback) catches it and turns it into an HDF5 error record of the project's own class.
#pragma once

#include <stdexcept>
#include <string>

namespace h5sparse {

/// Stable error codes: values never change meaning once shipped.
enum class ErrorCode : int {
  invalid_argument = 1,   ///< a caller passed an option or size that makes no sense
  corrupt_data = 2,       ///< a stored buffer failed validation (header, size, checksum)
  buffer_too_small = 3,   ///< output did not fit in the capacity given
  codec_failure = 4,      ///< a compression library reported an error
  unsupported = 5,        ///< valid input that this build does not handle
  out_of_memory = 6,
};

/// Human-readable name of an error code ("corrupt data", ...).
const char* error_code_name(ErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace h5sparse

/// Throws h5sparse::Error(code, message) when the condition holds. A macro, so that the
/// message (often built with std::to_string) is only made on failure: the checks sit in
/// per-element decode loops.
#define H5SPARSE_FAIL_IF(condition, code, message)        \
  do {                                                     \
    if (condition) throw ::h5sparse::Error((code), (message)); \
  } while (0)
