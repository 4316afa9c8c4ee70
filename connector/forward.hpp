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
H5SPARSE_CLASS_SLOT(H5VLfile_optional, file_cls.optional)
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
H5SPARSE_CLASS_SLOT(H5VLintrospect_opt_query, introspect_cls.opt_query)
H5SPARSE_CLASS_SLOT(H5VLblob_put, blob_cls.put)
H5SPARSE_CLASS_SLOT(H5VLblob_get, blob_cls.get)
H5SPARSE_CLASS_SLOT(H5VLblob_specific, blob_cls.specific)
H5SPARSE_CLASS_SLOT(H5VLblob_optional, blob_cls.optional)

#undef H5SPARSE_CLASS_SLOT

/// The class callback of the connector below (class table `cls`) that `Under` would call, or
/// nullptr: the class is unknown, or `Under` does more than call it (no ClassSlot).
template <auto Under, typename Callback>
[[gnu::always_inline]] inline Callback class_callback(const H5VL_class_t* cls) noexcept {
  if constexpr (ClassSlot<Under>::direct) {
    if (__builtin_expect(cls != nullptr, 1)) return ClassSlot<Under>::get(*cls);
  }
  return nullptr;
}

/// Calls `Under`'s class callback of the connector below (class table `cls`) directly when
/// known, else `Under` itself; `direct(callback)` and `via_api()` place the arguments.
template <auto Under, typename Direct, typename ViaApi>
[[gnu::always_inline]] inline decltype(auto) call_below(const H5VL_class_t* cls, Direct&& direct, ViaApi&& via_api) {
  if constexpr (ClassSlot<Under>::direct) {
    if (__builtin_expect(cls != nullptr, 1)) {
      if (const auto callback = ClassSlot<Under>::get(*cls)) return direct(callback);
    }
  }
  return via_api();
}

/// The trailing `void** req` of an operation's arguments, or nullptr when it has none.
template <typename... Args>
[[gnu::always_inline]] inline void** trailing_request(Args... args) noexcept {
  if constexpr (sizeof...(Args) > 0) {
    using Last = std::tuple_element_t<sizeof...(Args) - 1, std::tuple<Args...>>;
    if constexpr (std::is_same_v<Last, void**>) return std::get<sizeof...(Args) - 1>(std::tuple<Args...>(args...));
  }
  return nullptr;
}

/// Wraps the request an operation below started; -1 (reported) when that fails. Out of line
/// and cold: only an asynchronous connector below starts requests.
[[gnu::cold, gnu::noinline]] inline herr_t wrap_started_request_reporting(void** req, hid_t under_vol_id,
                                                                         const char* function) noexcept {
  return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, function, -1, [&] {
    wrap_started_request(req, under_vol_id);
    return herr_t(0);
  });
}

/// After a successful operation: wraps the request it started, if any (-1 when that fails).
template <typename... Args>
[[gnu::always_inline]] inline herr_t wrap_trailing_request(hid_t under_vol_id, const char* function,
                                                           Args... args) noexcept {
  void** req = trailing_request(args...);
  if (__builtin_expect(req != nullptr && *req != nullptr, 0))
    return wrap_started_request_reporting(req, under_vol_id, function);
  return 0;
}

/// Reports a wrapper that could not be allocated. Cold: only when out of memory.
[[gnu::cold, gnu::noinline]] inline void* report_no_wrapper(const char* function) noexcept {
  hdf5::push_error(hdf5::Origin::connector, ErrorCode::out_of_memory, function, "cannot allocate the object's wrapper");
  return nullptr;
}

// What a forward costs is mostly the instruction-cache lines it touches (HDF5's own code
// between two callbacks evicts them), so each forward is laid out as one short straight path
// for the usual case (class table known, no asynchronous request) and everything else is out
// of line and cold (`via_api`, request wrapping, allocation failure): GCC moves those to
// .text.unlikely. The forwards run no code of ours that can throw (a failed allocation or
// request wrap is reported where it happens), so they need no exception guard. A forward that
// has nothing to do after the operation ends in a tail call of the connector below: a few
// loads and a jump, and nothing of ours to return into. Those `call`s are therefore not
// noexcept (which would keep a frame for std::terminate): what the connector below does is
// passed on exactly as if HDF5 had called it.

template <auto Under, typename Signature = decltype(Under)>
struct ForwardIdAt1;

template <auto Under, typename... Args>
struct ForwardIdAt1<Under, herr_t (*)(void*, hid_t, Args...)> {
  using Callback = herr_t (*)(void*, Args...);

  [[gnu::aligned(64)]] static herr_t call(void* obj, Args... args) {
    if (__builtin_expect(trailing_request(args...) != nullptr, 0)) return forward_with_request(obj, args...);
    const Object* o = as_object(obj);
    if constexpr (!ClassSlot<Under>::direct) return Under(o->under, o->under_vol_id, args...);  // its only way
    if (const Callback callback = class_callback<Under, Callback>(o->cls)) return callback(o->under, args...);
    return via_api(o->under, o->under_vol_id, args...);
  }

 private:
  [[gnu::cold, gnu::noinline]] static herr_t via_api(void* under, hid_t under_vol_id, Args... args) {
    return Under(under, under_vol_id, args...);
  }
  [[gnu::cold, gnu::noinline]] static herr_t forward_with_request(void* obj, Args... args) noexcept {
    // Copied first: a refresh (H5Drefresh, H5Grefresh, H5Orefresh...) closes and frees `obj`.
    const Object* o = as_object(obj);
    void* const under = o->under;
    const hid_t under_vol_id = o->under_vol_id;
    const Callback callback = class_callback<Under, Callback>(o->cls);
    const herr_t result = callback ? callback(under, args...) : Under(under, under_vol_id, args...);
    if (result < 0) return result;
    return wrap_trailing_request(under_vol_id, "forward", args...);
  }
};

template <auto Under, typename Signature = decltype(Under)>
struct ForwardIdAt2;

template <auto Under, typename Second, typename... Args>
struct ForwardIdAt2<Under, herr_t (*)(void*, Second, hid_t, Args...)> {
  using Callback = herr_t (*)(void*, Second, Args...);

  [[gnu::aligned(64)]] static herr_t call(void* obj, Second second, Args... args) {
    if (__builtin_expect(trailing_request(args...) != nullptr, 0))
      return forward_with_request(obj, second, args...);
    const Object* o = as_object(obj);
    if constexpr (!ClassSlot<Under>::direct) return Under(o->under, second, o->under_vol_id, args...);  // its only way
    if (const Callback callback = class_callback<Under, Callback>(o->cls)) return callback(o->under, second, args...);
    return via_api(o->under, second, o->under_vol_id, args...);
  }

 private:
  [[gnu::cold, gnu::noinline]] static herr_t via_api(void* under, Second second, hid_t under_vol_id, Args... args) {
    return Under(under, second, under_vol_id, args...);
  }
  [[gnu::cold, gnu::noinline]] static herr_t forward_with_request(void* obj, Second second, Args... args) noexcept {
    const Object* o = as_object(obj);  // see ForwardIdAt1
    void* const under = o->under;
    const hid_t under_vol_id = o->under_vol_id;
    const Callback callback = class_callback<Under, Callback>(o->cls);
    const herr_t result =
        callback ? callback(under, second, args...) : Under(under, second, under_vol_id, args...);
    if (result < 0) return result;
    return wrap_trailing_request(under_vol_id, "forward", args...);
  }
};

/// Forwards an operation that ends the object's life (close, request free): frees the wrapper
/// after the object below accepted it.
template <auto Under, typename Signature = decltype(Under)>
struct ForwardClose;

template <auto Under, typename... Args>
struct ForwardClose<Under, herr_t (*)(void*, hid_t, Args...)> {
  using Callback = herr_t (*)(void*, Args...);

  [[gnu::aligned(64)]] static herr_t call(void* obj, Args... args) noexcept {
    Object* o = as_object(obj);
    const Callback callback = class_callback<Under, Callback>(o->cls);
    const herr_t result = callback                         ? callback(o->under, args...)
                          : !ClassSlot<Under>::direct ? Under(o->under, o->under_vol_id, args...)  // its only way
                                                      : via_api(o->under, o->under_vol_id, args...);
    if (result < 0 || wrap_trailing_request(o->under_vol_id, "close", args...) < 0) return -1;
    free_wrapper(o);
    return result;
  }

 private:
  [[gnu::cold, gnu::noinline]] static herr_t via_api(void* under, hid_t under_vol_id, Args... args) noexcept {
    return Under(under, under_vol_id, args...);
  }
};

/// Forwards an operation that creates or opens an object: wraps what the connector below returns.
template <auto Under, typename Signature = decltype(Under)>
struct ForwardOpen;

template <auto Under, typename Loc, typename... Args>
struct ForwardOpen<Under, void* (*)(void*, Loc, hid_t, Args...)> {
  using Callback = void* (*)(void*, Loc, Args...);

  [[gnu::aligned(64)]] static void* call(void* obj, Loc loc, Args... args) noexcept {
    const Object* o = as_object(obj);
    const Callback callback = class_callback<Under, Callback>(o->cls);
    void* under = callback                    ? callback(o->under, loc, args...)
                  : !ClassSlot<Under>::direct ? Under(o->under, loc, o->under_vol_id, args...)  // its only way
                                              : via_api(o->under, loc, o->under_vol_id, args...);
    if (under == nullptr || wrap_trailing_request(o->under_vol_id, "open", args...) < 0) return nullptr;
    if (Object* object = new_wrapper(under, *o->below)) return object;
    return report_no_wrapper("open");
  }

 private:
  [[gnu::cold, gnu::noinline]] static void* via_api(void* under, Loc loc, hid_t under_vol_id, Args... args) noexcept {
    return Under(under, loc, under_vol_id, args...);
  }
};

}  // namespace h5sparse::vol
