// Wrapper lifetime, as in HDF5's H5VLpassthru.c: every wrapper keeps the connector below alive
// with a reference on its ID, one shared by the objects of a file (see Below).
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

Below* new_below(hid_t under_vol_id, bool native) noexcept {
  auto* below = new (std::nothrow) Below(under_vol_id, native);
  if (below != nullptr) H5Iinc_ref(under_vol_id);
  return below;
}

void release_below(Below& below) noexcept {
  if (below.users.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const hid_t id = below.id;
  delete &below;
  // Dropping the reference may run HDF5 code that resets the error stack: keep the caller's.
  hdf5::preserving_error_stack([id] { H5Idec_ref(id); });
}

Object* wrap_under(void* under, Below& below) {
  if (under == nullptr) return nullptr;
  if (Object* object = new_wrapper(under, below)) return object;
  throw std::bad_alloc();
}

Object* wrap_under(void* under, hid_t under_vol_id, bool native) {
  if (under == nullptr) return nullptr;
  Below* below = new_below(under_vol_id, native);
  if (below == nullptr) throw std::bad_alloc();
  retain_below(*below);  // until the wrapper holds it (or was not made)
  Object* object = new_wrapper(under, *below);
  release_below(*below);
  if (object == nullptr) throw std::bad_alloc();
  return object;
}

void wrap_started_request(void** req, hid_t under_vol_id) {
  // A request is only waited on, tested and freed: nothing asks whether its connector is native.
  *req = wrap_under(*req, under_vol_id, false);
}

}  // namespace h5sparse::vol
