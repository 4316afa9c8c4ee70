// H5Dset_extent on a sparse dataset (docs/DESIGN.md, "Extent changes"): HDF5 changes the extent
// of the native dataset below, and the engine's ExtentUpdate keeps the defined set equal to the
// model around that call (core's engine/extent_update.hpp).
#include <H5VLconnector_passthru.h>

#include <algorithm>

#include "error_stack.hpp"
#include "h5sparse/engine/extent_update.hpp"
#include "h5sparse/error.hpp"
#include "native_dataset.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {

using hdf5::throw_if_negative;

void SparseDataset::set_extent(const hsize_t* size, hid_t dxpl) {
  const SparseChange extent_change;
  hdf5::check_writable(under_, under_vol_id_, dxpl);
  const std::vector<std::uint64_t> old_dims = extent(dxpl);
  const std::vector<std::uint64_t> new_dims(size, size + old_dims.size());
  const bool to_zero = std::any_of(new_dims.begin(), new_dims.end(), [](std::uint64_t n) { return n == 0; }) &&
                       std::none_of(old_dims.begin(), old_dims.end(), [](std::uint64_t n) { return n == 0; });
  H5SPARSE_FAIL_IF(to_zero && hdf5::chunk_index_type(under_, under_vol_id_, dxpl) == H5D_CHUNK_IDX_SINGLE,
                   ErrorCode::unsupported,
                   "refusing to shrink a dimension to 0 on a dataset with a single-chunk index: HDF5 1.14.5 "
                   "frees the chunk but leaves its address in the file, which it then cannot read (dense "
                   "datasets too); shrink to 1 instead, or use a chunk index of another kind");
  hdf5::NativeChunkStore chunks = store(dxpl);
  ExtentUpdate update(engine_, chunks, old_dims, new_dims);

  // HDF5 checks that the pipeline can encode before it changes the extent, but only among the
  // filters loaded so far: in a process that has not run the filter yet, it would fail with
  // "required filter 45100 is not registered". H5Zfilter_avail loads the plugin.
  throw_if_negative(H5Zfilter_avail(kFilterStructuredChunk), "cannot load the structured-chunk filter plugin");
  H5VL_dataset_specific_args_t args{};
  args.op_type = H5VL_DATASET_SET_EXTENT;
  args.args.set_extent.size = size;
  const herr_t rc = H5VLdataset_specific(under_, under_vol_id_, &args, dxpl, nullptr);
  // HDF5 re-encoded the straddling chunks in its cache (perhaps also when it failed); the direct
  // writes of update.after evict those copies before they reach the file.
  if (rc >= 0) return update.after(true);
  // Keep HDF5's report of why it failed; a failure to restore is the lesser news.
  hdf5::preserving_error_stack([&]() noexcept {
    try {
      update.after(extent(dxpl) == new_dims);
    } catch (...) {
    }
  });
  throw_if_negative(rc, "cannot change the dataset's extent");
}

}  // namespace h5sparse::vol
