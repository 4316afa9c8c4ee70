// An HDF5 dataspace selection as the engine's boxes (engine/coordinates.hpp), for the region
// of a coordinate read.
#pragma once

#include <hdf5.h>

#include <vector>

#include "h5sparse/engine/coordinates.hpp"

namespace h5sparse::hdf5 {

/// The selected elements as boxes: "all" is the extent, a hyperslab its blocks, points one box
/// each, "none" no box. Throws Error(hdf5_call) when HDF5 cannot describe the selection.
std::vector<Box> selection_boxes(hid_t space);

}  // namespace h5sparse::hdf5
