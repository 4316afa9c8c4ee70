// H5Dset_extent on a sparse dataset (docs/DESIGN.md, "Extent changes"). HDF5 changes the
// extent of the native dataset below; around that call the connector keeps the defined set
// equal to the model, in which only elements inside both the old and the new extent (the kept
// box) keep their meaning:
//  - a shrink makes HDF5 read each stored chunk straddling the new extent through the filter,
//    overwrite the cut part with the fill value and encode the chunk again, which would define
//    every element (or drop defined elements equal to the fill value). Those chunks are read
//    before the call and written back after it with the cut part erased; the direct write
//    evicts HDF5's re-encoded copy from the chunk cache before it reaches the file;
//  - a grow leaves stored chunks alone, so whatever a chunk holds outside the old extent
//    (only writers without the connector put anything there) would become visible: it is
//    erased before the call.
#include <H5VLconnector_passthru.h>

#include <algorithm>

#include "error_stack.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/extent_change.hpp"
#include "native_dataset.hpp"
#include "sparse_change.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::throw_if_negative;
using Origins = std::vector<std::vector<std::uint64_t>>;

// Above this many candidate chunks, one pass over the chunk index is cheaper than a lookup
// per candidate.
constexpr std::uint64_t kLookupLimit = 4096;

struct Saved {
  std::vector<std::uint64_t> origin;
  StructuredChunk chunk;
};

}  // namespace

void SparseDataset::set_extent(const hsize_t* size, hid_t dxpl) {
  const SparseChange extent_change;
  check_writable(under_, under_vol_id_, dxpl);
  const std::vector<std::uint64_t> old_dims = extent(dxpl);
  const std::vector<std::uint64_t> new_dims(size, size + old_dims.size());
  const ExtentChange change(old_dims, new_dims, params_.layout.dims);
  const std::size_t es = params_.layout.element_size;
  const bool to_zero = std::any_of(new_dims.begin(), new_dims.end(), [](std::uint64_t n) { return n == 0; }) &&
                       std::none_of(old_dims.begin(), old_dims.end(), [](std::uint64_t n) { return n == 0; });
  H5SPARSE_FAIL_IF(to_zero && chunk_index_type(under_, under_vol_id_, dxpl) == H5D_CHUNK_IDX_SINGLE,
                   ErrorCode::unsupported,
                   "refusing to shrink a dimension to 0 on a dataset with a single-chunk index: HDF5 1.14.5 "
                   "frees the chunk but leaves its address in the file, which it then cannot read (dense "
                   "datasets too); shrink to 1 instead, or use a chunk index of another kind");

  Origins candidates;
  if (change.boundary_bound() <= kLookupLimit) {
    change.for_each_boundary_chunk([&](const std::vector<std::uint64_t>& o) { candidates.push_back(o); });
  } else {
    for (const IndexEntry& e : stored_chunk_index(under_, under_vol_id_, old_dims.size(), dxpl))
      if (change.is_boundary({e.origin.begin(), e.origin.end()})) candidates.emplace_back(e.origin.begin(), e.origin.end());
  }
  // Before HDF5 moves the extent: erase what a grow exposes, keep what a shrink rewrites.
  std::vector<Saved> rewritten;
  for (const std::vector<std::uint64_t>& origin : candidates) {
    StructuredChunk chunk = read_chunk(origin, dxpl);
    if (chunk.defined.none()) continue;  // HDF5 encodes an all-fill chunk as empty again
    if (change.rewritten_by_hdf5(origin)) {
      rewritten.push_back({origin, std::move(chunk)});
      continue;
    }
    ChunkSelection exposed = change.outside_kept(origin);
    const std::uint64_t before = chunk.defined.defined_count();
    h5sparse::erase(chunk, exposed, es);
    if (chunk.defined.defined_count() != before) write_chunk(origin, chunk, dxpl);
  }

  // HDF5 checks that the pipeline can encode before it changes the extent, but only among the
  // filters loaded so far: in a process that has not run the filter yet, it would fail with
  // "required filter 45100 is not registered". H5Zfilter_avail loads the plugin.
  throw_if_negative(H5Zfilter_avail(kFilterStructuredChunk), "cannot load the structured-chunk filter plugin");
  H5VL_dataset_specific_args_t args{};
  args.op_type = H5VL_DATASET_SET_EXTENT;
  args.args.set_extent.size = size;
  const herr_t rc = H5VLdataset_specific(under_, under_vol_id_, &args, dxpl, nullptr);

  // HDF5 re-encoded the straddling chunks in its cache (perhaps also when it failed): write
  // back what the extent in force now says they hold.
  auto restore = [&](bool moved) {
    for (Saved& s : rewritten) {
      if (moved) h5sparse::erase(s.chunk, change.outside_kept(s.origin), es);
      write_chunk(s.origin, s.chunk, dxpl);
    }
  };
  if (rc >= 0) return restore(true);
  // Keep HDF5's report of why it failed; a failure to restore is the lesser news.
  hdf5::preserving_error_stack([&]() noexcept {
    try {
      restore(extent(dxpl) == new_dims);
    } catch (...) {
    }
  });
  throw_if_negative(rc, "cannot change the dataset's extent");
}

}  // namespace h5sparse::vol
