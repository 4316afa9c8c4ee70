// The connector's object: what HDF5 holds for every file, group, dataset, attribute, datatype,
// request and blob handle opened through us. It owns one reference to the connector below.
#pragma once

#include <hdf5.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>

#include "wrapper_memory.hpp"

namespace h5sparse::vol {

class SparseDataset;
struct ConnectorBelow;

/// What HDF5 hands back to wrap_object / free_wrap_ctx during an API call on one of our
/// objects: the connector below and that connector's own wrap context.
struct WrapContext {
  ConnectorBelow* below;
  void* under_wrap_ctx;
};

/// A connector below us. Records live for the whole process (there are a handful), so objects
/// and wrap contexts point at them; references are counted here and HDF5 is asked (H5Iinc_ref
/// / H5Idec_ref, each a full API call under the library lock) only when a connector's count
/// leaves or returns to zero. Callbacks run under HDF5's library lock (or in a single-threaded
/// library), so a first reference and a last release never race; the count is atomic anyway.
struct ConnectorBelow {
  hid_t id = H5I_INVALID_HID;
  std::atomic<long> references{0};
  /// Whether our references hold one on the ID (not for the library's native connector ID,
  /// which outlives every object).
  bool holds_id_reference = true;
  /// The native connector: its objects need no wrapping (its wrap callbacks are all NULL).
  bool native = false;
  /// native && !holds_id_reference: wrap contexts are the shared one and take no reference,
  /// so get_wrap_ctx and free_wrap_ctx test one byte.
  bool plain_native = false;
  /// The connector's class table, when the connector reports it (introspection; kept for the
  /// native connector, whose table is the library's own, forgotten for others at zero): its
  /// callbacks are then called directly, as HDF5 does for the top connector, instead of
  /// through the H5VL passthrough API (one more locked API call and ID lookup per operation).
  const H5VL_class_t* cls = nullptr;
  /// The wrap context handed out for a native connector below (nothing to allocate).
  WrapContext shared_wrap_ctx{this, nullptr};
};

/// Whether `id` is the library's own ID of the native connector. It lives as long as the
/// library (HDF5 refuses to unregister the native connector, and registering it again returns
/// this ID), so neither objects nor infos need a reference of ours on it; and the test is a
/// comparison, where taking and dropping a reference are API calls, several per file open.
inline bool is_library_native_id(hid_t id) noexcept { return id == H5VL_NATIVE; }

/// Deletes a SparseDataset where its type is complete (sparse_dataset.cpp), so that Object's
/// destructor stays inline: a test of `sparse` on every close, a call only for sparse ones.
struct SparseDatasetDelete {
  SparseDatasetDelete() noexcept = default;
  SparseDatasetDelete(std::default_delete<SparseDataset>) noexcept {}  // from SparseDataset::detect
  [[gnu::cold]] void operator()(SparseDataset* dataset) const noexcept;
};

/// First word of every Object: HDF5 2.x's command-line tools hand H5VLfile_get the native file
/// object together with our connector ID; is_our_object tells such an object from ours.
constexpr std::uint64_t kObjectTag = 0x68357370617273ULL;  // "h5spars"

struct Object {
  Object(void* under_object, ConnectorBelow& below_connector) noexcept
      : under(under_object), under_vol_id(below_connector.id), below(&below_connector), cls(below_connector.cls) {}
  const std::uint64_t tag = kObjectTag;  ///< first: readable in any object HDF5 may hand us
  void* under;                           ///< the object of the connector below
  hid_t under_vol_id;                    ///< the connector below (retained), == below->id
  ConnectorBelow* below;                 ///< its record
  /// below->cls when the wrapper was made, which stays so while the wrapper holds its
  /// reference (a record forgets its table only at zero references): one load less on every
  /// forwarded call.
  const H5VL_class_t* cls;
  std::unique_ptr<SparseDataset, SparseDatasetDelete> sparse;  ///< set for datasets with structured chunks
};

/// Takes one of our references on a connector below; returns its record. `under_object`, one
/// of the connector's objects or nullptr, lets a first reference learn the connector's class.
ConnectorBelow& retain_connector(hid_t under_vol_id, void* under_object);
/// Another reference on a record the caller holds one on (never a first one).
inline ConnectorBelow& retain_connector(ConnectorBelow& below) noexcept {
  below.references.fetch_add(1, std::memory_order_relaxed);
  return below;
}
/// Gives HDF5's reference back (and forgets a non-native class table) after the last one.
[[gnu::noinline]] void release_last_reference(ConnectorBelow& below) noexcept;
/// Drops one reference (the last one gives HDF5's reference back).
inline void release_connector(ConnectorBelow& below) noexcept {
  if (__builtin_expect(below.references.fetch_sub(1, std::memory_order_acq_rel) > 1, 1)) return;
  release_last_reference(below);
}

/// The record of `under_vol_id` when it is the native connector with its class known (its
/// callbacks can be called directly, referenced or not), else nullptr.
ConnectorBelow* known_native_connector(hid_t under_vol_id) noexcept;

/// A new wrapper of an object of `below`, taking a reference; nullptr when out of memory
/// (nothing reported: the caller does).
inline Object* new_wrapper(void* under, ConnectorBelow& below) noexcept {
  void* memory = wrapper_memory.take(sizeof(Object));
  if (__builtin_expect(memory == nullptr, 0)) return nullptr;
  retain_connector(below);
  return new (memory) Object(under, below);
}

/// Wraps an object of the connector below; returns nullptr when `under` is nullptr.
Object* wrap_under(void* under, hid_t under_vol_id);
Object* wrap_under(void* under, ConnectorBelow& below);

/// Releases a wrapper (not the object below), preserving the current error stack.
inline void free_wrapper(Object* object) noexcept {
  if (object == nullptr) return;
  ConnectorBelow& below = *object->below;
  object->~Object();
  wrapper_memory.give(object);
  release_connector(below);
}

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
