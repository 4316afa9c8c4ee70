// The caller's side of a sparse H5Dread the connector serves itself: whether the transfer asks
// for a data transform, whether the memory selection is one run of bytes, and moving the
// selected elements from a packed array in selection order into the caller's buffer.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>

namespace h5sparse::vol {

/// Whether the transfer property list sets a data transform (H5Pset_data_transform).
bool has_data_transform(hid_t dxpl);

/// The byte offset of the memory selection when it is one contiguous run of `count` elements
/// (H5S_ALL, a whole array, a full row block), or -1.
std::int64_t contiguous_offset(hid_t space, std::size_t element_size, std::uint64_t count);

/// Copies `source` (the selection's elements in order) to their places in the memory selection.
void scatter_to_memory(hid_t space, const std::uint8_t* source, std::size_t element_size, std::uint8_t* buf);

}  // namespace h5sparse::vol
