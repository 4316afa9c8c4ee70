// The structured-chunk filter class (ID 45100): its plugin exports it, and the parallel
// connector registers its own copy for the length of its collective writes so that
// pre-encoded chunks reach HDF5's filtered write (pre_encoded_chunks.hpp).
#pragma once

#include <hdf5.h>

namespace h5sparse::hdf5 {

const H5Z_class2_t* structured_chunk_class();

}  // namespace h5sparse::hdf5
