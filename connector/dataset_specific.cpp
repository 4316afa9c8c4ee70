// The dataset "specific" callback: H5Dset_extent (and H5Dextend) on a sparse dataset takes the
// sparse path (sparse_extent.cpp); everything else, and every dense dataset, is forwarded.
#include <H5VLconnector_passthru.h>

#include "callbacks.hpp"
#include "error_stack.hpp"
#include "forward.hpp"
#include "object.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {

herr_t dataset_specific(void* obj, H5VL_dataset_specific_args_t* args, hid_t dxpl_id, void** req) noexcept {
  Object* o = as_object(obj);
  if (args->op_type != H5VL_DATASET_SET_EXTENT || !o->sparse)
    return ForwardIdAt1<H5VLdataset_specific>::call(obj, args, dxpl_id, req);
  // Done synchronously: the chunks around the native call must be read and written in order
  // (a request left unset tells HDF5 the operation is complete).
  return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, "dataset_set_extent", -1, [&]() -> herr_t {
    o->sparse->set_extent(args->args.set_extent.size, dxpl_id);
    return 0;
  });
}

}  // namespace h5sparse::vol
