// The connector's object: what HDF5 holds for every file, group, dataset, attribute, datatype,
// request and blob handle opened through us. As in HDF5's H5VLpassthru.c, it holds the object
// of the connector below and that connector's ID, on which it owns one reference (H5Iinc_ref
// when made, H5Idec_ref when freed).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <memory>

namespace h5sparse::vol {

class SparseDataset;

/// What HDF5 hands back to wrap_object / free_wrap_ctx during an API call on one of our
/// objects: the connector below (one reference held), what we know of it, and its own wrap
/// context.
struct WrapContext {
  hid_t under_vol_id;
  bool native;
  void* under_wrap_ctx;
};

/// Whether `id` names the native connector, asked of HDF5 (quietly: no record left on the
/// error stack). Never a comparison with H5VL_NATIVE: HDF5 2.x hands out a new ID for the same
/// connector on every lookup.
bool names_native_connector(hid_t id) noexcept;

/// Deletes a SparseDataset where its type is complete (sparse_dataset.cpp), so that what
/// includes Object needs no SparseDataset.
struct SparseDatasetDelete {
  SparseDatasetDelete() noexcept = default;
  SparseDatasetDelete(std::default_delete<SparseDataset>) noexcept {}  // from SparseDataset::detect
  [[gnu::cold]] void operator()(SparseDataset* dataset) const noexcept;
};

class DenseBloscDataset;
/// As SparseDatasetDelete, for the dense Blosc view (dense_blosc_dataset.cpp).
struct DenseBloscDelete {
  DenseBloscDelete() noexcept = default;
  DenseBloscDelete(std::default_delete<DenseBloscDataset>) noexcept {}  // from DenseBloscDataset::detect
  [[gnu::cold]] void operator()(DenseBloscDataset* dataset) const noexcept;
};

/// First word of every Object: HDF5 2.x's command-line tools hand H5VLfile_get the native file
/// object together with our connector ID; is_our_object tells such an object from ours.
constexpr std::uint64_t kObjectTag = 0x68357370617273ULL;  // "h5spars"

struct Object {
  Object(void* under_object, hid_t under_vol, bool below_is_native) noexcept
      : under(under_object), under_vol_id(under_vol), native(below_is_native) {}
  const std::uint64_t tag = kObjectTag;  ///< first: readable in any object HDF5 may hand us
  void* under;                           ///< the object of the connector below
  hid_t under_vol_id;                    ///< the connector below (one reference ours)
  /// The connector below is the native one (names_native_connector, asked when the first
  /// object of a file was made and handed on to every object opened through it).
  bool native;
  std::unique_ptr<SparseDataset, SparseDatasetDelete> sparse;  ///< set for datasets with structured chunks
  /// Datasets whose pipeline is Blosc alone: the connector's chunk-parallel path, recognised on
  /// the first read or write (dense_checked).
  std::unique_ptr<DenseBloscDataset, DenseBloscDelete> dense;
  bool dense_checked = false;
};

/// A new wrapper of `under`, an object of the connector `under_vol_id`, taking a reference on
/// that ID; nullptr when out of memory (nothing reported: the caller does).
Object* new_wrapper(void* under, hid_t under_vol_id, bool native) noexcept;

/// Wraps an object of the connector below; nullptr when `under` is nullptr; throws
/// std::bad_alloc when out of memory.
Object* wrap_under(void* under, hid_t under_vol_id, bool native);
/// Wraps an object opened through `parent`: the same connector below.
inline Object* wrap_under(void* under, const Object& parent) {
  return wrap_under(under, parent.under_vol_id, parent.native);
}

/// Frees a wrapper (not the object below) and drops its reference on the connector below,
/// preserving the current error stack.
void free_wrapper(Object* object) noexcept;

/// Wraps the asynchronous request an operation below started (`*req` set).
[[gnu::cold]] void wrap_started_request(void** req, hid_t under_vol_id);

/// After an operation that may have started an asynchronous request below, wraps it. The test
/// is inline: almost no operation starts one.
inline void wrap_request(void** req, hid_t under_vol_id) {
  if (__builtin_expect(req != nullptr && *req != nullptr, 0)) wrap_started_request(req, under_vol_id);
}

inline Object* as_object(void* obj) noexcept { return static_cast<Object*>(obj); }
inline bool is_our_object(const void* obj) noexcept { return *static_cast<const std::uint64_t*>(obj) == kObjectTag; }

}  // namespace h5sparse::vol
