// Introspection: we answer "which connector is this" only for our own level, so HDF5 (and
// h5py's 1.10-API calls that need a native file) see the native connector at the terminal
// level; optional-operation queries go to the connector below unless they are ours.
#include <H5VLconnector_passthru.h>

#include "callbacks.hpp"
#include "error_stack.hpp"
#include "info.hpp"
#include "object.hpp"
#include "optional_ops.hpp"

namespace h5sparse::vol {

herr_t get_conn_cls(void* obj, H5VL_get_conn_lvl_t lvl, const H5VL_class_t** conn_cls) noexcept {
  return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, "get_conn_cls", -1, [&]() -> herr_t {
    if (lvl == H5VL_GET_CONN_LVL_CURR) {
      *conn_cls = &kConnectorClass;
      return 0;
    }
    Object* o = as_object(obj);
    return H5VLintrospect_get_conn_cls(o->under, o->under_vol_id, lvl, conn_cls);
  });
}

herr_t get_cap_flags(const void* info, uint64_t* cap_flags) noexcept {
  return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, "get_cap_flags", -1, [&]() -> herr_t {
    const auto* i = static_cast<const Info*>(info);
    const herr_t rc = i ? H5VLintrospect_get_cap_flags(i->under_vol_info, i->under_vol_id, cap_flags)
                        : H5VLintrospect_get_cap_flags(nullptr, H5VL_NATIVE, cap_flags);
    if (rc >= 0) *cap_flags |= kConnectorClass.cap_flags;
    return rc;
  });
}

herr_t opt_query(void* obj, H5VL_subclass_t cls, int opt_type, uint64_t* flags) noexcept {
  return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, "opt_query", -1, [&]() -> herr_t {
    if (own_operation(cls, opt_type) != OwnOperation::none) {
      *flags = H5VL_OPT_QUERY_SUPPORTED | H5VL_OPT_QUERY_QUERY_METADATA;
      return 0;
    }
    const Object* o = as_object(obj);
    return H5VLintrospect_opt_query(o->under, o->under_vol_id, cls, opt_type, flags);
  });
}

}  // namespace h5sparse::vol
