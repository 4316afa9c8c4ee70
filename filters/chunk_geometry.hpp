// What set_local callbacks need to know about the dataset being created.
#pragma once

#include <hdf5.h>

#include <cstddef>

namespace h5sparse::hdf5 {

struct ChunkGeometry {
  std::size_t type_size;       ///< size of one element of the file datatype
  std::size_t base_type_size;  ///< element size of an array type's base, else type_size
  std::size_t chunk_bytes;     ///< type_size * product of the chunk dimensions
};

/// Reads the geometry from the DCPL and datatype; throws h5sparse::Error on failure.
ChunkGeometry chunk_geometry(hid_t dcpl, hid_t type);

/// Reads the cd_values a filter currently has on a DCPL (up to `max_values`).
std::size_t current_cd_values(hid_t dcpl, int filter_id, unsigned* flags, unsigned* values,
                              std::size_t max_values);

}  // namespace h5sparse::hdf5
