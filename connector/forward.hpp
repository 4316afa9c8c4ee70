// Mechanical forwarding, as HDF5's H5VLpassthru.c does it: turns an H5VL<class>_<op>
// passthrough function of HDF5 into the callback our class table needs, calling it with the
// wrapper's `under` object and `under_vol_id`. The HDF5 functions take the connector id either
// right after the object (ForwardIdAt1) or after the object's second argument, a loc_params or
// an object type (ForwardIdAt2); the callback is the same signature without that id. An
// asynchronous request returned through a trailing `void** req` is wrapped on the way out.
#pragma once

#include <H5VLconnector_passthru.h>

#include <tuple>
#include <type_traits>

#include "error_stack.hpp"
#include "object.hpp"

namespace h5sparse::vol {

/// The class callback an H5VL passthrough function calls and nothing else, for the forwards
/// that the metadata benchmark runs per object. For a native connector below (Below::cls) they
/// call it directly: in a thread-safe HDF5 each H5VL function is one more locked API call and
/// ID lookup, which on metadata cost more than the 5% a bypass must buy (docs/DESIGN.md,
/// "Performance notes"); it is what HDF5 itself does for the top connector.
template <auto Under>
struct ClassSlot {
  static constexpr bool direct = false;
};

#define H5SPARSE_CLASS_SLOT(function, member)                                \
  template <>                                                                \
  struct ClassSlot<function> {                                               \
    static constexpr bool direct = true;                                     \
    static auto get(const H5VL_class_t& cls) noexcept { return cls.member; } \
  };

H5SPARSE_CLASS_SLOT(H5VLattr_create, attr_cls.create)
H5SPARSE_CLASS_SLOT(H5VLattr_open, attr_cls.open)
H5SPARSE_CLASS_SLOT(H5VLattr_read, attr_cls.read)
H5SPARSE_CLASS_SLOT(H5VLattr_write, attr_cls.write)
H5SPARSE_CLASS_SLOT(H5VLattr_close, attr_cls.close)
H5SPARSE_CLASS_SLOT(H5VLgroup_create, group_cls.create)
H5SPARSE_CLASS_SLOT(H5VLgroup_open, group_cls.open)
H5SPARSE_CLASS_SLOT(H5VLgroup_close, group_cls.close)
H5SPARSE_CLASS_SLOT(H5VLlink_specific, link_cls.specific)
H5SPARSE_CLASS_SLOT(H5VLobject_get, object_cls.get)
H5SPARSE_CLASS_SLOT(H5VLfile_close, file_cls.close)

#undef H5SPARSE_CLASS_SLOT

/// `direct(callback)` with `Under`'s class callback when the connector below is native and
/// `Under` has a ClassSlot, else `api()` (the H5VL function).
template <auto Under, typename Direct, typename Api>
inline auto call_below(const Below& below, Direct&& direct, Api&& api) {
  if constexpr (ClassSlot<Under>::direct) {
    if (below.cls != nullptr) {
      if (const auto callback = ClassSlot<Under>::get(*below.cls)) return direct(callback);
    }
  }
  return api();
}

/// The trailing `void** req` of an operation's arguments, or nullptr when it has none.
template <typename... Args>
inline void** trailing_request(Args... args) noexcept {
  if constexpr (sizeof...(Args) > 0) {
    using Last = std::tuple_element_t<sizeof...(Args) - 1, std::tuple<Args...>>;
    if constexpr (std::is_same_v<Last, void**>) return std::get<sizeof...(Args) - 1>(std::tuple<Args...>(args...));
  }
  return nullptr;
}

/// After a successful operation: wraps the request it started, if any (-1, reported, when that
/// fails).
template <typename... Args>
herr_t wrap_trailing_request(hid_t under_vol_id, const char* function, Args... args) noexcept {
  return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, function, -1, [&] {
    wrap_request(trailing_request(args...), under_vol_id);
    return herr_t(0);
  });
}

// The forwards run no code of ours that can throw (a failed allocation or request wrap is
// reported where it happens), so they need no exception guard.

/// ForwardIdAt1 and ForwardIdAt2: the connector id goes after the `Lead` arguments.
template <auto Under, typename Lead, typename Rest>
struct Forward;

template <auto Under, typename... Lead, typename... Args>
struct Forward<Under, std::tuple<Lead...>, std::tuple<Args...>> {
  static herr_t call(void* obj, Lead... lead, Args... args) noexcept {
    // Copied first: a refresh (H5Drefresh, H5Grefresh, H5Orefresh...) closes and frees `obj`.
    const Object* o = as_object(obj);
    void* const under = o->under;
    const hid_t under_vol_id = o->under_vol_id;
    const herr_t result = call_below<Under>(
        *o->below, [&](auto callback) { return callback(under, lead..., args...); },
        [&] { return Under(under, lead..., under_vol_id, args...); });
    if (result < 0) return result;  // an iteration's callback value too, as HDF5 reports it
    if (wrap_trailing_request(under_vol_id, "forward", args...) < 0) return -1;
    return result;  // an iteration's positive short-circuit value included
  }
};

template <auto Under, typename Signature = decltype(Under)>
struct ForwardIdAt1;

template <auto Under, typename... Args>
struct ForwardIdAt1<Under, herr_t (*)(void*, hid_t, Args...)> : Forward<Under, std::tuple<>, std::tuple<Args...>> {};

template <auto Under, typename Signature = decltype(Under)>
struct ForwardIdAt2;

template <auto Under, typename Second, typename... Args>
struct ForwardIdAt2<Under, herr_t (*)(void*, Second, hid_t, Args...)>
    : Forward<Under, std::tuple<Second>, std::tuple<Args...>> {};

/// Forwards an operation that ends the object's life (close, request free): frees the wrapper
/// after the object below accepted it.
template <auto Under, typename Signature = decltype(Under)>
struct ForwardClose;

template <auto Under, typename... Args>
struct ForwardClose<Under, herr_t (*)(void*, hid_t, Args...)> {
  static herr_t call(void* obj, Args... args) noexcept {
    Object* o = as_object(obj);
    const herr_t result = call_below<Under>(
        *o->below, [&](auto callback) { return callback(o->under, args...); },
        [&] { return Under(o->under, o->under_vol_id, args...); });
    if (result < 0 || wrap_trailing_request(o->under_vol_id, "close", args...) < 0) return -1;
    free_wrapper(o);
    return result;
  }
};

/// Forwards an operation that creates or opens an object: wraps what the connector below returns.
template <auto Under, typename Signature = decltype(Under)>
struct ForwardOpen;

template <auto Under, typename Loc, typename... Args>
struct ForwardOpen<Under, void* (*)(void*, Loc, hid_t, Args...)> {
  static void* call(void* obj, Loc loc, Args... args) noexcept {
    const Object* o = as_object(obj);
    void* under = call_below<Under>(
        *o->below, [&](auto callback) { return callback(o->under, loc, args...); },
        [&] { return Under(o->under, loc, o->under_vol_id, args...); });
    if (under == nullptr || wrap_trailing_request(o->under_vol_id, "open", args...) < 0) return nullptr;
    if (Object* object = new_wrapper(under, *o->below)) return object;
    hdf5::push_error(hdf5::Origin::connector, ErrorCode::out_of_memory, "open", "cannot allocate the object's wrapper");
    return nullptr;
  }
};

}  // namespace h5sparse::vol
