// HDF5 filter identifiers the project writes or reads (plain ints: no HDF5 headers here).
#pragma once

namespace h5sparse {

constexpr int kFilterDeflate = 1;    // H5Z_FILTER_DEFLATE
constexpr int kFilterShuffle = 2;    // H5Z_FILTER_SHUFFLE
constexpr int kFilterLzf = 32000;    // registered to h5py
constexpr int kFilterBlosc = 32001;  // registered to PyTables (hdf5-blosc)

}  // namespace h5sparse
