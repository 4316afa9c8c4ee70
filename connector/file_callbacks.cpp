// File callbacks written by hand: create/open swap our FAPL for one naming the connector
// below; is_accessible/delete, which HDF5 calls without an open file, do the same; reopen
// wraps the new file; optional serves our operation "h5sparse.connector_version".
#include <H5VLconnector_passthru.h>

#include <cstring>
#include <string>

#include "callbacks.hpp"
#include "close_release.hpp"
#include "error_stack.hpp"
#include "forward.hpp"
#include "h5sparse_vol.h"
#include "info.hpp"
#include "object.hpp"
#include "optional_ops.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::call_guarded;
using hdf5::Origin;

// Owns the info read from our FAPL and, once asked for, the copy of the FAPL that names the
// connector below (what the H5VL passthrough API needs) for the length of one call. It ends
// after a failed open too: HDF5's records (file not found, ...) survive (Handle and info_free
// keep them).
struct UnderAccess {
  Info* info;
  hid_t our_fapl;
  hdf5::Handle fapl;
  explicit UnderAccess(hid_t fapl_id) : info(info_from_fapl(fapl_id)), our_fapl(fapl_id) {}
  ~UnderAccess() {
    fapl.reset();
    if (info) info_free(info);
  }
  hid_t under_vol_id() const { return info ? info->under_vol_id : H5VL_NATIVE; }
  hid_t under_access() {
    if (!fapl.valid()) fapl = under_fapl(our_fapl, info);
    return fapl.get();
  }
  /// Whether the connector below is the native one (asked when the info was made).
  bool under_native() const { return info ? info->native : true; }
  UnderAccess(const UnderAccess&) = delete;
  UnderAccess& operator=(const UnderAccess&) = delete;
};

// A native connector below whose class table is known opens and creates files from our FAPL
// as it is: it never reads the FAPL's connector property (HDF5 takes the file's connector from
// the API context), and the FAPL copy naming it that H5VLfile_open/create need made a file
// open/close pair cost more than the 5% a bypass must buy (docs/DESIGN.md, "Performance notes").
const H5VL_class_t* direct_native_class(const UnderAccess& access) noexcept {
  return access.under_native() ? known_native_class() : nullptr;
}

}  // namespace

void* file_create(const char* name, unsigned flags, hid_t fcpl_id, hid_t fapl_id, hid_t dxpl_id,
                  void** req) noexcept {
  return call_guarded<void*>(Origin::connector, "file_create", nullptr, [&]() -> void* {
    UnderAccess access(fapl_id);
    const H5VL_class_t* native = direct_native_class(access);
    void* under = native ? native->file_cls.create(name, flags, fcpl_id, fapl_id, dxpl_id, req)
                         : H5VLfile_create(name, flags, fcpl_id, access.under_access(), dxpl_id, req);
    if (under == nullptr) return nullptr;
    hdf5::release_kept_memory_at_close();  // reads and writes keep buffers between calls
    wrap_request(req, access.under_vol_id());
    return wrap_under(under, access.under_vol_id(), access.under_native());
  });
}

void* file_open(const char* name, unsigned flags, hid_t fapl_id, hid_t dxpl_id, void** req) noexcept {
  return call_guarded<void*>(Origin::connector, "file_open", nullptr, [&]() -> void* {
    UnderAccess access(fapl_id);
    const H5VL_class_t* native = direct_native_class(access);
    void* under = native ? native->file_cls.open(name, flags, fapl_id, dxpl_id, req)
                         : H5VLfile_open(name, flags, access.under_access(), dxpl_id, req);
    if (under == nullptr) return nullptr;
    hdf5::release_kept_memory_at_close();  // reads and writes keep buffers between calls
    wrap_request(req, access.under_vol_id());
    return wrap_under(under, access.under_vol_id(), access.under_native());
  });
}

// HDF5 2.x's command-line tools (h5dump, h5ls, ...) call H5VLfile_get with the native file
// object and our connector ID: fail on an object that is not ours, as HDF5's own pass_through
// connector does (its tools then go on without the answer), never hand the layer below a field
// of a foreign object.
herr_t file_get(void* obj, H5VL_file_get_args_t* args, hid_t dxpl_id, void** req) noexcept {
  if (!is_our_object(obj)) {
    hdf5::push_error(Origin::connector, ErrorCode::invalid_argument, "file_get",
                     "the file object is not an h5sparse connector object");
    return -1;
  }
  return ForwardIdAt1<H5VLfile_get>::call(obj, args, dxpl_id, req);
}

herr_t file_specific(void* obj, H5VL_file_specific_args_t* args, hid_t dxpl_id, void** req) noexcept {
  return call_guarded<herr_t>(Origin::connector, "file_specific", -1, [&]() -> herr_t {
    if (args->op_type == H5VL_FILE_IS_ACCESSIBLE || args->op_type == H5VL_FILE_DELETE) {
      const bool probe = args->op_type == H5VL_FILE_IS_ACCESSIBLE;
      const hid_t our_fapl = probe ? args->args.is_accessible.fapl_id : args->args.del.fapl_id;
      // HDF5 probes VOL plugins while it handles a failed open: keep its records intact.
      Info* info = nullptr;
      hdf5::preserving_error_stack([&] {
        try {
          info = info_from_fapl(our_fapl);
        } catch (...) {
          info = nullptr;
        }
      });
      if (info == nullptr && probe) {
        // HDF5 probes every VOL plugin with no info when an open fails: not ours to claim.
        *args->args.is_accessible.accessible = false;
        return 0;
      }
      if (info) info_free(info);
      UnderAccess access(our_fapl);
      H5VL_file_specific_args_t under_args = *args;
      if (probe) under_args.args.is_accessible.fapl_id = access.under_access();
      else under_args.args.del.fapl_id = access.under_access();
      const herr_t rc = H5VLfile_specific(nullptr, access.under_vol_id(), &under_args, dxpl_id, req);
      if (rc >= 0) wrap_request(req, access.under_vol_id());
      return rc;
    }
    Object* o = as_object(obj);
    const herr_t rc = H5VLfile_specific(o->under, o->under_vol_id, args, dxpl_id, req);
    if (rc < 0) return rc;
    if (args->op_type == H5VL_FILE_REOPEN && *args->args.reopen.file != nullptr)
      *args->args.reopen.file = wrap_under(*args->args.reopen.file, *o);
    wrap_request(req, o->under_vol_id);
    return rc;
  });
}

herr_t file_optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl_id, void** req) noexcept {
  return call_guarded<herr_t>(Origin::connector, "file_optional", -1, [&]() -> herr_t {
    if (own_operation(H5VL_SUBCLS_FILE, args->op_type) == OwnOperation::connector_version) {
      auto* v = static_cast<H5SparseVersionArgs*>(args->args);
      const std::string text = std::string(H5SPARSE_VOL_NAME) + " " + H5SPARSE_VERSION_STRING;
      H5SPARSE_FAIL_IF(v == nullptr || v->buffer == nullptr || v->capacity <= text.size(), ErrorCode::invalid_argument,
              "h5sparse.connector_version: buffer too small for '" + text + "'");
      std::memcpy(v->buffer, text.c_str(), text.size() + 1);
      return 0;
    }
    return ForwardIdAt1<H5VLfile_optional>::call(obj, args, dxpl_id, req);
  });
}

}  // namespace h5sparse::vol
