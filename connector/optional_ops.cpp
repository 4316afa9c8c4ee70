// Registry of the connector's own optional operations: their registration and lookup.
#include "optional_ops.hpp"

#include <hdf5.h>  // H5E_BEGIN_TRY

namespace h5sparse::vol {
namespace {

struct Operation {
  H5VL_subclass_t cls;
  const char* name;
  OwnOperation which;
  int value = -1;
  bool registered_by_us = false;
};

Operation operations[] = {
    {H5VL_SUBCLS_FILE, "h5sparse.connector_version", OwnOperation::connector_version},
    {H5VL_SUBCLS_DATASET, "h5sparse.get_defined", OwnOperation::get_defined},
    {H5VL_SUBCLS_DATASET, "h5sparse.erase", OwnOperation::erase},
    {H5VL_SUBCLS_DATASET, "h5sparse.write_struct_chunk", OwnOperation::write_struct_chunk},
    {H5VL_SUBCLS_DATASET, "h5sparse.read_struct_chunk", OwnOperation::read_struct_chunk},
    {H5VL_SUBCLS_DATASET, "h5sparse.get_struct_chunk_info", OwnOperation::get_struct_chunk_info},
    {H5VL_SUBCLS_DATASET, "h5sparse.get_struct_chunk_info_by_coord", OwnOperation::get_struct_chunk_info_by_coord},
    {H5VL_SUBCLS_DATASET, "h5sparse.struct_chunk_iter", OwnOperation::struct_chunk_iter},
    {H5VL_SUBCLS_DATASET, "h5sparse.write_coo", OwnOperation::write_coo},
    {H5VL_SUBCLS_DATASET, "h5sparse.erase_coo", OwnOperation::erase_coo},
    {H5VL_SUBCLS_DATASET, "h5sparse.iterate_coo", OwnOperation::iterate_coo},
};

}  // namespace

herr_t register_operations() noexcept {
  for (Operation& op : operations) {
    int value = -1;
    herr_t found = -1;
    H5E_BEGIN_TRY {  // "not found" is the normal answer on first load: no error report
      found = H5VLfind_opt_operation(op.cls, op.name, &value);
    }
    H5E_END_TRY
    if (found >= 0 && value > 0) {
      op.value = value;
      continue;
    }
    if (H5VLregister_opt_operation(op.cls, op.name, &op.value) < 0) return -1;
    op.registered_by_us = true;
  }
  return 0;
}

herr_t unregister_operations() noexcept {
  for (Operation& op : operations) {
    if (op.registered_by_us) H5VLunregister_opt_operation(op.cls, op.name);
    op.registered_by_us = false;
    op.value = -1;
  }
  return 0;
}

OwnOperation own_operation(H5VL_subclass_t cls, int opt_type) noexcept {
  for (const Operation& op : operations)
    if (op.cls == cls && op.value == opt_type && op.value > 0) return op.which;
  return OwnOperation::none;
}

}  // namespace h5sparse::vol
