// Dataset I/O: HDF5 1.14 hands a connector several datasets at once (H5Dread_multi); each
// is unwrapped to the object below. Sparse datasets will branch off here.
#include <H5VLconnector_passthru.h>

#include <vector>

#include "callbacks.hpp"
#include "error_stack.hpp"
#include "object.hpp"

namespace h5sparse::vol {
namespace {

std::vector<void*> unders(size_t count, void* dset[]) {
  std::vector<void*> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = as_object(dset[i])->under;
  return out;
}

}  // namespace

herr_t dataset_read(size_t count, void* dset[], hid_t mem_type_id[], hid_t mem_space_id[], hid_t file_space_id[],
                    hid_t dxpl_id, void* buf[], void** req) noexcept {
  return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, "dataset_read", -1, [&]() -> herr_t {
    std::vector<void*> under = unders(count, dset);
    const hid_t under_vol_id = as_object(dset[0])->under_vol_id;
    const herr_t rc = H5VLdataset_read(count, under.data(), under_vol_id, mem_type_id, mem_space_id,
                                       file_space_id, dxpl_id, buf, req);
    if (rc >= 0) wrap_request(req, under_vol_id);
    return rc;
  });
}

herr_t dataset_write(size_t count, void* dset[], hid_t mem_type_id[], hid_t mem_space_id[], hid_t file_space_id[],
                     hid_t dxpl_id, const void* buf[], void** req) noexcept {
  return hdf5::call_guarded<herr_t>(hdf5::Origin::connector, "dataset_write", -1, [&]() -> herr_t {
    std::vector<void*> under = unders(count, dset);
    const hid_t under_vol_id = as_object(dset[0])->under_vol_id;
    const herr_t rc = H5VLdataset_write(count, under.data(), under_vol_id, mem_type_id, mem_space_id,
                                        file_space_id, dxpl_id, buf, req);
    if (rc >= 0) wrap_request(req, under_vol_id);
    return rc;
  });
}

}  // namespace h5sparse::vol
