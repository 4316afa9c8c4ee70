// The connector's object: what HDF5 holds for every file, group, dataset, attribute, datatype,
// request and blob handle opened through us. It owns one reference to the connector below.
#pragma once

#include <hdf5.h>

#include <atomic>
#include <memory>

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

struct Object {
  Object(void* under_object, ConnectorBelow& below_connector);
  ~Object();
  void* under;                           ///< the object of the connector below
  hid_t under_vol_id;                    ///< the connector below (retained), == below->id
  ConnectorBelow* below;                 ///< its record
  std::unique_ptr<SparseDataset> sparse;  ///< set for datasets with structured chunks
};

/// Takes one of our references on a connector below; returns its record. `under_object`, one
/// of the connector's objects or nullptr, lets a first reference learn the connector's class.
ConnectorBelow& retain_connector(hid_t under_vol_id, void* under_object);
ConnectorBelow& retain_connector(ConnectorBelow& below) noexcept;
/// Drops one reference (the last one gives HDF5's reference back).
void release_connector(ConnectorBelow& below) noexcept;

/// The record of `under_vol_id` when it is the native connector with its class known (its
/// callbacks can be called directly, referenced or not), else nullptr.
ConnectorBelow* known_native_connector(hid_t under_vol_id) noexcept;

/// Wraps an object of the connector below; returns nullptr when `under` is nullptr.
Object* wrap_under(void* under, hid_t under_vol_id);
Object* wrap_under(void* under, ConnectorBelow& below);

/// Releases a wrapper (not the object below), preserving the current error stack.
void free_wrapper(Object* object) noexcept;

/// Wraps the asynchronous request an operation below started (`*req` set).
void wrap_started_request(void** req, hid_t under_vol_id);

/// After an operation that may have started an asynchronous request below, wraps it. The test
/// is inline: almost no operation starts one.
inline void wrap_request(void** req, hid_t under_vol_id) {
  if (req != nullptr && *req != nullptr) wrap_started_request(req, under_vol_id);
}

inline Object* as_object(void* obj) noexcept { return static_cast<Object*>(obj); }

}  // namespace h5sparse::vol
