// Mechanical forwarding: turns an H5VL<class>_<op> passthrough function of HDF5 into the
// callback our class table needs. The HDF5 functions take the connector id either right after
// the object (ForwardIdAt1) or after the object's second argument, a loc_params or an object
// type (ForwardIdAt2); the callback is the same signature without that id. An asynchronous
// request returned through a trailing `void** req` is wrapped on the way out.
#pragma once

#include <tuple>
#include <type_traits>

#include "error_stack.hpp"
#include "object.hpp"

namespace h5sparse::vol {

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
      const hid_t under_vol_id = as_object(obj)->under_vol_id;
      const herr_t result = Under(as_object(obj)->under, under_vol_id, args...);
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
      const hid_t under_vol_id = as_object(obj)->under_vol_id;  // see ForwardIdAt1
      const herr_t result = Under(as_object(obj)->under, second, under_vol_id, args...);
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
      const herr_t result = Under(o->under, o->under_vol_id, args...);
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
      void* under = Under(o->under, loc, o->under_vol_id, args...);
      if (under == nullptr) return nullptr;
      wrap_trailing_request(o->under_vol_id, args...);
      return wrap_under(under, o->under_vol_id);
    });
  }
};

}  // namespace h5sparse::vol
