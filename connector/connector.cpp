// The class table of the h5sparse VOL connector and its plugin entry points. Most slots are
// mechanical forwards to the connector below (forward.hpp); the hand-written callbacks are
// declared in callbacks.hpp.
#include <H5PLextern.h>
#include <H5VLconnector_passthru.h>

#include "callbacks.hpp"
#include "forward.hpp"
#include "h5sparse_vol.h"
#include "info.hpp"
#include "optional_ops.hpp"
#include "plugin_entry.hpp"

// HDF5 1.14 and 2.x share version 3 of the class table and the callback signatures; a new
// version must be read before this table is trusted with it.
static_assert(H5VL_VERSION == 3, "the VOL class table below is version 3 (HDF5 1.14 and 2.x)");

namespace h5sparse::vol {
namespace {

// HDF5 also loads and initializes the plugin when it merely probes the plugin path after a
// failed open: keep this cheap, idempotent, and off the error stack HDF5 is about to report.
herr_t initialize(hid_t /*vipl_id*/) noexcept {
  herr_t rc = 0;
  hdf5::preserving_error_stack([&rc] { rc = register_operations(); });
  return rc;
}

herr_t terminate() noexcept {
  herr_t rc = 0;
  hdf5::preserving_error_stack([&rc] { rc = unregister_operations(); });
  return rc;
}

}  // namespace

extern const H5VL_class_t kConnectorClass = {
    H5VL_VERSION,                              // class struct version
    H5SPARSE_VOL_VALUE,                        // value
    H5SPARSE_VOL_NAME,                         // name
    0,                                         // connector version
    H5VL_CAP_FLAG_NONE,                        // our own capability flags (the layer below adds its own)
    initialize,
    terminate,
    {
        // info
        sizeof(Info), info_copy, info_cmp, info_free, info_to_str, str_to_info,
    },
    {
        // wrap
        get_object, get_wrap_ctx, wrap_object, unwrap_object, free_wrap_ctx,
    },
    {
        // attribute
        ForwardOpen<H5VLattr_create>::call,
        ForwardOpen<H5VLattr_open>::call,
        ForwardIdAt1<H5VLattr_read>::call,
        ForwardIdAt1<H5VLattr_write>::call,
        ForwardIdAt1<H5VLattr_get>::call,
        ForwardIdAt2<H5VLattr_specific>::call,
        ForwardIdAt1<H5VLattr_optional>::call,
        ForwardClose<H5VLattr_close>::call,
    },
    {
        // dataset
        dataset_create,
        dataset_open,
        dataset_read,
        dataset_write,
        dataset_get,
        dataset_specific,
        dataset_optional,
        ForwardClose<H5VLdataset_close>::call,
    },
    {
        // datatype
        ForwardOpen<H5VLdatatype_commit>::call,
        ForwardOpen<H5VLdatatype_open>::call,
        ForwardIdAt1<H5VLdatatype_get>::call,
        ForwardIdAt1<H5VLdatatype_specific>::call,
        ForwardIdAt1<H5VLdatatype_optional>::call,
        ForwardClose<H5VLdatatype_close>::call,
    },
    {
        // file
        file_create,
        file_open,
        file_get,
        file_specific,
        file_optional,
        ForwardClose<H5VLfile_close>::call,
    },
    {
        // group
        ForwardOpen<H5VLgroup_create>::call,
        ForwardOpen<H5VLgroup_open>::call,
        ForwardIdAt1<H5VLgroup_get>::call,
        group_specific,
        ForwardIdAt1<H5VLgroup_optional>::call,
        ForwardClose<H5VLgroup_close>::call,
    },
    {
        // link
        link_create,
        link_copy,
        link_move,
        ForwardIdAt2<H5VLlink_get>::call,
        ForwardIdAt2<H5VLlink_specific>::call,
        ForwardIdAt2<H5VLlink_optional>::call,
    },
    {
        // object
        object_open,
        object_copy,
        ForwardIdAt2<H5VLobject_get>::call,
        ForwardIdAt2<H5VLobject_specific>::call,
        ForwardIdAt2<H5VLobject_optional>::call,
    },
    {
        // introspection
        get_conn_cls, get_cap_flags, opt_query,
    },
    {
        // request
        ForwardIdAt1<H5VLrequest_wait>::call,
        ForwardIdAt1<H5VLrequest_notify>::call,
        ForwardIdAt1<H5VLrequest_cancel>::call,
        ForwardIdAt1<H5VLrequest_specific>::call,
        ForwardIdAt1<H5VLrequest_optional>::call,
        ForwardClose<H5VLrequest_free>::call,
    },
    {
        // blob
        ForwardIdAt1<H5VLblob_put>::call,
        ForwardIdAt1<H5VLblob_get>::call,
        ForwardIdAt1<H5VLblob_specific>::call,
        ForwardIdAt1<H5VLblob_optional>::call,
    },
    {
        // token
        ForwardIdAt1<H5VLtoken_cmp>::call,
        ForwardIdAt2<H5VLtoken_to_str>::call,
        ForwardIdAt2<H5VLtoken_from_str>::call,
    },
    ForwardIdAt1<H5VLoptional>::call,  // generic optional
};

}  // namespace h5sparse::vol

H5SPARSE_PLUGIN_ENTRY(vol, H5PL_TYPE_VOL, "VOL connector", &h5sparse::vol::kConnectorClass)
