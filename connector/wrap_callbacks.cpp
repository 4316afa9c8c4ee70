// Object wrapping: HDF5 asks a passthrough to unwrap down to the native object (H5VLget_object
// is how h5py and the native-only API calls reach it) and to wrap objects it creates itself
// (e.g. when an iteration callback receives a new ID).
#include <H5VLconnector_passthru.h>

#include "callbacks.hpp"
#include "error_stack.hpp"
#include "object.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::call_guarded;
using hdf5::Origin;

// get_wrap_ctx and free_wrap_ctx run around every API call on one of our objects: for a native
// connector below each is a test and a store at most, inline; the rest is out of line here.

[[gnu::noinline]] herr_t get_under_wrap_ctx(const Object* o, void** wrap_ctx) noexcept {
  return call_guarded<herr_t>(Origin::connector, "get_wrap_ctx", -1, [&]() -> herr_t {
    if (o->below->native) {  // the shared context, holding a reference on the ID
      *wrap_ctx = &retain_connector(*o->below).shared_wrap_ctx;
      return 0;
    }
    auto* ctx = new WrapContext{&retain_connector(*o->below), nullptr};  // retains once allocated
    if (H5VLget_wrap_ctx(o->under, o->under_vol_id, &ctx->under_wrap_ctx) < 0) {
      free_wrap_ctx(ctx);
      return -1;
    }
    *wrap_ctx = ctx;
    return 0;
  });
}

[[gnu::noinline]] herr_t free_under_wrap_ctx(WrapContext* ctx) noexcept {
  return call_guarded<herr_t>(Origin::connector, "free_wrap_ctx", -1, [&]() -> herr_t {
    ConnectorBelow& below = *ctx->below;
    if (ctx != &below.shared_wrap_ctx) {
      if (ctx->under_wrap_ctx != nullptr)
        hdf5::preserving_error_stack([ctx] { H5VLfree_wrap_ctx(ctx->under_wrap_ctx, ctx->below->id); });
      delete ctx;
    }
    release_connector(below);
    return 0;
  });
}

[[gnu::noinline]] void* under_object_of(const Object* o) noexcept {
  return call_guarded<void*>(Origin::connector, "get_object", nullptr,
                             [&] { return H5VLget_object(o->under, o->under_vol_id); });
}

[[gnu::noinline]] void* unwrap_under(Object* o) noexcept {
  return call_guarded<void*>(Origin::connector, "unwrap_object", nullptr, [&]() -> void* {
    void* under = H5VLunwrap_object(o->under, o->under_vol_id);
    if (under != nullptr) free_wrapper(o);
    return under;
  });
}

}  // namespace

void* get_object(const void* obj) noexcept {
  const auto* o = static_cast<const Object*>(obj);
  return __builtin_expect(o->below->native, 1) ? o->under : under_object_of(o);
}

// get_wrap_ctx and free_wrap_ctx share one cache line (free_wrap_ctx at the end of one API
// call, get_wrap_ctx at the start of the next): get_wrap_ctx is aligned to it and free_wrap_ctx
// follows, each a few instructions.
[[gnu::aligned(64)]] herr_t get_wrap_ctx(const void* obj, void** wrap_ctx) noexcept {
  // For a native connector below the context is the connector's shared one, which needs no
  // memory, nor a reference when the record holds none on the ID (see is_library_native_id).
  ConnectorBelow* below = static_cast<const Object*>(obj)->below;
  if (__builtin_expect(below->plain_native, 1)) {
    *wrap_ctx = &below->shared_wrap_ctx;
    return 0;
  }
  return get_under_wrap_ctx(static_cast<const Object*>(obj), wrap_ctx);
}

herr_t free_wrap_ctx(void* wrap_ctx) noexcept {
  // A plain native connector's contexts are all its shared one (get_under_wrap_ctx never
  // allocates one for a native connector).
  auto* ctx = static_cast<WrapContext*>(wrap_ctx);
  if (__builtin_expect(ctx->below->plain_native, 1)) return 0;
  return free_under_wrap_ctx(ctx);
}

void* wrap_object(void* obj, H5I_type_t obj_type, void* wrap_ctx) noexcept {
  return call_guarded<void*>(Origin::connector, "wrap_object", nullptr, [&]() -> void* {
    auto* ctx = static_cast<WrapContext*>(wrap_ctx);
    ConnectorBelow& below = *ctx->below;
    void* under = below.native ? obj : H5VLwrap_object(obj, obj_type, below.id, ctx->under_wrap_ctx);
    Object* object = wrap_under(under, below);
    // Datasets HDF5 wraps itself (e.g. reopened by H5Drefresh) keep their sparse meaning.
    if (object != nullptr && obj_type == H5I_DATASET) attach_sparse(object, H5P_DATASET_XFER_DEFAULT);
    return object;
  });
}

void* unwrap_object(void* obj) noexcept {
  Object* o = as_object(obj);
  if (__builtin_expect(!o->below->native, 0)) return unwrap_under(o);
  void* under = o->under;
  free_wrapper(o);
  return under;
}

}  // namespace h5sparse::vol
