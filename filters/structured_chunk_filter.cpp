// HDF5 filter plugin for structured chunks, ID 45100 (structured_chunk_class.cpp). It makes sparse datasets readable and
// writable by any HDF5 client that has only HDF5_PLUGIN_PATH:
//  - decode: a structured chunk becomes the dense chunk, undefined elements = fill value;
//  - encode: a dense chunk becomes a structured chunk (every element defined, or, with the
//    fill-is-undefined option, every element that differs from the fill value). A chunk made
//    only of fill values (HDF5 writes those when it allocates chunks early) becomes empty.
// set_local completes the user's request form of cd_values with the dataset's geometry and
// fill value (docs/FORMAT.md, "Filter parameters").
#include <H5PLextern.h>

#include "library_guard.hpp"
#include "structured_chunk_class.hpp"

extern "C" {
H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }
const void* H5PLget_plugin_info(void) {
  return h5sparse::hdf5::single_hdf5_library("structured-chunk filter") ? h5sparse::hdf5::structured_chunk_class()
                                                                         : nullptr;
}
}
