// Dataset callbacks written by hand: create/open recognise sparse datasets, writes to them
// take the structured-chunk path, so does H5Dset_extent (SparseDataset::set_extent), our
// optional operations are served here. HDF5 1.14 hands a connector several datasets at once
// (H5Dwrite_multi): sparse ones are written one by one, the rest forwarded together. Sparse
// reads are decoded by the engine (core engine/sparse_read.cpp) or, where it does not apply,
// forwarded: the structured-chunk filter below expands chunks with the fill value. Every other
// dataset's transfers go below unchanged.
#include <H5VLconnector_passthru.h>

#include <optional>
#include <vector>

#include "callbacks.hpp"
#include "error_stack.hpp"
#include "forward.hpp"
#include "h5sparse_vol.h"
#include "native_dataset.hpp"
#include "object.hpp"
#include "optional_ops.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "sparse_dataset.hpp"
#include "virtual_sparse.hpp"
#include "var_values.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::call_guarded;
using hdf5::Origin;

Object* wrap_dataset(void* under, const Object& parent, hid_t dxpl_id, void** req) {
  if (under == nullptr) return nullptr;
  wrap_request(req, parent.under_vol_id);
  Object* object = wrap_under(under, parent);
  attach_sparse(object, dxpl_id);
  return object;
}

/// Get-defined of a dataset that is not sparse: a virtual dataset's from its sparse sources,
/// else every element is defined (RFC), so the answer is the selection.
hid_t dense_defined(Object* o, hid_t file_space, hid_t dxpl_id) {
  if (const auto joined = VirtualSparse::detect(o->under, o->under_vol_id, dxpl_id))
    return joined->get_defined(file_space, dxpl_id);
  if (file_space != H5S_ALL) return hdf5::checked(H5Scopy(file_space), "cannot copy the selection").release();
  // The dataset's dataspace selects all elements.
  return hdf5::dataset_get(o->under, o->under_vol_id, H5VL_DATASET_GET_SPACE, dxpl_id).release();
}

/// Reads (Api = H5VLdataset_read) or writes (H5VLdataset_write) datasets of the connector
/// `under_vol_id` below (`under`, all of its).
template <auto Api, typename Buffer>
herr_t transfer_below(hid_t under_vol_id, size_t count, void* under[], hid_t mem_types[], hid_t mem_spaces[],
                      hid_t file_spaces[], hid_t dxpl_id, Buffer bufs[], void** req) {
  const herr_t rc = Api(count, under, under_vol_id, mem_types, mem_spaces, file_spaces, dxpl_id, bufs, req);
  if (rc >= 0) wrap_request(req, under_vol_id);
  return rc;
}

/// Reads (Api = H5VLdataset_read) or writes (H5VLdataset_write) `count` datasets: the sparse
/// ones `serve(i)` takes, the rest below in one call.
template <auto Api, typename Buffer, typename Serve>
herr_t transfer(size_t count, void* dset[], hid_t mem_types[], hid_t mem_spaces[], hid_t file_spaces[], hid_t dxpl_id,
                Buffer bufs[], void** req, Serve&& serve) {
  const Object* first = as_object(dset[0]);
  if (count == 1 && !first->sparse) {  // the usual call, without building arrays
    void* under = first->under;
    return transfer_below<Api>(first->under_vol_id, 1, &under, mem_types, mem_spaces, file_spaces, dxpl_id, bufs, req);
  }
  std::vector<void*> under;
  std::vector<hid_t> below_types, below_mem_spaces, below_file_spaces;
  std::vector<Buffer> below_bufs;
  for (size_t i = 0; i < count; ++i) {
    if (serve(i)) continue;
    under.push_back(as_object(dset[i])->under);
    below_types.push_back(mem_types[i]);
    below_mem_spaces.push_back(mem_spaces[i]);
    below_file_spaces.push_back(file_spaces[i]);
    below_bufs.push_back(bufs[i]);
  }
  if (under.empty()) return 0;
  return transfer_below<Api>(first->under_vol_id, under.size(), under.data(), below_types.data(),
                             below_mem_spaces.data(), below_file_spaces.data(), dxpl_id, below_bufs.data(), req);
}

}  // namespace

void* dataset_create(void* obj, const H5VL_loc_params_t* loc_params, const char* name, hid_t lcpl_id, hid_t type_id,
                     hid_t space_id, hid_t dcpl_id, hid_t dapl_id, hid_t dxpl_id, void** req) noexcept {
  return call_guarded<void*>(Origin::connector, "dataset_create", nullptr, [&]() -> void* {
    Object* o = as_object(obj);
    // A variable-length sparse dataset is stored with an opaque carrier type (hdf5_support/var_values.hpp).
    const std::optional<hdf5::VarCarrier> var = hdf5::var_carrier(dcpl_id, type_id);
    void* under = H5VLdataset_create(o->under, loc_params, o->under_vol_id, name, lcpl_id,
                                     var ? var->type.get() : type_id, space_id, var ? var->dcpl.get() : dcpl_id,
                                     dapl_id, dxpl_id, req);
    return wrap_dataset(under, *o, dxpl_id, req);
  });
}

void* dataset_open(void* obj, const H5VL_loc_params_t* loc_params, const char* name, hid_t dapl_id, hid_t dxpl_id,
                   void** req) noexcept {
  return call_guarded<void*>(Origin::connector, "dataset_open", nullptr, [&]() -> void* {
    Object* o = as_object(obj);
    void* under = H5VLdataset_open(o->under, loc_params, o->under_vol_id, name, dapl_id, dxpl_id, req);
    return wrap_dataset(under, *o, dxpl_id, req);
  });
}

herr_t dataset_read(size_t count, void* dset[], hid_t mem_type_id[], hid_t mem_space_id[], hid_t file_space_id[],
                    hid_t dxpl_id, void* buf[], void** req) noexcept {
  return call_guarded<herr_t>(Origin::connector, "dataset_read", -1, [&]() -> herr_t {
    // Sparse datasets are read by the connector where it can; the rest go below together.
    std::vector<std::size_t> sparse_below;
    const auto read_sparse = [&](size_t i) {
      const SparseDataset* sparse = as_object(dset[i])->sparse.get();
      if (sparse == nullptr) return false;
      if (sparse->read(mem_type_id[i], mem_space_id[i], file_space_id[i], dxpl_id, buf[i])) return true;
      sparse->note_native_read();
      sparse_below.push_back(i);
      return false;
    };
    const herr_t rc = transfer<H5VLdataset_read>(count, dset, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf,
                                                 req, read_sparse);
    if (rc >= 0) return rc;
    // The structured-chunk filter reported corruption without knowing where: find the chunk and
    // replace the stack with one record naming dataset, chunk and cause.
    for (std::size_t i : sparse_below) {
      try {
        as_object(dset[i])->sparse->diagnose_read(file_space_id[i], dxpl_id);
      } catch (const Error& e) {
        if (e.code() == ErrorCode::corrupt_data || e.code() == ErrorCode::unsupported) H5Eclear2(H5E_DEFAULT);
        throw;
      }
    }
    return rc;
  });
}

herr_t dataset_write(size_t count, void* dset[], hid_t mem_type_id[], hid_t mem_space_id[], hid_t file_space_id[],
                     hid_t dxpl_id, const void* buf[], void** req) noexcept {
  return call_guarded<herr_t>(Origin::connector, "dataset_write", -1, [&]() -> herr_t {
    const auto write_sparse = [&](size_t i) {
      SparseDataset* sparse = as_object(dset[i])->sparse.get();
      if (sparse != nullptr) sparse->write(mem_type_id[i], mem_space_id[i], file_space_id[i], dxpl_id, buf[i]);
      return sparse != nullptr;
    };
    return transfer<H5VLdataset_write>(count, dset, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf, req,
                                       write_sparse);
  });
}

herr_t dataset_get(void* obj, H5VL_dataset_get_args_t* args, hid_t dxpl_id, void** req) noexcept {
  Object* o = as_object(obj);
  if (args->op_type != H5VL_DATASET_GET_TYPE || !o->sparse || !o->sparse->params().is_var())
    return ForwardIdAt1<H5VLdataset_get>::call(obj, args, dxpl_id, req);
  // H5Dget_type of a variable-length dataset: its true type, not the carrier stored below.
  return call_guarded<herr_t>(Origin::connector, "dataset_get", -1, [&]() -> herr_t {
    args->args.get_type.type_id = hdf5::checked(H5Tcopy(o->sparse->file_type()), "cannot copy").release();
    return 0;
  });
}

herr_t dataset_specific(void* obj, H5VL_dataset_specific_args_t* args, hid_t dxpl_id, void** req) noexcept {
  Object* o = as_object(obj);
  if (args->op_type != H5VL_DATASET_SET_EXTENT || !o->sparse)
    return ForwardIdAt1<H5VLdataset_specific>::call(obj, args, dxpl_id, req);
  // Done synchronously: the chunks around the native call must be read and written in order
  // (a request left unset tells HDF5 the operation is complete).
  return call_guarded<herr_t>(Origin::connector, "dataset_set_extent", -1, [&]() -> herr_t {
    o->sparse->set_extent(args->args.set_extent.size, dxpl_id);
    return 0;
  });
}

herr_t dataset_optional(void* obj, H5VL_optional_args_t* args, hid_t dxpl_id, void** req) noexcept {
  return call_guarded<herr_t>(Origin::connector, "dataset_optional", -1, [&]() -> herr_t {
    Object* o = as_object(obj);
    if (args->op_type == H5VL_NATIVE_DATASET_GET_VLEN_BUF_SIZE && o->sparse && o->sparse->params().is_var()) {
      auto& a = static_cast<H5VL_native_dataset_optional_args_t*>(args->args)->get_vlen_buf_size;
      return *a.size = o->sparse->vlen_buf_size(a.type_id, a.space_id, dxpl_id), 0;
    }
    if (const std::optional<herr_t> served = serve_chunk_operation(o, args, dxpl_id)) return *served;
    if (const std::optional<herr_t> served = serve_coordinate_operation(o, args, dxpl_id)) return *served;
    const OwnOperation op = own_operation(H5VL_SUBCLS_DATASET, args->op_type);
    if (op == OwnOperation::get_defined) {
      auto* a = static_cast<H5SparseGetDefinedArgs*>(args->args);
      a->defined_space_id = o->sparse ? o->sparse->get_defined(a->file_space_id, dxpl_id)
                                      : dense_defined(o, a->file_space_id, dxpl_id);
      return 0;
    }
    if (op == OwnOperation::erase) {
      H5SPARSE_FAIL_IF(!o->sparse, ErrorCode::invalid_argument,
                       "erase: the dataset is not sparse (its pipeline has no structured-chunk filter)");
      o->sparse->erase(static_cast<H5SparseEraseArgs*>(args->args)->file_space_id, dxpl_id);
      return 0;
    }
    // Native operations that change stored chunks (direct chunk writes, also those a sparse
    // dataset takes as given; a layout conversion) end what any handle has decoded.
    std::optional<SparseChange> change;
    if (args->op_type == H5VL_NATIVE_DATASET_CHUNK_WRITE || args->op_type == H5VL_NATIVE_DATASET_FORMAT_CONVERT)
      change.emplace();
    return ForwardIdAt1<H5VLdataset_optional>::call(obj, args, dxpl_id, req);
  });
}

}  // namespace h5sparse::vol
