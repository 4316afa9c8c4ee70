// The project's own dataset-transfer properties: temporary properties a caller inserts into a
// DXPL (H5Pinsert2) and the connector reads from the DXPL its callbacks get.
#pragma once

#include <hdf5.h>

namespace h5sparse::hdf5 {

/// How H5Dwrite_chunk checks a sparse dataset's chunk before storing it
/// (h5sparse_pset_chunk_write_check).
enum class ChunkWriteCheck : unsigned {
  decode = 0,     ///< every section decoded, as a reader decodes it (the default)
  checksums = 1,  ///< the header and the stored bytes' checksums: chunks h5sparse_encode_coo made
};

void set_chunk_write_check(hid_t dxpl, ChunkWriteCheck check);
/// The DXPL's setting; decode when it has none. Throws on HDF5 failures.
ChunkWriteCheck chunk_write_check(hid_t dxpl);

}  // namespace h5sparse::hdf5
