// Mechanical forwarding: turns an H5VL<class>_<op> passthrough function of HDF5 into the
// callback our class table needs. The HDF5 functions take the connector id either right after
// the object (ForwardIdAt1) or after the object's second argument, a loc_params or an object
// type (ForwardIdAt2); the callback is the same signature without that id. An asynchronous
// request returned through a trailing `void** req` is wrapped on the way out.
//
// When the class table of the connector below is known (ConnectorBelow::cls), its callback is
// called directly: that is all the H5VL function does after taking the library lock again and
// looking the connector ID up, and it is what HDF5 does itself for the top connector.
#pragma once

#include <H5VLconnector_passthru.h>

#include <tuple>
#include <type_traits>

#include "error_stack.hpp"
#include "object.hpp"

namespace h5sparse::vol {

/// The class callback an H5VL passthrough function calls and nothing else (the functions that
/// do more, such as H5VLtoken_cmp's NULL-token rules, have no entry and always go through the
/// API).
template <auto Under>
struct ClassSlot {
  static constexpr bool direct = false;
};

#define H5SPARSE_CLASS_SLOT(function, member)                                     \
  template <>                                                                     \
  struct ClassSlot<function> {                                                    \
    static constexpr bool direct = true;                                          \
    static auto get(const H5VL_class_t& cls) noexcept { return cls.member; }      \
  };

H5SPARSE_CLASS_SLOT(H5VLattr_create, attr_cls.create)
H5SPARSE_CLASS_SLOT(H5VLattr_open, attr_cls.open)
H5SPARSE_CLASS_SLOT(H5VLattr_read, attr_cls.read)
H5SPARSE_CLASS_SLOT(H5VLattr_write, attr_cls.write)
H5SPARSE_CLASS_SLOT(H5VLattr_get, attr_cls.get)
H5SPARSE_CLASS_SLOT(H5VLattr_specific, attr_cls.specific)
H5SPARSE_CLASS_SLOT(H5VLattr_optional, attr_cls.optional)
H5SPARSE_CLASS_SLOT(H5VLattr_close, attr_cls.close)
H5SPARSE_CLASS_SLOT(H5VLdataset_read, dataset_cls.read)
H5SPARSE_CLASS_SLOT(H5VLdataset_write, dataset_cls.write)
H5SPARSE_CLASS_SLOT(H5VLdataset_get, dataset_cls.get)
H5SPARSE_CLASS_SLOT(H5VLdataset_specific, dataset_cls.specific)
H5SPARSE_CLASS_SLOT(H5VLdatatype_commit, datatype_cls.commit)
H5SPARSE_CLASS_SLOT(H5VLdatatype_open, datatype_cls.open)
H5SPARSE_CLASS_SLOT(H5VLdatatype_get, datatype_cls.get)
H5SPARSE_CLASS_SLOT(H5VLdatatype_specific, datatype_cls.specific)
H5SPARSE_CLASS_SLOT(H5VLdatatype_optional, datatype_cls.optional)
H5SPARSE_CLASS_SLOT(H5VLdatatype_close, datatype_cls.close)
H5SPARSE_CLASS_SLOT(H5VLfile_get, file_cls.get)
H5SPARSE_CLASS_SLOT(H5VLfile_close, file_cls.close)
H5SPARSE_CLASS_SLOT(H5VLgroup_create, group_cls.create)
H5SPARSE_CLASS_SLOT(H5VLgroup_open, group_cls.open)
H5SPARSE_CLASS_SLOT(H5VLgroup_get, group_cls.get)
H5SPARSE_CLASS_SLOT(H5VLgroup_optional, group_cls.optional)
H5SPARSE_CLASS_SLOT(H5VLgroup_close, group_cls.close)
H5SPARSE_CLASS_SLOT(H5VLlink_get, link_cls.get)
H5SPARSE_CLASS_SLOT(H5VLlink_specific, link_cls.specific)
H5SPARSE_CLASS_SLOT(H5VLlink_optional, link_cls.optional)
H5SPARSE_CLASS_SLOT(H5VLobject_get, object_cls.get)
H5SPARSE_CLASS_SLOT(H5VLobject_specific, object_cls.specific)
H5SPARSE_CLASS_SLOT(H5VLobject_optional, object_cls.optional)

#undef H5SPARSE_CLASS_SLOT

/// Calls `Under`'s class callback of the connector below directly when known, else `Under`
/// itself; `direct(callback)` and `via_api()` place the arguments.
template <auto Under, typename Direct, typename ViaApi>
decltype(auto) call_below(const ConnectorBelow& below, Direct&& direct, ViaApi&& via_api) {
  if constexpr (ClassSlot<Under>::direct) {
    if (below.cls != nullptr) {
      if (const auto callback = ClassSlot<Under>::get(*below.cls)) return direct(callback);
    }
  }
  return via_api();
}

template <typename... Args>
void wrap_trailing_request(hid_t under_vol_id, Args... args) {
  if constexpr (sizeof...(Args) > 0) {
    using Last = std::tuple_element_t<sizeof...(Args) - 1, std::tuple<Args...>>;
    if constexpr (std::is_same_v<Last, void**>)
      wrap_request(std::get<sizeof...(Args) - 1>(std::tuple<Args...>(args...)), under_vol_id);
  }
}

template <auto Under, typename Signature = decltype(Under)>
struct ForwardIdAt1;

template <auto Under, typename... Args>
struct ForwardIdAt1<Under, herr_t (*)(void*, hid_t, Args...)> {
  static herr_t call(void* obj, Args... args) noexcept {
    return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, "forward", -1, [&] {
      // Copied first: a refresh (H5Drefresh, H5Grefresh, H5Orefresh...) closes and frees `obj`.
      Object* o = as_object(obj);
      void* under = o->under;
      const hid_t under_vol_id = o->under_vol_id;
      const herr_t result = call_below<Under>(
          *o->below, [&](auto callback) { return callback(under, args...); },
          [&] { return Under(under, under_vol_id, args...); });
      if (result >= 0) wrap_trailing_request(under_vol_id, args...);
      return result;
    });
  }
};

template <auto Under, typename Signature = decltype(Under)>
struct ForwardIdAt2;

template <auto Under, typename Second, typename... Args>
struct ForwardIdAt2<Under, herr_t (*)(void*, Second, hid_t, Args...)> {
  static herr_t call(void* obj, Second second, Args... args) noexcept {
    return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, "forward", -1, [&] {
      Object* o = as_object(obj);  // see ForwardIdAt1
      void* under = o->under;
      const hid_t under_vol_id = o->under_vol_id;
      const herr_t result = call_below<Under>(
          *o->below, [&](auto callback) { return callback(under, second, args...); },
          [&] { return Under(under, second, under_vol_id, args...); });
      if (result >= 0) wrap_trailing_request(under_vol_id, args...);
      return result;
    });
  }
};

/// Forwards an operation that ends the object's life (close, request free): frees the wrapper
/// after the object below accepted it.
template <auto Under, typename Signature = decltype(Under)>
struct ForwardClose;

template <auto Under, typename... Args>
struct ForwardClose<Under, herr_t (*)(void*, hid_t, Args...)> {
  static herr_t call(void* obj, Args... args) noexcept {
    return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, "close", -1, [&] {
      Object* o = as_object(obj);
      const herr_t result = call_below<Under>(
          *o->below, [&](auto callback) { return callback(o->under, args...); },
          [&] { return Under(o->under, o->under_vol_id, args...); });
      if (result >= 0) {
        wrap_trailing_request(o->under_vol_id, args...);
        free_wrapper(o);
      }
      return result;
    });
  }
};

/// Forwards an operation that creates or opens an object: wraps what the connector below returns.
template <auto Under, typename Signature = decltype(Under)>
struct ForwardOpen;

template <auto Under, typename Loc, typename... Args>
struct ForwardOpen<Under, void* (*)(void*, Loc, hid_t, Args...)> {
  static void* call(void* obj, Loc loc, Args... args) noexcept {
    return hdf5::call_guarded<void*>(hdf5::Origin::connector, "open", nullptr, [&]() -> void* {
      Object* o = as_object(obj);
      void* under = call_below<Under>(
          *o->below, [&](auto callback) { return callback(o->under, loc, args...); },
          [&] { return Under(o->under, loc, o->under_vol_id, args...); });
      if (under == nullptr) return nullptr;
      wrap_trailing_request(o->under_vol_id, args...);
      return wrap_under(under, *o->below);
    });
  }
};

}  // namespace h5sparse::vol
