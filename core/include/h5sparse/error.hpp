// The project's one exception type. The core throws it; every C entry point (filter callback,
// VOL callback) catches it and turns it into an HDF5 error record of the project's own class.
#pragma once

#include <stdexcept>
#include <string>

namespace h5sparse {

/// Stable error codes: values never change meaning once shipped.
enum class ErrorCode : int {
  invalid_argument = 1,   ///< a caller passed an option, selection or size that makes no sense
  corrupt_data = 2,       ///< a stored buffer failed validation (header, size, checksum)
  buffer_too_small = 3,   ///< output did not fit in the capacity given
  codec_failure = 4,      ///< a compression library reported an error
  unsupported = 5,        ///< valid input that this build does not handle
  out_of_memory = 6,
  hdf5_call = 7,          ///< an HDF5 call failed (HDF5's own records are below ours)
  mpi_failure = 8,        ///< an MPI call failed
  internal_error = 9,     ///< anything else: a bug of ours
};
constexpr int kErrorCodeCount = 9;

/// Human-readable name of an error code ("corrupt data", ...).
const char* error_code_name(ErrorCode code) noexcept;

/// Carries its code and where it was thrown: the default arguments take the throwing
/// expression's file and line (GCC and Clang builtins; C++17 has no std::source_location).
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message, const char* file = __builtin_FILE(),
        int line = __builtin_LINE())
      : std::runtime_error(message), code_(code), file_(file), line_(line) {}
  ErrorCode code() const noexcept { return code_; }
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

 private:
  ErrorCode code_;
  const char* file_;  // a string literal
  int line_;
};

}  // namespace h5sparse

/// Throws h5sparse::Error(code, message) when the condition holds. A macro, so that the
/// message (often built with std::to_string) is only made on failure: the checks sit in
/// per-element decode loops.
#define H5SPARSE_FAIL_IF(condition, code, message)        \
  do {                                                     \
    if (condition) throw ::h5sparse::Error((code), (message), __FILE__, __LINE__); \
  } while (0)
