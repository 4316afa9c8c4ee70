// RAII owner of one HDF5 identifier: closed (reference dropped) when the owner goes away,
// preserving the error stack, so cleanup on an error path never hides the first error.
#pragma once

#include <hdf5.h>

#include <utility>

#include "error_stack.hpp"

namespace h5sparse::hdf5 {

class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) noexcept : id_(id) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const noexcept { return id_; }
  bool valid() const noexcept { return id_ >= 0; }
  /// Gives up ownership (e.g. to return the id to a caller).
  hid_t release() noexcept { return std::exchange(id_, H5I_INVALID_HID); }

  void reset() noexcept {
    if (id_ < 0) return;
    preserving_error_stack([this] { H5Idec_ref(id_); });
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

/// Takes ownership of `id`, throwing (after HDF5 pushed its record) when it is invalid.
Handle checked(hid_t id, const char* what);

}  // namespace h5sparse::hdf5
