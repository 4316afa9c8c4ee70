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

}  // namespace

void* get_object(const void* obj) noexcept {
  return call_guarded<void*>(Origin::connector, "get_object", nullptr, [&] {
    const auto* o = static_cast<const Object*>(obj);
    return o->below->native ? o->under : H5VLget_object(o->under, o->under_vol_id);
  });
}

herr_t get_wrap_ctx(const void* obj, void** wrap_ctx) noexcept {
  return call_guarded<herr_t>(Origin::connector, "get_wrap_ctx", -1, [&]() -> herr_t {
    const auto* o = static_cast<const Object*>(obj);
    // HDF5 asks for a wrap context at the start of every API call on our objects: for a
    // native connector below it is the connector's shared one, which needs no memory, nor a
    // reference when the record holds none on the ID (see is_library_native_id).
    if (o->below->native) {
      if (o->below->holds_id_reference) retain_connector(*o->below);
      *wrap_ctx = &o->below->shared_wrap_ctx;
      return 0;
    }
    ConnectorBelow& below = retain_connector(*o->below);
    auto* ctx = new WrapContext{&below, nullptr};
    if (H5VLget_wrap_ctx(o->under, o->under_vol_id, &ctx->under_wrap_ctx) < 0) {
      free_wrap_ctx(ctx);
      return -1;
    }
    *wrap_ctx = ctx;
    return 0;
  });
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
  return call_guarded<void*>(Origin::connector, "unwrap_object", nullptr, [&]() -> void* {
    Object* o = as_object(obj);
    void* under = o->below->native ? o->under : H5VLunwrap_object(o->under, o->under_vol_id);
    if (under != nullptr) free_wrapper(o);
    return under;
  });
}

herr_t free_wrap_ctx(void* wrap_ctx) noexcept {
  return call_guarded<herr_t>(Origin::connector, "free_wrap_ctx", -1, [&]() -> herr_t {
    auto* ctx = static_cast<WrapContext*>(wrap_ctx);
    ConnectorBelow& below = *ctx->below;
    if (ctx == &below.shared_wrap_ctx) {  // see get_wrap_ctx
      if (below.holds_id_reference) release_connector(below);
      return 0;
    }
    if (ctx->under_wrap_ctx != nullptr)
      hdf5::preserving_error_stack([ctx] { H5VLfree_wrap_ctx(ctx->under_wrap_ctx, ctx->below->id); });
    delete ctx;
    release_connector(below);
    return 0;
  });
}

}  // namespace h5sparse::vol
