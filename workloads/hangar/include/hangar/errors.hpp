// Errors of the sample store: HDF5 failures carry HDF5's error stack as text, so a caller (or
// the example program's stderr) shows exactly what HDF5 and the h5sparse plugins reported.
#pragma once

#include <hdf5.h>

#include <stdexcept>
#include <string>

namespace hangar {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The sample read back does not hash to the record's digest: data in != data out.
class DigestMismatch : public StoreError {
 public:
  using StoreError::StoreError;
};

/// HDF5's current error stack as text, one record per line, outermost first.
std::string hdf5_error_stack_text();

/// Throws StoreError("<what>", then HDF5's error stack) when an HDF5 call returned < 0.
long long hdf5_check(long long result, const std::string& what);

}  // namespace hangar
