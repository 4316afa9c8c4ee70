// Sparse dataset operations: HDF5's selections and datatypes in the engine's terms (see
// sparse_dataset.hpp).
#include "sparse_dataset.hpp"

#include <H5VLconnector_passthru.h>

#include <algorithm>

#include "dcpl.hpp"
#include "error_stack.hpp"
#include "h5sparse/chunk_threads.hpp"
#include "h5sparse/engine/extent_update.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/stream_store.hpp"
#include "memory_selection.hpp"
#include "native_dataset.hpp"
#include "object.hpp"
#include "var_values.hpp"
#ifdef H5SPARSE_PARALLEL
#include "parallel_write.hpp"
#endif

namespace h5sparse::vol {

using hdf5::dataset_get;
using hdf5::Handle;
using hdf5::NativeChunkStore;
using hdf5::throw_if_negative;

SparseDataset::SparseDataset(void* under, hid_t under_vol_id, SparseParams params, std::size_t decoded_cache_bytes,
                             Handle file_type)
    : under_(under),
      under_vol_id_(under_vol_id),
      engine_(std::move(params), decoded_cache_bytes),
      file_type_(std::move(file_type)) {}

std::unique_ptr<SparseDataset> SparseDataset::detect(void* under, hid_t under_vol_id, hid_t dxpl) {
  Handle dcpl = dataset_get(under, under_vol_id, H5VL_DATASET_GET_DCPL, dxpl);
  const auto values = hdf5::sparse_dataset_values(dcpl.get());
  if (!values) return nullptr;
  SparseParams params = from_cd_values(values->data(), values->size());
  Handle type = dataset_get(under, under_vol_id, H5VL_DATASET_GET_TYPE, dxpl);
  H5SPARSE_FAIL_IF(H5Tget_size(type.get()) != params.layout.element_size, ErrorCode::corrupt_data,
          "structured-chunk parameters disagree with the dataset's datatype size");
  if (params.is_var()) type = hdf5::true_type_of(params);  // the carrier stands for it
  H5D_fill_time_t fill_time = H5D_FILL_TIME_IFSET;
  throw_if_negative(H5Pget_fill_time(dcpl.get(), &fill_time), "cannot read the fill time");
  const bool mpi_file = hdf5::on_mpi_file(under, under_vol_id);
  H5SPARSE_FAIL_IF(mpi_file && params.is_var(), ErrorCode::unsupported,
                   "variable-length sparse datasets on MPI-IO files are not supported yet");
  // Decoded chunks of partial reads are kept within the budget of the access list's chunk cache
  // (H5Pset_chunk_cache's rdcc_nbytes: HDF5 would spend it on the same chunks, decoded); none
  // on SWMR readers (another process changes the file) and MPI-IO files (other ranks do).
  Handle dapl = dataset_get(under, under_vol_id, H5VL_DATASET_GET_DAPL, dxpl);
  std::size_t slots = 0, cache_bytes = 0;
  double w0 = 0;
  throw_if_negative(H5Pget_chunk_cache(dapl.get(), &slots, &cache_bytes, &w0), "cannot read the chunk cache settings");
  const bool swmr_reader = (hdf5::file_intent(under, under_vol_id, dxpl) & H5F_ACC_SWMR_READ) != 0;
  if (swmr_reader || mpi_file) cache_bytes = 0;
  std::unique_ptr<SparseDataset> dataset(
      new SparseDataset(under, under_vol_id, std::move(params), cache_bytes, std::move(type)));
  dataset->fill_never_ = fill_time == H5D_FILL_TIME_NEVER;
  dataset->mpi_file_ = mpi_file;
  // Reads and writes of it split chunks over the worker pool: threads started now are running
  // by the first one (in a new process that wait was up to a few ms of its first read).
  prestart_shared_workers(chunk_threads());
  return dataset;
}

SparseDataset::Selection SparseDataset::resolve(hid_t file_space, hid_t dxpl) const {
  return hdf5::resolve_selection(dataset_get(under_, under_vol_id_, H5VL_DATASET_GET_SPACE, dxpl), file_space,
                                 params().layout.dims);
}

std::vector<std::uint64_t> SparseDataset::extent(hid_t dxpl) const {
  return hdf5::extent_of(dataset_get(under_, under_vol_id_, H5VL_DATASET_GET_SPACE, dxpl).get());
}

void SparseDataset::write(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, const void* buf) {
  const SparseChange change;
  // An SWMR writer never frees a chunk it replaces, but rewrites one of unchanged size in
  // place: the store changes the size, so the flushed copy stays intact for readers and crashes.
  const bool relocate = hdf5::check_writable(under_, under_vol_id_, dxpl);
#ifdef H5SPARSE_PARALLEL
  if (mpi_file_) return ParallelWrite::write(*this, mem_type, mem_space, file_space, dxpl, buf);
#endif
  const Selection sel = resolve(file_space, dxpl);
  const hid_t mspace = hdf5::memory_space_for(mem_space, sel);
  if (sel.npoints == 0) return;
  H5SPARSE_FAIL_IF(buf == nullptr, ErrorCode::invalid_argument, "no data buffer to write from");
  NativeChunkStore chunks = store(dxpl, relocate);
  if (params().is_var()) return hdf5::write_var_values(engine_, chunks, sel, mem_type, mspace, file_type_.get(), dxpl, buf);
  Bytes storage;
  const std::uint8_t* values = hdf5::values_in_file_type(mem_type, mspace, std::size_t(sel.npoints), file_type_.get(),
                                                         params().fill, dxpl, buf, storage);
  if (H5Sget_select_type(sel.space) == H5S_SEL_POINTS) {  // elements by coordinates: coordinate I/O
    const std::vector<hsize_t> coords = hdf5::point_list(sel.space, std::size_t(sel.npoints), sel.grid.rank());
    return engine_.write_coordinates(chunks, sel.grid, reinterpret_cast<const std::uint64_t*>(coords.data()),
                                     std::size_t(sel.npoints), values);
  }
  engine_.write(chunks, sel.grid, hdf5::selection_pieces(sel.space, sel.grid), values);
}

bool SparseDataset::read(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void* buf) const {
  const bool var = params().is_var();  // read here whatever the memory type: the filter cannot
  if (fill_never_ && !var) return false;
  const htri_t same = H5Tequal(mem_type, file_type_.get());
  throw_if_negative(same, "cannot compare the memory and file datatypes");
  if (!var && (same == 0 || hdf5::has_data_transform(dxpl))) return false;

  const Selection sel = resolve(file_space, dxpl);
  const hid_t mspace = hdf5::memory_space_for(mem_space, sel);
  if (sel.npoints == 0) return true;
  H5SPARSE_FAIL_IF(buf == nullptr, ErrorCode::invalid_argument, "no buffer to read into");
  if (var) {
    NativeChunkStore chunks = store(dxpl);
    return hdf5::read_var_values(engine_, chunks, sel, mem_type, mspace, file_type_.get(), dxpl, buf), true;
  }
  const std::uint64_t n = std::uint64_t(sel.npoints);
  const std::size_t es = params().layout.element_size;
  hdf5::MemoryDestination dest(mspace, es, n, buf);
  const std::uint8_t* fill = params().fill.empty() ? nullptr : params().fill.data();
  // A destination larger than the caches gets streaming stores (stream_store.hpp).
  const ReadTarget target{dest.data(), fill, std::size_t(n) * es >= kStreamingMinBytes, dest.in_place()};
  // Every element in row-major order: each chunk's pieces follow from its position (splitting
  // the selection into pieces and grouping them was a fifth of a full read).
  const bool whole = hdf5::selects_everything(sel.space, sel.grid, n);
  const std::vector<ChunkPiece> pieces =
      whole ? std::vector<ChunkPiece>() : hdf5::selection_pieces(sel.space, sel.grid);
  NativeChunkStore chunks = store(dxpl);
  engine_.read(chunks, ChunkRequest{sel.grid, pieces, whole, n}, target);
  dest.finish();
  return true;
}

hid_t SparseDataset::get_defined(hid_t file_space, hid_t dxpl) {
  const Selection sel = resolve(file_space, dxpl);
  Handle result = hdf5::checked(H5Scopy(sel.full.get()), "cannot create the result dataspace");
  throw_if_negative(H5Sselect_none(result.get()), "cannot clear the result selection");
  NativeChunkStore chunks = store(dxpl);
  const std::vector<std::uint64_t> linear = engine_.defined(chunks, sel.grid, hdf5::stored_pieces(engine_, chunks, sel));
  if (!linear.empty()) hdf5::select_linear_elements(result.get(), sel.grid.dataset_dims(), linear);
  return result.release();
}

hsize_t SparseDataset::vlen_buf_size(hid_t mem_type, hid_t file_space, hid_t dxpl) const {
  NativeChunkStore chunks = store(dxpl);
  return hdf5::var_buffer_size(engine_, chunks, resolve(file_space, dxpl), mem_type);
}

void SparseDataset::diagnose_read(hid_t file_space, hid_t dxpl) const {
  const Selection sel = resolve(file_space, dxpl);
  NativeChunkStore chunks = store(dxpl);
  engine_.check_chunks(chunks, sel.grid, hdf5::stored_pieces(engine_, chunks, sel));
}

void SparseDataset::erase(hid_t file_space, hid_t dxpl) {
  const SparseChange change;
  const bool relocate = hdf5::check_writable(under_, under_vol_id_, dxpl);  // see write()
#ifdef H5SPARSE_PARALLEL
  if (mpi_file_) return ParallelWrite::erase(*this, file_space, dxpl);
#endif
  const Selection sel = resolve(file_space, dxpl);
  NativeChunkStore chunks = store(dxpl, relocate);
  hdf5::erase_selection(engine_, chunks, sel);
}

// H5Dset_extent (docs/DESIGN.md, "Extent changes"): HDF5 changes the extent of the native
// dataset below, and the engine's ExtentUpdate keeps the defined set equal to the model around
// that call.
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

NativeChunkStore SparseDataset::store(hid_t dxpl, bool moves_rewritten) const {
  return NativeChunkStore(under_, under_vol_id_, params().layout.dims.size(), dxpl, moves_rewritten);
}

void SparseDatasetDelete::operator()(SparseDataset* dataset) const noexcept { delete dataset; }

void attach_sparse(Object* dataset, hid_t dxpl) {
  try {
    dataset->sparse = SparseDataset::detect(dataset->under, dataset->under_vol_id, dxpl);
  } catch (...) {
    H5VLdataset_close(dataset->under, dataset->under_vol_id, dxpl, nullptr);
    free_wrapper(dataset);
    throw;
  }
}

}  // namespace h5sparse::vol
