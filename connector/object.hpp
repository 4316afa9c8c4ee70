// The connector's object: what HDF5 holds for every file, group, dataset, attribute, datatype,
// request and blob handle opened through us. It owns one reference to the connector below.
#pragma once

#include <hdf5.h>

#include <memory>

namespace h5sparse::vol {

class SparseDataset;

struct Object {
  Object(void* under_object, hid_t under_vol);
  ~Object();
  void* under;                           ///< the object of the connector below
  hid_t under_vol_id;                    ///< the connector below (retained)
  std::unique_ptr<SparseDataset> sparse;  ///< set for datasets with structured chunks
};

/// Takes / drops one of our references on a connector below (counted; HDF5 sees only the
/// first and the last).
void retain_connector(hid_t under_vol_id);
void release_connector(hid_t under_vol_id) noexcept;
/// True when a retained connector below is the native one, whose objects need no wrapping
/// (the H5VLget_wrap_ctx / H5VLwrap_object / H5VLunwrap_object / H5VLget_object calls would
/// return them unchanged, at the cost of an API call each).
bool is_native_connector(hid_t under_vol_id) noexcept;

/// Wraps an object of the connector below; returns nullptr when `under` is nullptr.
Object* wrap_under(void* under, hid_t under_vol_id);

/// Releases a wrapper (not the object below), preserving the current error stack.
void free_wrapper(Object* object) noexcept;

/// After an operation that may have started an asynchronous request below, wraps it.
void wrap_request(void** req, hid_t under_vol_id);

inline Object* as_object(void* obj) noexcept { return static_cast<Object*>(obj); }

}  // namespace h5sparse::vol
