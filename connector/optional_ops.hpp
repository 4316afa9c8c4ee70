// The connector's own optional operations, registered with HDF5 under reverse-DNS-style names
// in `init` and found by clients with H5VLfind_opt_operation. The names are public API.
#pragma once

#include <H5VLconnector.h>

namespace h5sparse::vol {

/// File operation: copies the connector's name and version ("h5sparse 0.1.0") into a
/// caller buffer; arguments are H5SparseVersionArgs (see include/h5sparse_vol.h).
constexpr const char* kOpConnectorVersion = "h5sparse.connector_version";

/// Dataset operation: the defined elements among a selection (H5SparseGetDefinedArgs).
constexpr const char* kOpGetDefined = "h5sparse.get_defined";
/// Dataset operation: makes the selected elements undefined (H5SparseEraseArgs).
constexpr const char* kOpErase = "h5sparse.erase";

/// Dataset operations of coordinate I/O (H5SparseWriteCooArgs, H5SparseEraseCooArgs,
/// H5SparseIterateCooArgs in include/h5sparse_vol.h).
constexpr const char* kOpWriteCoo = "h5sparse.write_coo";
constexpr const char* kOpEraseCoo = "h5sparse.erase_coo";
constexpr const char* kOpIterateCoo = "h5sparse.iterate_coo";

/// Dataset operations of direct structured-chunk I/O (RFC H5D*_struct_chunk*; arguments
/// H5SparseWriteStructChunkArgs, ... in include/h5sparse_vol.h).
constexpr const char* kOpWriteStructChunk = "h5sparse.write_struct_chunk";
constexpr const char* kOpReadStructChunk = "h5sparse.read_struct_chunk";
constexpr const char* kOpGetStructChunkInfo = "h5sparse.get_struct_chunk_info";
constexpr const char* kOpGetStructChunkInfoByCoord = "h5sparse.get_struct_chunk_info_by_coord";
constexpr const char* kOpStructChunkIter = "h5sparse.struct_chunk_iter";

enum class OwnOperation {
  none,
  connector_version,
  get_defined,
  erase,
  write_struct_chunk,
  read_struct_chunk,
  get_struct_chunk_info,
  get_struct_chunk_info_by_coord,
  struct_chunk_iter,
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

/// File optional callback: serves our operations, forwards the rest.
herr_t file_optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl_id, void** req) noexcept;

}  // namespace h5sparse::vol
