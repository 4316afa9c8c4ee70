// Link, object and group callbacks that take two objects or an object inside their arguments:
// each object is unwrapped to the one below before forwarding.
#include <H5VLconnector_passthru.h>

#include "callbacks.hpp"
#include "error_stack.hpp"
#include "object.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::call_guarded;
using hdf5::Origin;

void* under_of(void* obj) { return obj ? as_object(obj)->under : nullptr; }

hid_t under_vol_of(void* a, void* b) {
  if (a) return as_object(a)->under_vol_id;
  if (b) return as_object(b)->under_vol_id;
  throw Error(ErrorCode::invalid_argument, "operation without any object");
}

}  // namespace

herr_t link_create(H5VL_link_create_args_t* args, void* obj, const H5VL_loc_params_t* loc_params,
                   hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id, void** req) noexcept {
  return call_guarded<herr_t>(Origin::connector, "link_create", -1, [&]() -> herr_t {
    H5VL_link_create_args_t under_args = *args;
    void* target = args->op_type == H5VL_LINK_CREATE_HARD ? args->args.hard.curr_obj : nullptr;
    const hid_t under_vol_id = under_vol_of(obj, target);
    if (target) under_args.args.hard.curr_obj = under_of(target);
    const herr_t rc =
        H5VLlink_create(&under_args, under_of(obj), loc_params, under_vol_id, lcpl_id, lapl_id, dxpl_id, req);
    if (rc >= 0) wrap_request(req, under_vol_id);
    return rc;
  });
}

template <auto Under>
herr_t link_transfer(void* src_obj, const H5VL_loc_params_t* loc_params1, void* dst_obj,
                     const H5VL_loc_params_t* loc_params2, hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id,
                     void** req) noexcept {
  return call_guarded<herr_t>(Origin::connector, "link_copy_move", -1, [&]() -> herr_t {
    const hid_t under_vol_id = under_vol_of(src_obj, dst_obj);
    const herr_t rc = Under(under_of(src_obj), loc_params1, under_of(dst_obj), loc_params2, under_vol_id,
                            lcpl_id, lapl_id, dxpl_id, req);
    if (rc >= 0) wrap_request(req, under_vol_id);
    return rc;
  });
}

herr_t link_copy(void* src_obj, const H5VL_loc_params_t* loc_params1, void* dst_obj,
                 const H5VL_loc_params_t* loc_params2, hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id,
                 void** req) noexcept {
  return link_transfer<H5VLlink_copy>(src_obj, loc_params1, dst_obj, loc_params2, lcpl_id, lapl_id, dxpl_id, req);
}

herr_t link_move(void* src_obj, const H5VL_loc_params_t* loc_params1, void* dst_obj,
                 const H5VL_loc_params_t* loc_params2, hid_t lcpl_id, hid_t lapl_id, hid_t dxpl_id,
                 void** req) noexcept {
  return link_transfer<H5VLlink_move>(src_obj, loc_params1, dst_obj, loc_params2, lcpl_id, lapl_id, dxpl_id, req);
}

herr_t group_specific(void* obj, H5VL_group_specific_args_t* args, hid_t dxpl_id, void** req) noexcept {
  return call_guarded<herr_t>(Origin::connector, "group_specific", -1, [&]() -> herr_t {
    const hid_t under_vol_id = as_object(obj)->under_vol_id;  // a refresh frees `obj`
    H5VL_group_specific_args_t under_args = *args;
    if (args->op_type == H5VL_GROUP_MOUNT)  // the child file is one of our wrappers
      under_args.args.mount.child_file = under_of(args->args.mount.child_file);
    const herr_t rc = H5VLgroup_specific(as_object(obj)->under, under_vol_id, &under_args, dxpl_id, req);
    if (rc >= 0) wrap_request(req, under_vol_id);
    return rc;
  });
}

void* object_open(void* obj, const H5VL_loc_params_t* loc_params, H5I_type_t* opened_type, hid_t dxpl_id,
                  void** req) noexcept {
  return call_guarded<void*>(Origin::connector, "object_open", nullptr, [&]() -> void* {
    Object* o = as_object(obj);
    void* under = H5VLobject_open(o->under, loc_params, o->under_vol_id, opened_type, dxpl_id, req);
    if (under == nullptr) return nullptr;
    wrap_request(req, o->under_vol_id);
    Object* object = wrap_under(under, *o);
    // H5Oopen (h5py's way to open anything) yields datasets too: recognise sparse ones here.
    if (*opened_type == H5I_DATASET) attach_sparse(object, dxpl_id);
    return object;
  });
}

herr_t object_copy(void* src_obj, const H5VL_loc_params_t* src_loc_params, const char* src_name, void* dst_obj,
                   const H5VL_loc_params_t* dst_loc_params, const char* dst_name, hid_t ocpypl_id,
                   hid_t lcpl_id, hid_t dxpl_id, void** req) noexcept {
  return call_guarded<herr_t>(Origin::connector, "object_copy", -1, [&]() -> herr_t {
    const hid_t under_vol_id = under_vol_of(src_obj, dst_obj);
    evict_decoded_chunks(dxpl_id);
    const herr_t rc = H5VLobject_copy(under_of(src_obj), src_loc_params, src_name, under_of(dst_obj),
                                      dst_loc_params, dst_name, under_vol_id, ocpypl_id, lcpl_id, dxpl_id, req);
    if (rc >= 0) wrap_request(req, under_vol_id);
    return rc;
  });
}

}  // namespace h5sparse::vol
