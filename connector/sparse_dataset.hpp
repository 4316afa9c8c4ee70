// A sparse dataset seen from the connector: a native chunked dataset whose pipeline holds the
// structured-chunk filter. The connector turns HDF5's selections and datatypes into the sparse
// engine's terms (core's engine/sparse_engine.hpp: chunk pieces, values in the file type) and
// hands the engine a chunk store over the native dataset below (native_chunk_store.hpp).
#pragma once

#include <hdf5.h>

#include <memory>
#include <optional>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/sparse_layout.hpp"
#include "h5sparse_vol.h"
#include "file_selection.hpp"
#include "handle.hpp"
#include "native_chunk_store.hpp"

namespace h5sparse::vol {

class SparseDataset {
 public:
  /// Returns the sparse view of a freshly created or opened dataset, or nullptr when it is an
  /// ordinary dataset (no structured-chunk filter in its pipeline).
  static std::unique_ptr<SparseDataset> detect(void* under, hid_t under_vol_id, hid_t dxpl);

  /// H5Dwrite semantics with the RFC's meaning: the selected elements become defined.
  void write(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, const void* buf);
  /// A dataspace (dataset extent) selecting the defined elements among those selected.
  hid_t get_defined(hid_t file_space, hid_t dxpl);
  /// H5Dread with the RFC's meaning (undefined elements read as the fill value), decoding
  /// chunks straight into `buf`. Returns false, having done nothing, for a call the native
  /// path must serve (datatype conversion, data transform, fill time "never").
  bool read(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void* buf) const;
  /// Makes the selected elements undefined.
  void erase(hid_t file_space, hid_t dxpl);
  /// Coordinate I/O (sparse_coordinates.cpp; core's engine/coordinates.hpp): `coords` holds
  /// n x rank coordinates; values are n elements of `mem_type`.
  void write_coordinates(std::size_t n, const hsize_t* coords, hid_t mem_type, const void* values, hid_t dxpl);
  void erase_coordinates(std::size_t n, const hsize_t* coords, hid_t dxpl);
  /// h5sparse_diterate_coo and h5sparse_dread_coo: batches of the defined elements of the
  /// region to `a.op`, written where `a.room` says; returns 0 or the value op stopped with.
  herr_t iterate_coordinates(const H5SparseIterateCooArgs& a, hid_t dxpl) const;
  /// H5Dvlen_get_buf_size of a variable-length dataset (hdf5_support's var_values.hpp).
  hsize_t vlen_buf_size(hid_t mem_type, hid_t file_space, hid_t dxpl) const;
  /// The dataset's datatype: the true one of a variable-length dataset, not its carrier.
  hid_t file_type() const { return file_type_.get(); }
  /// After a failed native read: throws an Error naming the first chunk of the selection that
  /// does not decode (the filter below cannot say which dataset or chunk it was given).
  void diagnose_read(hid_t file_space, hid_t dxpl) const;
  /// H5Dset_extent with the RFC's meaning (core's engine/extent_update.hpp).
  void set_extent(const hsize_t* size, hid_t dxpl);
  /// After a read the native path served: HDF5 may now hold decoded chunks of this dataset in
  /// its chunk cache, which H5Ocopy would encode again (sparse_copy.cpp).
  void note_native_read() const;
  /// Reads every stored chunk directly, which drops it from HDF5's chunk cache.
  void evict_cached_chunks(hid_t dxpl) const;
  ~SparseDataset();

  const SparseParams& params() const { return engine_.params(); }
  /// True when the dataset's file is on MPI-IO (parallel flavour only): writes and erases
  /// then take the collective path (parallel_write.hpp), never direct chunk writes.
  bool on_mpi_file() const { return mpi_file_; }

 private:
  friend class ParallelWrite;
  SparseDataset(void* under, hid_t under_vol_id, SparseParams params, std::size_t decoded_cache_bytes,
                hdf5::Handle file_type);

  using Selection = hdf5::FileSelection;  // against the current extent
  Selection resolve(hid_t file_space, hid_t dxpl) const;
  std::vector<std::uint64_t> extent(hid_t dxpl) const;
  /// The chunk store of one call (`moves_rewritten`: an SWMR writer's).
  hdf5::NativeChunkStore store(hid_t dxpl, bool moves_rewritten = false) const;

  void* under_;
  hid_t under_vol_id_;
  SparseEngine engine_;
  hdf5::Handle file_type_;
  bool fill_never_ = false;  // H5D_FILL_TIME_NEVER: native reads leave unallocated parts alone
  bool mpi_file_ = false;
  // The collective transfer list of parallel erases. It outlives the call: HDF5 writes the
  // actual I/O mode into the list its API context last used when the call returns.
  hdf5::Handle collective_dxpl_;
};

struct Object;

/// Before H5Ocopy: makes HDF5 drop the decoded chunks it caches for any open sparse dataset
/// (a copy would encode them again through the filter, defining every element).
void evict_decoded_chunks(hid_t dxpl);

/// Serves our coordinate operations (sparse_coordinates.cpp); nothing for any other operation.
std::optional<herr_t> serve_coordinate_operation(Object* dataset, H5VL_optional_args_t* args, hid_t dxpl);

/// Serves a dataset optional operation about chunks (sparse_chunk_io.cpp): one of ours (refused
/// with a clear error on a dense dataset), or a native one on a sparse dataset, after checking
/// what it would store. Returns nothing when the caller should forward `args` to the connector
/// below (every other operation, and checked native ones, whose meaning is the native one).
std::optional<herr_t> serve_chunk_operation(Object* dataset, H5VL_optional_args_t* args, hid_t dxpl);

/// Recognises a just-opened dataset as sparse (or not). When its parameters cannot be read,
/// closes the dataset below, frees the wrapper and rethrows, so nothing leaks.
void attach_sparse(Object* dataset, hid_t dxpl);

}  // namespace h5sparse::vol
