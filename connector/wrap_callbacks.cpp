// Object wrapping, as in HDF5's H5VLpassthru.c: HDF5 asks a passthrough to unwrap down to the
// native object (H5VLget_object is how h5py and the native-only API calls reach it) and to
// wrap objects it creates itself (e.g. when an iteration callback receives a new ID); each
// question goes to the connector below through the H5VL API.
#include <H5VLconnector_passthru.h>

#include "callbacks.hpp"
#include "error_stack.hpp"
#include "object.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {

using hdf5::call_guarded;
using hdf5::Origin;

void* get_object(const void* obj) noexcept {
  const auto* o = static_cast<const Object*>(obj);
  return call_guarded<void*>(Origin::connector, "get_object", nullptr,
                             [&] { return H5VLget_object(o->under, o->under_vol_id); });
}

// Run around every API call on one of our objects: the context keeps the connector below
// alive until free_wrap_ctx, at the end of the call (which may have closed the object).
herr_t get_wrap_ctx(const void* obj, void** wrap_ctx) noexcept {
  const auto* o = static_cast<const Object*>(obj);
  Below& below = *o->below;
  if (below.native) {  // see Below::shared_wrap_ctx
    *wrap_ctx = &retain_below(below).shared_wrap_ctx;
    return 0;
  }
  return call_guarded<herr_t>(Origin::connector, "get_wrap_ctx", -1, [&]() -> herr_t {
    auto* ctx = new WrapContext{&below, nullptr};
    retain_below(below);
    if (H5VLget_wrap_ctx(o->under, o->under_vol_id, &ctx->under_wrap_ctx) < 0) {
      free_wrap_ctx(ctx);
      return -1;
    }
    *wrap_ctx = ctx;
    return 0;
  });
}

herr_t free_wrap_ctx(void* wrap_ctx) noexcept {
  auto* ctx = static_cast<WrapContext*>(wrap_ctx);
  Below& below = *ctx->below;
  if (ctx != &below.shared_wrap_ctx) {
    // Runs at the end of a failed API call too: keep the records of why it failed.
    if (ctx->under_wrap_ctx != nullptr)
      hdf5::preserving_error_stack([ctx] { H5VLfree_wrap_ctx(ctx->under_wrap_ctx, ctx->below->id); });
    delete ctx;
  }
  release_below(below);
  return 0;
}

void* wrap_object(void* obj, H5I_type_t obj_type, void* wrap_ctx) noexcept {
  return call_guarded<void*>(Origin::connector, "wrap_object", nullptr, [&]() -> void* {
    const auto* ctx = static_cast<const WrapContext*>(wrap_ctx);
    void* under = H5VLwrap_object(obj, obj_type, ctx->below->id, ctx->under_wrap_ctx);
    Object* object = wrap_under(under, *ctx->below);
    // Datasets HDF5 wraps itself (e.g. reopened by H5Drefresh) keep their sparse meaning.
    if (object != nullptr && obj_type == H5I_DATASET) attach_sparse(object, H5P_DATASET_XFER_DEFAULT);
    return object;
  });
}

void* unwrap_object(void* obj) noexcept {
  return call_guarded<void*>(Origin::connector, "unwrap_object", nullptr, [&]() -> void* {
    Object* o = as_object(obj);
    void* under = H5VLunwrap_object(o->under, o->under_vol_id);
    if (under != nullptr) free_wrapper(o);
    return under;
  });
}

}  // namespace h5sparse::vol
