// Reading the structured-chunk filter's parameters from a DCPL without a failing probe: HDF5
// keeps the records of a failed H5Pget_filter_by_id2 on the error stack (H5E_BEGIN_TRY only
// silences printing), where they would later be reported instead of the real error.
#pragma once

#include <hdf5.h>

#include <optional>
#include <vector>

namespace h5sparse::hdf5 {

/// The cd_values of filter `filter_id` in the DCPL's pipeline, or nullopt when it has none.
/// At most 256 values (HDF5's limit for this query). Throws on HDF5 failures.
std::optional<std::vector<unsigned>> filter_values(hid_t dcpl, int filter_id);

/// The structured-chunk filter's cd_values of a sparse dataset's DCPL (chunked layout, the
/// filter's complete form), or nullopt for any other dataset (also a dense one whose optional
/// filter HDF5 left in its request form).
std::optional<std::vector<unsigned>> sparse_dataset_values(hid_t dcpl);

}  // namespace h5sparse::hdf5
