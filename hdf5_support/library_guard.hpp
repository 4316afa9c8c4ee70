// One HDF5 library per process. Debian ships a serial and a parallel HDF5 under different
// sonames (libhdf5_serial.so, libhdf5_openmpi.so): a plugin built against one and loaded by a
// program using the other (h5py-mpi with the serial plugin directory, or the reverse) would
// call into a second, uninitialised HDF5 whose identifiers mean nothing to the first. Every
// plugin entry point asks this guard first and refuses to load in that case.
#pragma once

#include <H5public.h>

namespace h5sparse::hdf5 {

#ifdef H5_HAVE_PARALLEL
#define H5SPARSE_HDF5_FLAVOUR "parallel"
#else
#define H5SPARSE_HDF5_FLAVOUR "serial"
#endif
#define H5SPARSE_TEXT(x) #x
#define H5SPARSE_VERSION_TEXT(a, b, c) H5SPARSE_TEXT(a) "." H5SPARSE_TEXT(b) "." H5SPARSE_TEXT(c)
/// Which HDF5 the file including this is built for, as text in it: h5plugin-config reads it
/// from a plugin (each plugin's entry file includes this header).
[[gnu::used]] static const char kBuiltFor[] = "h5sparse-built-for: HDF5 " H5SPARSE_VERSION_TEXT(
    H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE) " " H5SPARSE_HDF5_FLAVOUR;

/// True when the only HDF5 C library mapped into the process is the one this plugin links.
/// Otherwise prints, once, which libraries clash and which plugin flavour to use instead.
bool single_hdf5_library(const char* plugin) noexcept;

}  // namespace h5sparse::hdf5
