// The connector's info: which connector sits below and that connector's own info. Written as
// "under_vol=<value>;under_info={<under info string>}", as HDF5's pass-through connector does,
// so HDF5_VOL_CONNECTOR="h5sparse under_vol=0;under_info={}" stacks us on the native connector.
#pragma once

#include <hdf5.h>

#include "handle.hpp"

namespace h5sparse::vol {

/// Holds a reference on `under_vol_id`.
struct Info {
  hid_t under_vol_id;
  void* under_vol_info;
  /// The connector below is the native one (names_native_connector, asked when the info was
  /// parsed; copies keep the answer).
  bool native;
};

void* info_copy(const void* info) noexcept;
herr_t info_cmp(int* cmp_value, const void* info1, const void* info2) noexcept;
herr_t info_free(void* info) noexcept;
herr_t info_to_str(const void* info, char** str) noexcept;
herr_t str_to_info(const char* str, void** info) noexcept;

/// A copy of `fapl` whose VOL is the connector below (native when `info` is null).
hdf5::Handle under_fapl(hid_t fapl, const Info* info);

/// The Info stored in a FAPL for our connector (null if none); free with info_free.
Info* info_from_fapl(hid_t fapl);

}  // namespace h5sparse::vol
