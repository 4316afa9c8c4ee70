// HDF5 filter plugin for structured chunks, ID 45100 (structured_chunk_class.cpp). It makes sparse datasets readable and
// writable by any HDF5 client that has only HDF5_PLUGIN_PATH:
//  - decode: a structured chunk becomes the dense chunk, undefined elements = fill value;
//  - encode: a dense chunk becomes a structured chunk (every element defined, or, with the
//    fill-is-undefined option, every element that differs from the fill value). A chunk made
//    only of fill values (HDF5 writes those when it allocates chunks early) becomes empty.
// set_local completes the user's request form of cd_values with the dataset's geometry and
// fill value (docs/FORMAT.md, "Filter parameters").
#include <H5PLextern.h>

#include "plugin_entry.hpp"
#include "structured_chunk_class.hpp"

H5SPARSE_PLUGIN_ENTRY(structured, H5PL_TYPE_FILTER, "structured-chunk filter",
                      h5sparse::hdf5::structured_chunk_class())
