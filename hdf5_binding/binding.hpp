// The run-time HDF5 binding: how a build that links no libhdf5 (the Python wheel) calls the HDF5
// library of the program that loaded it, h5py's private copy inside its wheel among others.
//
// Such a build compiles every source unchanged with hdf5_bound.h included first. Each HDF5
// function it calls is an entry point of ours under HDF5's name that jumps through a slot; each
// data global (H5T_NATIVE_INT_g, H5E_ERR_CLS_g, ...) is read through its address, as HDF5 sets
// them in H5open. Binding fills the slots with dlsym on one HDF5 library: the one that holds a
// given address. Plugins pass the return address of H5PLget_plugin_info (their caller: the HDF5
// loading them, which stays right with several HDF5s in one process); Python passes the address
// of H5open as h5py's extension modules resolve it. A process binds once: a second, different
// HDF5 is refused, as the linked build refuses one (library_guard.hpp).
//
// The list of names is hdf5_names.txt; generate.py makes the entry points and the header from it.
// A build that links HDF5 (Debian packages, plain CMake) has none of this: direct calls.
#pragma once

#include <string>

namespace h5sparse::hdf5_binding {

/// Binds every HDF5 name of this build to the HDF5 library mapped at `address` (any code or
/// data address inside it). Empty on success or when already bound to that library; otherwise
/// what went wrong (not an HDF5 library, a name missing, another series, another HDF5 bound).
std::string bind_to_library_at(const void* address) noexcept;

/// A plugin's entry: binds to the HDF5 holding `caller` (the return address into the HDF5 that
/// is loading the plugin). On failure says why on stderr, once (HDF5 gives a plugin that cannot
/// load no other channel), and returns false.
bool bind_plugin(const void* caller, const char* plugin) noexcept;

/// Binds the functions of HDF5's high-level library (h5sparse-tool's), from the one loaded
/// beside the bound library. Empty on success, else what went wrong.
std::string bind_high_level() noexcept;

}  // namespace h5sparse::hdf5_binding

extern "C" {
/// C entry for Python: binds to the HDF5 library holding `address`; nullptr on success, else a
/// message that stays valid until the next call.
__attribute__((visibility("default"))) const char* h5sparse_bind_hdf5(const void* address);
/// C entry for Python: bind_high_level(); nullptr on success, else a message.
__attribute__((visibility("default"))) const char* h5sparse_bind_hdf5_high_level();
}
