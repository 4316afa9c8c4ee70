// Names of the stable error codes, for messages on the HDF5 error stack.
#include "h5sparse/error.hpp"

namespace h5sparse {

const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid argument";
    case ErrorCode::corrupt_data: return "corrupt data";
    case ErrorCode::buffer_too_small: return "buffer too small";
    case ErrorCode::codec_failure: return "codec failure";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::out_of_memory: return "out of memory";
    case ErrorCode::hdf5_call: return "HDF5 call failed";
    case ErrorCode::mpi_failure: return "MPI failure";
    case ErrorCode::internal_error: return "internal error";
  }
  return "unknown error";
}

}  // namespace h5sparse
