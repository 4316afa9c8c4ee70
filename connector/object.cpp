// Wrapper lifetime. Every wrapper keeps the connector below alive, as in H5VLpassthru.c, but
// the references are counted here: HDF5 is asked (H5Iinc_ref / H5Idec_ref, each a full API
// call under the library lock) only when a connector's count leaves or returns to zero, not for
// every attribute or group handle and wrap context.
#include "object.hpp"

#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "error_stack.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {

Object::Object(void* under_object, hid_t under_vol) : under(under_object), under_vol_id(under_vol) {}
Object::~Object() = default;

namespace {

struct Retained {
  hid_t id;
  long count;   // references we hold
  bool native;  // the native connector: no wrapping of its own (all wrap callbacks NULL)
};
std::mutex retained_mutex;
std::vector<Retained> retained;  // a few entries: one per connector below in use

}  // namespace

void retain_connector(hid_t under_vol_id) {
  {
    std::lock_guard<std::mutex> lock(retained_mutex);
    for (Retained& entry : retained) {
      if (entry.id == under_vol_id) {
        ++entry.count;
        return;
      }
    }
  }
  // First reference: outside the lock, as HDF5 may call back into the connector.
  H5Iinc_ref(under_vol_id);
  H5VL_class_value_t value = -1;
  const bool native = H5VLget_value(under_vol_id, &value) >= 0 && value == H5_VOL_NATIVE;
  std::lock_guard<std::mutex> lock(retained_mutex);
  retained.push_back({under_vol_id, 1, native});
}

bool is_native_connector(hid_t under_vol_id) noexcept {
  std::lock_guard<std::mutex> lock(retained_mutex);
  for (const Retained& entry : retained)
    if (entry.id == under_vol_id) return entry.native;
  return false;  // unknown: ask HDF5, which is always right
}

void release_connector(hid_t under_vol_id) noexcept {
  {
    std::lock_guard<std::mutex> lock(retained_mutex);
    for (auto it = retained.begin(); it != retained.end(); ++it) {
      if (it->id != under_vol_id) continue;
      if (--it->count > 0) return;
      retained.erase(it);
      break;
    }
  }
  // Dropping the reference may run HDF5 code that resets the error stack: keep the caller's.
  hdf5::preserving_error_stack([under_vol_id] { H5Idec_ref(under_vol_id); });
}

Object* wrap_under(void* under, hid_t under_vol_id) {
  if (under == nullptr) return nullptr;
  auto* object = new Object(under, under_vol_id);
  retain_connector(under_vol_id);
  return object;
}

void free_wrapper(Object* object) noexcept {
  if (object == nullptr) return;
  release_connector(object->under_vol_id);
  delete object;
}

void wrap_request(void** req, hid_t under_vol_id) {
  if (req != nullptr && *req != nullptr) *req = wrap_under(*req, under_vol_id);
}

}  // namespace h5sparse::vol
