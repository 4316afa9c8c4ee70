// One HDF5 library per process. Debian ships a serial and a parallel HDF5 under different
// sonames (libhdf5_serial.so, libhdf5_openmpi.so): a plugin built against one and loaded by a
// program using the other (h5py-mpi with the serial plugin directory, or the reverse) would
// call into a second, uninitialised HDF5 whose identifiers mean nothing to the first. Every
// plugin entry point asks this guard first and refuses to load in that case.
#pragma once

namespace h5sparse::hdf5 {

/// True when the only HDF5 C library mapped into the process is the one this plugin links.
/// Otherwise prints, once, which libraries clash and which plugin flavour to use instead.
bool single_hdf5_library(const char* plugin) noexcept;

}  // namespace h5sparse::hdf5
