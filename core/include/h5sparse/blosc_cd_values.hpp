// The cd_values of HDF5 filter 32001 (hdf5-blosc's layout), read into codec parameters: the
// filter plugin's reader, beside the codec whose parameter rules it applies.
#pragma once

#include <cstddef>

#include "h5sparse/codecs.hpp"

namespace h5sparse {

/// cd_values as hdf5-blosc lays them out:
///   [0] filter revision   [1] blosc format   [2] typesize   [3] chunk bytes
///   [4] clevel 0-9 (default 5)   [5] shuffle 0 none, 1 byte, 2 bit (default 1)
///   [6] compressor 0 blosclz, 1 lz4, 2 lz4hc, 3 snappy, 4 zlib, 5 zstd (default 0)
/// Error(invalid_argument) for fewer than 4 values or values out of range. nthreads is 1.
BloscParams blosc_params_from_cd_values(std::size_t count, const unsigned values[]);

}  // namespace h5sparse
