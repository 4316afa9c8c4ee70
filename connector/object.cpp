// Wrapper lifetime, as in HDF5's H5VLpassthru.c: every wrapper keeps the connector below alive
// with a reference on its ID.
#include "object.hpp"

#include <H5VLconnector_passthru.h>

#include <new>

#include "error_stack.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {

bool names_native_connector(hid_t id) noexcept {
  H5VL_class_value_t value = -1;
  bool native = false;
  hdf5::preserving_error_stack([&] {
    H5E_BEGIN_TRY { native = H5VLget_value(id, &value) >= 0 && value == H5_VOL_NATIVE; }
    H5E_END_TRY
  });
  return native;
}

Object* new_wrapper(void* under, hid_t under_vol_id, bool native) noexcept {
  auto* object = new (std::nothrow) Object(under, under_vol_id, native);
  if (object != nullptr) H5Iinc_ref(under_vol_id);
  return object;
}

Object* wrap_under(void* under, hid_t under_vol_id, bool native) {
  if (under == nullptr) return nullptr;
  if (Object* object = new_wrapper(under, under_vol_id, native)) return object;
  throw std::bad_alloc();
}

void free_wrapper(Object* object) noexcept {
  if (object == nullptr) return;
  const hid_t under_vol_id = object->under_vol_id;
  delete object;
  // Dropping the reference may run HDF5 code that resets the error stack: keep the caller's.
  hdf5::preserving_error_stack([under_vol_id] { H5Idec_ref(under_vol_id); });
}

void wrap_started_request(void** req, hid_t under_vol_id) {
  // A request is only waited on, tested and freed: nothing asks whether its connector is native.
  *req = wrap_under(*req, under_vol_id, false);
}

}  // namespace h5sparse::vol
