// Sparse dataset operations: HDF5's selections and datatypes in the engine's terms (see
// sparse_dataset.hpp).
#include "sparse_dataset.hpp"

#include <H5VLconnector_passthru.h>

#include <algorithm>
#include <cstring>

#include "dcpl.hpp"
#include "error_stack.hpp"
#include "h5sparse/chunk_threads.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/stream_store.hpp"
#include "memory_selection.hpp"
#include "native_dataset.hpp"
#include "object.hpp"
#ifdef H5SPARSE_PARALLEL
#include "parallel_write.hpp"
#endif

namespace h5sparse::vol {
namespace {

using hdf5::checked;
using hdf5::Handle;
using hdf5::throw_if_negative;

}  // namespace

SparseDataset::SparseDataset(void* under, hid_t under_vol_id, SparseParams params, std::size_t decoded_cache_bytes,
                             Handle file_type)
    : under_(under),
      under_vol_id_(under_vol_id),
      engine_(std::move(params), decoded_cache_bytes),
      file_type_(std::move(file_type)) {}

std::unique_ptr<SparseDataset> SparseDataset::detect(void* under, hid_t under_vol_id, hid_t dxpl) {
  Handle dcpl = dataset_get(under, under_vol_id, H5VL_DATASET_GET_DCPL, dxpl);
  if (H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return nullptr;
  const auto values_found = hdf5::filter_values(dcpl.get(), kFilterStructuredChunk);
  if (!values_found) return nullptr;
  const std::vector<unsigned>& values = *values_found;
  // Request form: HDF5 ignored the (optional) filter at creation, so the dataset is dense.
  if (!is_complete_form(values.data(), values.size())) return nullptr;
  SparseParams params = from_cd_values(values.data(), values.size());
  Handle type = dataset_get(under, under_vol_id, H5VL_DATASET_GET_TYPE, dxpl);
  H5SPARSE_FAIL_IF(H5Tget_size(type.get()) != params.layout.element_size, ErrorCode::corrupt_data,
          "structured-chunk parameters disagree with the dataset's datatype size");
  H5D_fill_time_t fill_time = H5D_FILL_TIME_IFSET;
  throw_if_negative(H5Pget_fill_time(dcpl.get(), &fill_time), "cannot read the fill time");
  bool mpi_file = false;
#ifdef H5SPARSE_PARALLEL
  mpi_file = ParallelWrite::on_mpi_file(under, under_vol_id);
#endif
  // Decoded chunks of partial reads are kept within the budget of the access list's chunk cache
  // (H5Pset_chunk_cache's rdcc_nbytes: HDF5 would spend it on the same chunks, decoded); none
  // on SWMR readers (another process changes the file) and MPI-IO files (other ranks do).
  Handle dapl = dataset_get(under, under_vol_id, H5VL_DATASET_GET_DAPL, dxpl);
  std::size_t slots = 0, cache_bytes = 0;
  double w0 = 0;
  throw_if_negative(H5Pget_chunk_cache(dapl.get(), &slots, &cache_bytes, &w0), "cannot read the chunk cache settings");
  const bool swmr_reader = (file_intent(under, under_vol_id, dxpl) & H5F_ACC_SWMR_READ) != 0;
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

void SparseDataset::check_create(hid_t dcpl, hid_t type) {
  if (dcpl == H5P_DEFAULT || dcpl == H5P_DATASET_CREATE_DEFAULT) return;
  if (!hdf5::filter_values(dcpl, kFilterStructuredChunk)) return;
  H5SPARSE_FAIL_IF(H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0, ErrorCode::unsupported,
          "sparse datasets do not support variable-length datatypes yet");
}

SparseDataset::Selection SparseDataset::resolve(hid_t file_space, hid_t dxpl) const {
  Handle full = dataset_get(under_, under_vol_id_, H5VL_DATASET_GET_SPACE, dxpl);
  const std::vector<std::uint64_t> dims = extent_of(full.get());
  const hid_t space = file_space == H5S_ALL ? full.get() : file_space;
  if (file_space != H5S_ALL) {
    H5SPARSE_FAIL_IF(extent_of(file_space) != dims, ErrorCode::invalid_argument,
            "the file dataspace's extent " + coords_text(extent_of(file_space)) + " differs from the dataset's " +
                coords_text(dims));
    H5SPARSE_FAIL_IF(H5Sselect_valid(file_space) <= 0, ErrorCode::invalid_argument,
            "the file selection lies outside the dataset's extent " + coords_text(dims));
  }
  const hssize_t npoints = H5Sget_select_npoints(space);
  throw_if_negative(npoints, "cannot count the selected elements");
  ChunkGrid grid(dims, params().layout.dims);
  return Selection{std::move(full), space, std::move(grid), npoints};
}

std::vector<std::uint64_t> SparseDataset::extent(hid_t dxpl) const {
  return extent_of(dataset_get(under_, under_vol_id_, H5VL_DATASET_GET_SPACE, dxpl).get());
}

std::vector<hsize_t> point_list(hid_t space, std::size_t n, std::size_t rank) {
  std::vector<hsize_t> coords(n * rank);
  throw_if_negative(H5Sget_select_elem_pointlist(space, 0, n, coords.data()), "cannot list the selected points");
  return coords;
}

bool selects_everything(hid_t space, const ChunkGrid& grid, std::uint64_t npoints) {
  const H5S_sel_type type = H5Sget_select_type(space);
  throw_if_negative(type, "cannot read the selection type");
  if (type == H5S_SEL_ALL) return true;
  if (type != H5S_SEL_HYPERSLABS) return false;
  std::uint64_t total = 1;
  for (std::uint64_t d : grid.dataset_dims()) total *= d;
  return npoints == total;
}

std::vector<ChunkPiece> selection_pieces(hid_t space, const ChunkGrid& grid) {
  std::vector<ChunkPiece> pieces;
  // Every element (a whole-dataset write): each chunk's rows follow from its position, in the
  // order split and group_by_chunk would give them (a fifth as many instructions).
  const hssize_t npoints = H5Sget_select_npoints(space);
  throw_if_negative(npoints, "cannot count the selected elements");
  if (selects_everything(space, grid, std::uint64_t(npoints))) {
    for (std::uint64_t chunk = 0, chunks = grid.chunk_count(); chunk < chunks; ++chunk)
      grid.whole_chunk_pieces(chunk, pieces);
    return pieces;
  }
  // Default iteration order: the order in which H5Dwrite pairs memory and file elements.
  Handle iter = checked(H5Ssel_iter_create(space, 1, 0), "cannot iterate the selection");
  constexpr std::size_t kBatch = 4096;
  // Uninitialised: zeroing 64 KiB per call was a tenth of a one-row write (Hangar's samples).
  const std::unique_ptr<hsize_t[]> offsets(new hsize_t[kBatch]);
  const std::unique_ptr<std::size_t[]> lengths(new std::size_t[kBatch]);
  std::uint64_t source = 0;
  while (true) {
    std::size_t nseq = 0, nelem = 0;
    throw_if_negative(H5Ssel_iter_get_seq_list(iter.get(), kBatch, SIZE_MAX, &nseq, &nelem, offsets.get(),
                                               lengths.get()),
                      "cannot iterate the selection");
    if (nseq == 0) break;
    for (std::size_t i = 0; i < nseq; ++i) {
      grid.split(offsets[i], lengths[i], source, pieces);
      source += lengths[i];
    }
  }
  // Group by chunk, keeping selection order inside a chunk (later duplicates win).
  group_by_chunk(pieces);
  return pieces;
}

const std::uint8_t* SparseDataset::file_values(hid_t mem_type, hid_t mspace, std::size_t n, hid_t dxpl,
                                               const void* buf, Bytes& values) const {
  const std::size_t es = params().layout.element_size;
  const std::size_t mem_size = H5Tget_size(mem_type);
  H5SPARSE_FAIL_IF(mem_size == 0, ErrorCode::invalid_argument, "invalid memory datatype");
  const htri_t same = H5Tequal(mem_type, file_type_.get());
  // The caller's buffer is already the selection in order, in the file type: read it in place.
  if (same > 0 && H5Sget_select_type(mspace) == H5S_SEL_ALL) return static_cast<const std::uint8_t*>(buf);
  values.resize(n * std::max(mem_size, es));
  throw_if_negative(H5Dgather(mspace, buf, mem_type, n * mem_size, values.data(), nullptr, nullptr),
                    "cannot gather the memory selection");
  if (same <= 0) {
    Bytes background(n * es, 0);
    if (!params().fill.empty())
      for (std::size_t i = 0; i < n; ++i) std::memcpy(&background[i * es], params().fill.data(), es);
    throw_if_negative(H5Tconvert(mem_type, file_type_.get(), n, values.data(), background.data(), dxpl),
                      "cannot convert the data to the dataset's datatype");
  }
  return values.data();
}

hid_t SparseDataset::memory_space(hid_t mem_space, const Selection& sel) const {
  const hid_t mspace = mem_space == H5S_ALL ? sel.space : mem_space;
  const hssize_t mem_points = H5Sget_select_npoints(mspace);
  throw_if_negative(mem_points, "cannot count the selected memory elements");
  H5SPARSE_FAIL_IF(mem_points != sel.npoints, ErrorCode::invalid_argument,
          "memory selection has " + std::to_string(mem_points) + " elements, file selection " +
              std::to_string(sel.npoints));
  return mspace;
}

void SparseDataset::write(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, const void* buf) {
  const SparseChange change;
  // An SWMR writer never frees a chunk it replaces, but rewrites one of unchanged size in
  // place: the store changes the size, so the flushed copy stays intact for readers and crashes.
  const bool relocate = check_writable(under_, under_vol_id_, dxpl);
#ifdef H5SPARSE_PARALLEL
  if (mpi_file_) return ParallelWrite::write(*this, mem_type, mem_space, file_space, dxpl, buf);
#endif
  const Selection sel = resolve(file_space, dxpl);
  const hid_t mspace = memory_space(mem_space, sel);
  if (sel.npoints == 0) return;
  H5SPARSE_FAIL_IF(buf == nullptr, ErrorCode::invalid_argument, "no data buffer to write from");
  Bytes storage;
  const std::uint8_t* values = file_values(mem_type, mspace, std::size_t(sel.npoints), dxpl, buf, storage);
  NativeChunkStore chunks = store(dxpl, relocate);
  if (H5Sget_select_type(sel.space) == H5S_SEL_POINTS) {  // elements by coordinates: coordinate I/O
    const std::vector<hsize_t> coords = point_list(sel.space, std::size_t(sel.npoints), sel.grid.rank());
    return engine_.write_coordinates(chunks, sel.grid, reinterpret_cast<const std::uint64_t*>(coords.data()),
                                     std::size_t(sel.npoints), values);
  }
  engine_.write(chunks, sel.grid, selection_pieces(sel.space, sel.grid), values);
}

bool SparseDataset::read(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void* buf) const {
  if (fill_never_) return false;
  const htri_t same = H5Tequal(mem_type, file_type_.get());
  throw_if_negative(same, "cannot compare the memory and file datatypes");
  if (same == 0 || has_data_transform(dxpl)) return false;

  const Selection sel = resolve(file_space, dxpl);
  const hid_t mspace = memory_space(mem_space, sel);
  if (sel.npoints == 0) return true;
  H5SPARSE_FAIL_IF(buf == nullptr, ErrorCode::invalid_argument, "no buffer to read into");
  const std::uint64_t n = std::uint64_t(sel.npoints);
  const std::size_t es = params().layout.element_size;
  // Straight into the caller's buffer when the memory selection is one run, else staged in
  // selection order and scattered.
  const std::int64_t offset = contiguous_offset(mspace, es, n);
  Bytes staging;
  std::uint8_t* dest = static_cast<std::uint8_t*>(buf) + (offset < 0 ? 0 : offset);
  if (offset < 0) {
    staging.resize(std::size_t(n) * es);
    dest = staging.data();
  }
  const std::uint8_t* fill = params().fill.empty() ? nullptr : params().fill.data();
  // A destination larger than the caches gets streaming stores (stream_store.hpp).
  const ReadTarget target{dest, fill, std::size_t(n) * es >= kStreamingMinBytes, offset >= 0};
  // Every element in row-major order: each chunk's pieces follow from its position (splitting
  // the selection into pieces and grouping them was a fifth of a full read).
  const bool whole = selects_everything(sel.space, sel.grid, n);
  const std::vector<ChunkPiece> pieces = whole ? std::vector<ChunkPiece>() : selection_pieces(sel.space, sel.grid);
  NativeChunkStore chunks = store(dxpl);
  engine_.read(chunks, ChunkRequest{sel.grid, pieces, whole, n}, target);
  if (offset < 0) scatter_to_memory(mspace, staging.data(), es, static_cast<std::uint8_t*>(buf));
  return true;
}

hid_t SparseDataset::get_defined(hid_t file_space, hid_t dxpl) {
  const Selection sel = resolve(file_space, dxpl);
  Handle result = checked(H5Scopy(sel.full.get()), "cannot create the result dataspace");
  throw_if_negative(H5Sselect_none(result.get()), "cannot clear the result selection");
  NativeChunkStore chunks = store(dxpl);
  const std::vector<std::uint64_t> linear = engine_.defined(chunks, sel.grid, selection_pieces(sel.space, sel.grid));
  if (linear.empty()) return result.release();
  const std::vector<std::uint64_t>& dims = sel.grid.dataset_dims();
  const std::size_t rank = dims.size();
  std::vector<hsize_t> coords(linear.size() * rank);
  for (std::size_t i = 0; i < linear.size(); ++i) {
    std::uint64_t rest = linear[i];
    for (std::size_t d = rank; d-- > 0;) {
      coords[i * rank + d] = rest % dims[d];
      rest /= dims[d];
    }
  }
  throw_if_negative(H5Sselect_elements(result.get(), H5S_SELECT_SET, linear.size(), coords.data()),
                    "cannot select the defined elements");
  return result.release();
}

void SparseDataset::diagnose_read(hid_t file_space, hid_t dxpl) const {
  const Selection sel = resolve(file_space, dxpl);
  NativeChunkStore chunks = store(dxpl);
  engine_.check_chunks(chunks, sel.grid, selection_pieces(sel.space, sel.grid));
}

void SparseDataset::erase(hid_t file_space, hid_t dxpl) {
  const SparseChange change;
  const bool relocate = check_writable(under_, under_vol_id_, dxpl);  // see write()
#ifdef H5SPARSE_PARALLEL
  if (mpi_file_) return ParallelWrite::erase(*this, file_space, dxpl);
#endif
  const Selection sel = resolve(file_space, dxpl);
  NativeChunkStore chunks = store(dxpl, relocate);
  if (H5Sget_select_type(sel.space) == H5S_SEL_POINTS) {
    const std::vector<hsize_t> coords = point_list(sel.space, std::size_t(sel.npoints), sel.grid.rank());
    return engine_.erase_coordinates(chunks, sel.grid, reinterpret_cast<const std::uint64_t*>(coords.data()),
                                     std::size_t(sel.npoints));
  }
  engine_.erase(chunks, sel.grid, selection_pieces(sel.space, sel.grid));
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
