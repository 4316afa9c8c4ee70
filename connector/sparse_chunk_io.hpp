// Chunk operations on sparse datasets: the RFC's direct structured-chunk I/O (our dataset
// operations "h5sparse.*struct_chunk*") and the native chunk operations (H5Dread_chunk,
// H5Dwrite_chunk, H5Dget_chunk_info, H5Dchunk_iter, ...) with their meaning for a sparse
// dataset. The mapping is tabled in README.md ("Chunk operations") and argued in
// docs/DESIGN.md.
#pragma once

#include <H5VLconnector.h>

#include <optional>

namespace h5sparse::vol {

struct Object;

/// Serves a dataset optional operation about chunks: one of ours (refused with a clear error
/// on a dense dataset), or a native one on a sparse dataset, after checking what it would
/// store. Returns nothing when the caller should forward `args` to the connector below
/// (every other operation, and checked native ones, whose meaning is the native one).
std::optional<herr_t> serve_chunk_operation(Object* dataset, H5VL_optional_args_t* args, hid_t dxpl);

}  // namespace h5sparse::vol
