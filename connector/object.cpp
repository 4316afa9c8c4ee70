// Wrapper lifetime, as in HDF5's H5VLpassthru.c: every wrapper keeps the connector below alive
// with a reference on its ID, one shared by the objects of a file (see Below).
#include "object.hpp"

#include <H5VLconnector_passthru.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
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

namespace {

/// The native connector's class table once learnt: the library's own, as long as the library
/// (and so this connector) is loaded.
std::atomic<const H5VL_class_t*> native_class{nullptr};

/// The native connector's class table, asked of one of its objects (quietly) the first time;
/// nullptr unless it is a table of our H5VL_VERSION.
const H5VL_class_t* native_class_of(void* under, hid_t under_vol_id) noexcept {
  if (const H5VL_class_t* known = native_class.load(std::memory_order_acquire)) return known;
  // H5SPARSE_DIRECT_CALLS=0 sends every forward and file open through the H5VL API, where an
  // LD_PRELOAD trace sees them (test/connector/test_tools.py).
  static const bool direct_calls = [] {
    const char* setting = std::getenv("H5SPARSE_DIRECT_CALLS");
    return setting == nullptr || std::strcmp(setting, "0") != 0;
  }();
  if (!direct_calls) return nullptr;
  const H5VL_class_t* cls = nullptr;
  hdf5::preserving_error_stack([&] {
    H5E_BEGIN_TRY {
      if (H5VLintrospect_get_conn_cls(under, under_vol_id, H5VL_GET_CONN_LVL_CURR, &cls) < 0) cls = nullptr;
    }
    H5E_END_TRY
  });
  if (cls == nullptr || cls->version != H5VL_VERSION || cls->value != H5_VOL_NATIVE) return nullptr;
  native_class.store(cls, std::memory_order_release);
  return cls;
}

}  // namespace

const H5VL_class_t* known_native_class() noexcept { return native_class.load(std::memory_order_acquire); }

Below* new_below(hid_t under_vol_id, bool native, void* under) noexcept {
  const H5VL_class_t* cls = native ? native_class_of(under, under_vol_id) : nullptr;
  auto* below = new (std::nothrow) Below(under_vol_id, native, cls);
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
  Below* below = new_below(under_vol_id, native, under);
  if (below == nullptr) throw std::bad_alloc();
  const BelowUser user(*below);  // until the wrapper holds it (or was not made)
  return wrap_under(under, *user);
}

void wrap_started_request(void** req, hid_t under_vol_id) {
  // A request is only waited on, tested and freed: nothing asks whether its connector is native.
  *req = wrap_under(*req, under_vol_id, false);
}

}  // namespace h5sparse::vol
