// Wrapper lifetime. Every wrapper keeps the connector below alive, as in H5VLpassthru.c, but
// the references are counted here (see ConnectorBelow).
#include "object.hpp"

#include <H5VLconnector_passthru.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

#include "error_stack.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {

namespace {

std::mutex below_mutex;
std::deque<ConnectorBelow> connectors_below;  // never shrinks: objects point into it

bool direct_calls_allowed() {
  // H5SPARSE_DIRECT_CALLS=0 forwards every operation through the H5VL API instead.
  static const bool allowed = [] {
    const char* setting = std::getenv("H5SPARSE_DIRECT_CALLS");
    return setting == nullptr || std::strcmp(setting, "0") != 0;
  }();
  return allowed;
}

/// Whether `id` names the native connector (quietly: no record left on the error stack).
bool names_native(hid_t id) {
  if (is_library_native_id(id)) return true;
  H5VL_class_value_t value = -1;
  bool native = false;
  hdf5::preserving_error_stack([&] {
    H5E_BEGIN_TRY { native = H5VLget_value(id, &value) >= 0 && value == H5_VOL_NATIVE; }
    H5E_END_TRY
  });
  return native;
}

/// The class table of the connector below, asked of one of its objects (a connector may
/// answer for any object). Only a table of our H5VL_VERSION whose value matches the ID's is
/// used; anything else keeps the H5VL API path.
const H5VL_class_t* class_of(void* under_object, hid_t id) {
  if (!direct_calls_allowed() || under_object == nullptr) return nullptr;
  const H5VL_class_t* cls = nullptr;
  H5VL_class_value_t value = -1;
  hdf5::preserving_error_stack([&] {
    H5E_BEGIN_TRY {
      if (H5VLget_value(id, &value) < 0 ||
          H5VLintrospect_get_conn_cls(under_object, id, H5VL_GET_CONN_LVL_CURR, &cls) < 0)
        cls = nullptr;
    }
    H5E_END_TRY
  });
  if (cls == nullptr || cls->version != H5VL_VERSION || cls->value != value) return nullptr;
  return cls;
}

}  // namespace

ConnectorBelow& retain_connector(hid_t under_vol_id, void* under_object) {
  ConnectorBelow* below = nullptr;
  {
    std::lock_guard<std::mutex> lock(below_mutex);
    for (ConnectorBelow& entry : connectors_below) {
      if (entry.id == under_vol_id) {
        below = &entry;
        if (entry.references.load() > 0) {
          entry.references.fetch_add(1);
          return entry;
        }
        break;
      }
    }
    if (below == nullptr) {
      below = &connectors_below.emplace_back();
      below->id = under_vol_id;
    }
    below->references = 1;  // claimed before HDF5 is called, which may call back into us
  }
  below->holds_id_reference = !is_library_native_id(under_vol_id);
  if (below->holds_id_reference) H5Iinc_ref(under_vol_id);
  below->native = is_library_native_id(under_vol_id) || names_native(under_vol_id);
  below->plain_native = below->native && !below->holds_id_reference;
  // The native class table is the library's own for its lifetime: learnt once (a program that
  // opens and closes one file at a time takes a first reference on every open).
  if (!below->native || below->cls == nullptr) below->cls = class_of(under_object, under_vol_id);
  return *below;
}

ConnectorBelow* known_native_connector(hid_t under_vol_id) noexcept {
  ConnectorBelow* found = nullptr;
  {
    std::lock_guard<std::mutex> lock(below_mutex);
    for (ConnectorBelow& entry : connectors_below)
      if (entry.id == under_vol_id && entry.native && entry.cls != nullptr) found = &entry;
  }
  if (found == nullptr || found->references.load() > 0) return found;
  // Not referenced now: make sure the ID still names the native connector.
  return is_library_native_id(under_vol_id) || names_native(under_vol_id) ? found : nullptr;
}

void release_last_reference(ConnectorBelow& below) noexcept {
  if (!below.native) {
    std::lock_guard<std::mutex> lock(below_mutex);
    below.cls = nullptr;  // learnt again if the ID is retained again
  }
  if (!below.holds_id_reference) return;
  // Dropping the reference may run HDF5 code that resets the error stack: keep the caller's.
  const hid_t id = below.id;
  hdf5::preserving_error_stack([id] { H5Idec_ref(id); });
}

Object* wrap_under(void* under, hid_t under_vol_id) {
  if (under == nullptr) return nullptr;
  ConnectorBelow& below = retain_connector(under_vol_id, under);
  Object* object = new_wrapper(under, below);
  release_connector(below);  // new_wrapper took its own
  if (object == nullptr) throw std::bad_alloc();
  return object;
}

Object* wrap_under(void* under, ConnectorBelow& below) {
  if (under == nullptr) return nullptr;
  if (Object* object = new_wrapper(under, below)) return object;
  throw std::bad_alloc();
}

void wrap_started_request(void** req, hid_t under_vol_id) {
  ConnectorBelow& below = retain_connector(under_vol_id, nullptr);  // requests are no objects
  Object* request = new_wrapper(*req, below);
  release_connector(below);  // new_wrapper took its own
  if (request == nullptr) throw std::bad_alloc();
  *req = request;
}

}  // namespace h5sparse::vol
