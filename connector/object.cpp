// Wrapper lifetime: reference counting of the connector below, as H5VLpassthru.c does it.
#include "object.hpp"

#include <new>

#include "error_stack.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {

Object::Object(void* under_object, hid_t under_vol) : under(under_object), under_vol_id(under_vol) {}
Object::~Object() = default;

Object* wrap_under(void* under, hid_t under_vol_id) {
  if (under == nullptr) return nullptr;
  auto* object = new Object(under, under_vol_id);
  H5Iinc_ref(under_vol_id);
  return object;
}

void free_wrapper(Object* object) noexcept {
  if (object == nullptr) return;
  // Dropping the reference may run HDF5 code that resets the error stack: keep the caller's.
  hdf5::preserving_error_stack([object] { H5Idec_ref(object->under_vol_id); });
  delete object;
}

void wrap_request(void** req, hid_t under_vol_id) {
  if (req != nullptr && *req != nullptr) *req = wrap_under(*req, under_vol_id);
}

}  // namespace h5sparse::vol
