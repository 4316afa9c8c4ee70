// Recognising a dense Blosc dataset and planning the transfers its chunk-parallel path serves
// (see dense_blosc_dataset.hpp); the reads and writes themselves are in dense_chunk_read.cpp and
// dense_chunk_write.cpp.
#include "dense_blosc_dataset.hpp"

#include <H5VLconnector_passthru.h>

#include <string>

#include "error_stack.hpp"
#include "h5sparse/blosc_cd_values.hpp"
#include "h5sparse/chunk_threads.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"
#include "memory_selection.hpp"
#include "native_dataset.hpp"
#include "object.hpp"
#include "sparse_dataset.hpp"
#ifdef H5SPARSE_PARALLEL
#include "parallel_write.hpp"
#endif

namespace h5sparse::vol {
namespace {

using hdf5::Handle;
using hdf5::throw_if_negative;

constexpr std::size_t kMaxCdValues = 16;
constexpr std::size_t kDenseMinChunkBytes = std::size_t(128) << 10;

// Types whose elements are plain bytes (no pointers to the heap inside an element).
bool plain_bytes(hid_t type) {
  return H5Tdetect_class(type, H5T_VLEN) == 0 && H5Tis_variable_str(type) == 0 &&
         H5Tdetect_class(type, H5T_REFERENCE) == 0;
}

}  // namespace

std::unique_ptr<DenseBloscDataset> DenseBloscDataset::detect(void* under, hid_t under_vol_id, hid_t dxpl) {
  Handle dcpl = dataset_get(under, under_vol_id, H5VL_DATASET_GET_DCPL, dxpl);
  if (H5Pget_layout(dcpl.get()) != H5D_CHUNKED || H5Pget_nfilters(dcpl.get()) != 1) return nullptr;
  unsigned flags = 0;
  std::size_t count = kMaxCdValues;
  unsigned values[kMaxCdValues] = {};
  if (H5Pget_filter2(dcpl.get(), 0, &flags, &count, values, 0, nullptr, nullptr) != kFilterBlosc) return nullptr;
  // Partial edge chunks stored unfiltered: a layout this path does not write.
  unsigned chunk_options = 0;
  if (H5Pget_chunk_opts(dcpl.get(), &chunk_options) < 0 || chunk_options != 0) return nullptr;
  std::unique_ptr<DenseBloscDataset> d(new DenseBloscDataset(under, under_vol_id));
  try {
    d->params_ = blosc_params_from_cd_values(count, values);
  } catch (const Error&) {
    return nullptr;  // the filter reports bad parameters on the native path
  }
  if (!blosc_compressor_available(d->params_.compressor)) return nullptr;
  d->optional_ = (flags & H5Z_FLAG_OPTIONAL) != 0;
  d->file_type_ = dataset_get(under, under_vol_id, H5VL_DATASET_GET_TYPE, dxpl);
  if (!plain_bytes(d->file_type_.get())) return nullptr;
  d->element_size_ = H5Tget_size(d->file_type_.get());
  hsize_t dims[H5S_MAX_RANK];
  const int rank = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, dims);
  if (rank <= 0 || d->element_size_ == 0) return nullptr;
  std::uint64_t bytes = d->element_size_;
  for (int i = 0; i < rank; ++i) {
    d->chunk_dims_.push_back(dims[i]);
    bytes *= dims[i];
  }
  if (bytes > 0xFFFFFFFFu) return nullptr;
  d->chunk_bytes_ = std::size_t(bytes);
  // Unallocated chunks read as the fill value (zeros by default). Fill time "never" or an
  // undefined fill value leave reads of them to the native path.
  H5D_fill_value_t status = H5D_FILL_VALUE_UNDEFINED;
  H5D_fill_time_t fill_time = H5D_FILL_TIME_IFSET;
  throw_if_negative(H5Pfill_value_defined(dcpl.get(), &status), "cannot read the fill value status");
  throw_if_negative(H5Pget_fill_time(dcpl.get(), &fill_time), "cannot read the fill time");
  if (status == H5D_FILL_VALUE_UNDEFINED || fill_time == H5D_FILL_TIME_NEVER) return nullptr;
  if (status == H5D_FILL_VALUE_USER_DEFINED) {
    d->fill_.assign(d->element_size_, 0);
    throw_if_negative(H5Pget_fill_value(dcpl.get(), d->file_type_.get(), d->fill_.data()),
                      "cannot read the fill value");
    bool zeros = true;
    for (std::uint8_t b : d->fill_) zeros = zeros && b == 0;
    if (zeros) d->fill_.clear();
  }
  return d;
}

std::unique_ptr<DenseBloscDataset::Transfer> DenseBloscDataset::plan(hid_t mem_type, hid_t mem_space,
                                                                     hid_t file_space, hid_t dxpl,
                                                                     bool for_write) const {
  // Cheap refusals first: most small transfers end here. Chunks under kDenseMinChunkBytes stay
  // on HDF5's path unless H5SPARSE_NTHREADS is set: HDF5 reads such chunks in 1-2 us each,
  // where handing them to threads costs more (30 chunks of 3 KiB: 50 us through HDF5, 300 us
  // here).
  if (chunk_bytes_ < kDenseMinChunkBytes && !chunk_threads_asked()) return nullptr;
  if (file_space != H5S_ALL) {
    const hssize_t selected = H5Sget_select_npoints(file_space);
    if (selected < 0 || std::uint64_t(selected) * element_size_ < kParallelMinBytes) return nullptr;
  }
  if (has_data_transform(dxpl) || H5Tequal(mem_type, file_type_.get()) <= 0) return nullptr;
  Handle full = dataset_get(under_, under_vol_id_, H5VL_DATASET_GET_SPACE, dxpl);
  const std::vector<std::uint64_t> dims = extent_of(full.get());
  if (dims.size() != chunk_dims_.size()) return nullptr;
  std::unique_ptr<Transfer> t(new Transfer{std::move(full), H5I_INVALID_HID, H5I_INVALID_HID,
                                           ChunkGrid(dims, chunk_dims_), 0, {}, {}, false, 0, 1});
  t->file_space = file_space == H5S_ALL ? t->full.get() : file_space;
  if (file_space != H5S_ALL) {  // invalid selections: the native path reports them
    if (H5Sis_simple(file_space) <= 0 || extent_of(file_space) != dims || H5Sselect_valid(file_space) <= 0)
      return nullptr;
  }
  const H5S_sel_type kind = H5Sget_select_type(t->file_space);
  // A write's elements must each be selected once: points may repeat one.
  if (for_write && kind != H5S_SEL_ALL && kind != H5S_SEL_HYPERSLABS) return nullptr;
  const hssize_t npoints = H5Sget_select_npoints(t->file_space);
  if (npoints < 0) return nullptr;
  t->npoints = std::uint64_t(npoints);
  if (t->npoints * element_size_ < kParallelMinBytes) return nullptr;
  t->mem_space = mem_space == H5S_ALL ? t->file_space : mem_space;
  if (H5Sget_select_npoints(t->mem_space) != npoints) return nullptr;
  t->whole = selects_everything(t->file_space, t->grid, t->npoints);
  if (t->whole) {
    t->chunks = t->grid.chunk_count();
  } else {
    t->pieces = selection_pieces(t->file_space, t->grid);
    t->group_starts = chunk_group_starts(t->pieces);
    t->chunks = t->group_starts.size() - 1;
  }
  if (t->chunks < kParallelMinChunks) return nullptr;
  t->threads = chunk_threads();
  if (t->threads <= 1) return nullptr;  // H5SPARSE_NTHREADS=1: HDF5's own serial path
#ifdef H5SPARSE_PARALLEL
  if (ParallelWrite::on_mpi_file(under_, under_vol_id_)) return nullptr;  // no direct chunk I/O on MPI-IO
#endif
  return t;
}

std::string DenseBloscDataset::where(const std::vector<std::uint64_t>& origin) const {
  return "dataset '" + dataset_name(under_, under_vol_id_) + "', chunk at " + coords_text(origin);
}

void DenseBloscDelete::operator()(DenseBloscDataset* dataset) const noexcept { delete dataset; }

namespace {

// The dataset's dense Blosc view, recognised on its first transfer; null when it has none.
const DenseBloscDataset* dense_view(Object* o, hid_t dxpl) {
  if (!o->dense_checked) {
    // Direct chunk I/O is the native connector's: under any other, HDF5's path serves.
    if (o->native) o->dense = DenseBloscDataset::detect(o->under, o->under_vol_id, dxpl);
    o->dense_checked = true;
  }
  return o->dense.get();
}

}  // namespace

bool read_dense_chunks(Object* o, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void* buf) {
  if (o->sparse) return false;
  const DenseBloscDataset* d = dense_view(o, dxpl);
  return d != nullptr && d->read(mem_type, mem_space, file_space, dxpl, buf);
}

bool write_dense_chunks(Object* o, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl,
                        const void* buf) {
  if (o->sparse) return false;
  const DenseBloscDataset* d = dense_view(o, dxpl);
  return d != nullptr && d->write(mem_type, mem_space, file_space, dxpl, buf);
}

}  // namespace h5sparse::vol
