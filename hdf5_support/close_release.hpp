// HDF5's close releases the memory our threads keep between calls (core's kept_memory.hpp).
#pragma once

namespace h5sparse::hdf5 {

/// Registers the release with H5atclose once per HDF5 lifetime (HDF5 forgets its close
/// callbacks when it closes). Called from callbacks that run at dataset creation and file
/// open (the filters' set_local, the connector's file create/open), never while HDF5 loads a
/// plugin or runs a filter: an API call made there leaves HDF5's error stack handling broken
/// for the rest of the process (seen in 1.14.5: later failures lose their innermost records).
void release_kept_memory_at_close() noexcept;

}  // namespace h5sparse::hdf5
