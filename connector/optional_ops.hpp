// The connector's own optional operations, registered with HDF5 under reverse-DNS-style names
// in `init` and found by clients with H5VLfind_opt_operation. The names are public API; the
// arguments of each are a struct of include/h5sparse_vol.h.
#pragma once

#include <H5VLconnector.h>

namespace h5sparse::vol {

/// Our operations, each registered as "h5sparse.<its name>" (optional_ops.cpp).
enum class OwnOperation {
  none,
  connector_version,  ///< file: the connector's name and version ("h5sparse 0.1.0") into a caller buffer
  get_defined,        ///< dataset: the defined elements among a selection
  erase,              ///< dataset: makes the selected elements undefined
  // Dataset operations of direct structured-chunk I/O (RFC H5D*_struct_chunk*).
  write_struct_chunk,
  read_struct_chunk,
  get_struct_chunk_info,
  get_struct_chunk_info_by_coord,
  struct_chunk_iter,
  // Dataset operations of coordinate I/O.
  write_coo,
  erase_coo,
  iterate_coo,
};

/// Which of our operations (subclass, value) is, or none.
OwnOperation own_operation(H5VL_subclass_t cls, int opt_type) noexcept;

/// Registers (or finds, when already registered) every operation; idempotent.
herr_t register_operations() noexcept;
/// Unregisters what register_operations registered.
herr_t unregister_operations() noexcept;

}  // namespace h5sparse::vol
