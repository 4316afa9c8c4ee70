// The two functions HDF5 looks for in a plugin file (H5PLextern.h), written once for every plugin.
//
// A build linking HDF5 defines them in the plugin's own file, behind the guard that refuses a
// second HDF5 library in the process (library_guard.hpp). A build binding HDF5 at run time (the
// wheel, hdf5_binding/binding.hpp) keeps all its C++ in libh5sparse, so the plugin gets a named
// entry there instead, h5sparse_plugin_info_<ident>(address), which binds to the HDF5 holding
// the address; the plugin file is then hdf5_binding/plugin_shim.c, which passes its caller's.
#pragma once

#include <H5PLextern.h>

#if H5SPARSE_HDF5_AT_RUN_TIME
#include "binding.hpp"
#define H5SPARSE_PLUGIN_ENTRY(ident, type, description, info)                                      \
  extern "C" __attribute__((visibility("default"))) const void* h5sparse_plugin_info_##ident(    \
      const void* address_in_hdf5) {                                                              \
    return h5sparse::hdf5_binding::bind_plugin(address_in_hdf5, description) ? (info) : nullptr;  \
  }
#else
#include "library_guard.hpp"
#define H5SPARSE_PLUGIN_ENTRY(ident, type, description, info)                                      \
  extern "C" {                                                                                    \
  H5PL_type_t H5PLget_plugin_type(void) { return type; }                                          \
  const void* H5PLget_plugin_info(void) {                                                          \
    return h5sparse::hdf5::single_hdf5_library(description) ? (info) : nullptr;                   \
  }                                                                                               \
  }
#endif
