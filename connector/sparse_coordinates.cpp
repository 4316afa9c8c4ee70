// Coordinate I/O on a sparse dataset (our dataset operations "h5sparse.write_coo", "erase_coo",
// "iterate_coo"): the engine's coordinate operations with HDF5's datatypes and regions. Values
// convert as H5Dwrite/H5Dread convert them; a region is any file selection.
#include <H5VLconnector_passthru.h>

#include <algorithm>
#include <optional>

#include "file_selection.hpp"
#include "memory_selection.hpp"
#include "native_dataset.hpp"
#include "object.hpp"
#include "optional_ops.hpp"
#include "sparse_dataset.hpp"
#include "virtual_sparse.hpp"
#ifdef H5SPARSE_PARALLEL
#include "parallel_write.hpp"
#endif

namespace h5sparse::vol {
namespace {

static_assert(sizeof(hsize_t) == sizeof(std::uint64_t), "coordinates are 64-bit");

const std::uint64_t* as_coords(const hsize_t* coords) { return reinterpret_cast<const std::uint64_t*>(coords); }

void check_points(std::size_t n, const hsize_t* coords) {
  H5SPARSE_FAIL_IF(n > 0 && coords == nullptr, ErrorCode::invalid_argument, "no coordinates");
}

}  // namespace

void SparseDataset::write_coordinates(std::size_t n, const hsize_t* coords, hid_t mem_type, const void* values,
                                      hid_t dxpl) {
  check_points(n, coords);
  H5SPARSE_FAIL_IF(n > 0 && values == nullptr, ErrorCode::invalid_argument, "no values to write");
#ifdef H5SPARSE_PARALLEL
  if (mpi_file_) return ParallelWrite::write_points(*this, n, coords, mem_type, values, dxpl);
#endif
  const SparseChange change;
  const bool relocate = hdf5::check_writable(under_, under_vol_id_, dxpl);  // see write()
  const ChunkGrid grid(extent(dxpl), params().layout.dims);
  if (n == 0) return;
  hdf5::NativeChunkStore chunks = store(dxpl, relocate);
  hdf5::write_coordinate_values(engine_, chunks, grid, as_coords(coords), n, mem_type, file_type(), dxpl, values);
}

void SparseDataset::erase_coordinates(std::size_t n, const hsize_t* coords, hid_t dxpl) {
  check_points(n, coords);
#ifdef H5SPARSE_PARALLEL
  if (mpi_file_) return ParallelWrite::erase_points(*this, n, coords, dxpl);
#endif
  const SparseChange change;
  const bool relocate = hdf5::check_writable(under_, under_vol_id_, dxpl);
  const ChunkGrid grid(extent(dxpl), params().layout.dims);
  hdf5::NativeChunkStore chunks = store(dxpl, relocate);
  engine_.erase_coordinates(chunks, grid, as_coords(coords), n);
}

herr_t SparseDataset::iterate_coordinates(const H5SparseIterateCooArgs& a, hid_t dxpl) const {
  H5SPARSE_FAIL_IF(!a.op && !a.room, ErrorCode::invalid_argument, "no callback to call");
  const Selection sel = resolve(a.file_space_id, dxpl);
  hsize_t* const cursor = a.cursor;
  CoordinateScan scan;
  if (cursor) {
    H5SPARSE_FAIL_IF(cursor[0] == HSIZE_UNDEF, ErrorCode::invalid_argument, "the iteration's cursor is at its end");
    scan.from.assign(cursor, cursor + sel.grid.rank());
    cursor[0] = HSIZE_UNDEF;  // until a batch says which chunk follows it
  }
  scan.region = hdf5::selection_boxes(sel.space);
  scan.values = a.mem_type_id != H5I_INVALID_HID;
  if (a.max_bytes > 0) scan.max_bytes = a.max_bytes;
  scan.compressed_rows = {reinterpret_cast<std::uint64_t*>(a.row_counts), a.index_size};
  std::optional<hdf5::ValuesToMemory> to_memory;
  if (scan.values) to_memory.emplace(file_type_.get(), a.mem_type_id, params().is_var(), dxpl);
  if (a.room)
    scan.room = [&](std::size_t count) {
      hsize_t* coords = nullptr;
      void* values = nullptr;
      H5SPARSE_FAIL_IF(a.room(count, &coords, scan.values ? &values : nullptr, a.op_data) < 0,
                       ErrorCode::invalid_argument, "the coordinate read's room callback failed");
      return CoordinateDestination{reinterpret_cast<std::uint64_t*>(coords),
                                   to_memory ? to_memory->place_for(count, values) : nullptr};
    };
  herr_t result = 0;
  hdf5::NativeChunkStore chunks = store(dxpl);
  engine_.scan_coordinates(chunks, sel.grid, scan, [&](const CoordinateBatch& batch) {
    const void* values = !to_memory ? nullptr : a.room ? to_memory->land(batch) : (*to_memory)(batch);
    if (cursor && batch.next) std::copy(batch.next->begin(), batch.next->end(), cursor);
    if (cursor && !batch.next) cursor[0] = HSIZE_UNDEF;
    if (!a.op) return true;
    result = a.op(batch.count, reinterpret_cast<const hsize_t*>(batch.coords), values, a.op_data);
    H5SPARSE_FAIL_IF(result < 0, ErrorCode::invalid_argument,
                     "the coordinate iteration's callback failed (returned " + std::to_string(result) + ")");
    return result == 0;
  });
  return result;
}

std::optional<herr_t> serve_coordinate_operation(Object* o, H5VL_optional_args_t* args, hid_t dxpl) {
  const OwnOperation op = own_operation(H5VL_SUBCLS_DATASET, args->op_type);
  if (op != OwnOperation::write_coo && op != OwnOperation::erase_coo && op != OwnOperation::iterate_coo)
    return std::nullopt;
  if (!o->sparse) {
    const std::unique_ptr<VirtualSparse> joined =
        op == OwnOperation::iterate_coo ? VirtualSparse::detect(o->under, o->under_vol_id, dxpl) : nullptr;
    H5SPARSE_FAIL_IF(!joined, ErrorCode::invalid_argument,
                     "coordinate " + std::string(op == OwnOperation::iterate_coo ? "reads" : "writes") + " on dataset '" +
                         hdf5::dataset_name(o->under, o->under_vol_id) + "': the dataset is not sparse (its pipeline has no structured-chunk filter)" +
                         (op == OwnOperation::iterate_coo ? "" : "; a virtual dataset is written through its sources"));
    auto* a = static_cast<H5SparseIterateCooArgs*>(args->args);
    a->result = joined->iterate_coordinates(*a, dxpl);
    return 0;
  }
  if (op == OwnOperation::write_coo) {
    const auto* a = static_cast<const H5SparseWriteCooArgs*>(args->args);
    o->sparse->write_coordinates(a->num_points, a->coords, a->mem_type_id, a->values, dxpl);
  } else if (op == OwnOperation::erase_coo) {
    const auto* a = static_cast<const H5SparseEraseCooArgs*>(args->args);
    o->sparse->erase_coordinates(a->num_points, a->coords, dxpl);
  } else {
    auto* a = static_cast<H5SparseIterateCooArgs*>(args->args);
    a->result = o->sparse->iterate_coordinates(*a, dxpl);
  }
  return 0;
}

}  // namespace h5sparse::vol
