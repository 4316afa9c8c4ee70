// What every plugin's H5PLget_plugin_info does first.
#pragma once

namespace h5sparse::hdf5 {

/// Refuses a second libhdf5 in the process (library_guard.hpp) and has HDF5's close release
/// the memory our threads keep between calls (core's kept_memory.hpp; registered again after
/// each close, as HDF5 forgets its close callbacks). False: the plugin must not load.
bool plugin_entry(const char* plugin) noexcept;

}  // namespace h5sparse::hdf5
