// The client library: DCPL helpers over the structured-chunk filter's parameters, and dataset
// operations through the connector's dynamically registered optional operations.
#include "h5sparse.h"

#include <H5VLconnector.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "dcpl.hpp"
#include "error_stack.hpp"
#include "h5sparse/engine/chunk_encoder.hpp"
#include "h5sparse/sparse_layout.hpp"
#include "h5sparse/stored_chunk_read.hpp"
#include "h5sparse/var_chunk.hpp"
#include "h5sparse_vol.h"
#include "handle.hpp"
#include "transfer_properties.hpp"

namespace {

using namespace h5sparse;
using hdf5::call_guarded;
using hdf5::Handle;
using hdf5::Origin;
using hdf5::throw_if_negative;

// The request form stored on a DCPL (or the complete form of an existing dataset).
SparseParams current_params(hid_t dcpl) {
  const auto found = hdf5::filter_values(dcpl, kFilterStructuredChunk);
  H5SPARSE_FAIL_IF(!found, ErrorCode::invalid_argument,
          "the property list has no sparse layout: call h5sparse_pset_sparse_chunk first");
  const std::vector<unsigned>& values = *found;
  return is_complete_form(values.data(), values.size()) ? from_cd_values(values.data(), values.size())
                                                        : parse_request(values);
}

void store_params(hid_t dcpl, const SparseParams& params) {
  const std::vector<unsigned> request = to_request(params);
  throw_if_negative(H5Pmodify_filter(dcpl, kFilterStructuredChunk, H5Z_FLAG_MANDATORY, request.size(), request.data()),
                    "cannot update the structured-chunk filter parameters");
}

SectionPipeline& section_of(SparseParams& params, unsigned section) {
  H5SPARSE_FAIL_IF(section > 3, ErrorCode::invalid_argument,
          "section must be 0 (selection), 1 (values), 2 (lengths) or 3 (data), got " + std::to_string(section));
  ChunkLayout& l = params.layout;
  SectionPipeline* const pipelines[] = {&l.selection_pipeline, &l.values_pipeline, &l.lengths_pipeline,
                                        &l.data_pipeline};
  return *pipelines[section];
}

Handle dcpl_of(hid_t id) {
  if (H5Iget_type(id) == H5I_DATASET) return hdf5::checked(H5Dget_create_plist(id), "cannot get the dataset's DCPL");
  H5SPARSE_FAIL_IF(H5Pisa_class(id, H5P_DATASET_CREATE) <= 0, ErrorCode::invalid_argument,
          "expected a dataset or a dataset creation property list");
  H5Iinc_ref(id);
  return Handle(id);
}

int find_operation(H5VL_subclass_t cls, const char* name) {
  int op = -1;
  herr_t rc = -1;
  H5E_BEGIN_TRY { rc = H5VLfind_opt_operation(cls, name, &op); }
  H5E_END_TRY
  H5SPARSE_FAIL_IF(rc < 0, ErrorCode::unsupported,
          std::string("the h5sparse VOL connector is not loaded (operation '") + name +
              "' unknown): set HDF5_VOL_CONNECTOR=\"h5sparse under_vol=0;under_info={}\" and HDF5_PLUGIN_PATH");
  return op;
}

// The connector's version into buf, when the file of `id` is opened through it.
herr_t connector_version(hid_t id, char* buf, size_t size) {
  H5SparseVersionArgs op_args{buf, size};
  H5VL_optional_args_t args{find_operation(H5VL_SUBCLS_FILE, "h5sparse.connector_version"), &op_args};
  return H5VLfile_optional_op(id, &args, H5P_DATASET_XFER_DEFAULT, H5ES_NONE);
}

// Whether the file of the object `id` is opened through the connector; the error stack stays
// as it was.
bool through_connector(hid_t id) {
  herr_t rc = -1;
  hdf5::preserving_error_stack([&] {
    H5E_BEGIN_TRY {
      const Handle file(H5Iget_file_id(id));
      char version[64];
      if (file.valid()) rc = connector_version(file.get(), version, sizeof version);
    }
    H5E_END_TRY
  });
  return rc >= 0;
}

// Runs one of the connector's dataset operations with its argument struct. A dataset of a
// file opened without the connector (HDF5 then only says "invalid optional operation") gets
// a message saying so and what to do.
// H5VLdataset_optional_op passes the DXPL on as given, and HDF5 fails (when popping its API
// context) on H5P_DEFAULT reaching the native connector, so the default is named here.
void dataset_operation(hid_t dset_id, const char* name, void* op_args, hid_t dxpl_id, const char* failure) {
  if (dxpl_id == H5P_DEFAULT) dxpl_id = H5P_DATASET_XFER_DEFAULT;
  H5VL_optional_args_t args{find_operation(H5VL_SUBCLS_DATASET, name), op_args};
  if (H5VLdataset_optional_op(dset_id, &args, dxpl_id, H5ES_NONE) >= 0) return;
  H5SPARSE_FAIL_IF(!through_connector(dset_id), ErrorCode::unsupported,
                   "the file of this dataset is not opened through the h5sparse VOL connector: open it "
                   "with the connector on its file access (HDF5_VOL_CONNECTOR before HDF5 starts; in "
                   "Python, import h5sparse before h5py, or h5sparse.File)");
  throw_if_negative(-1, failure);
}

// A variable-length dataset's parameters from all its cd_values, as every reader checks them.
SparseParams var_params(std::size_t count, const unsigned* cd_values) {
  H5SPARSE_FAIL_IF(count == 0 || cd_values == nullptr, ErrorCode::invalid_argument,
                   "no structured-chunk parameters (cd_values) given");
  H5SPARSE_FAIL_IF(cd_values[0] == kSparseParamsMagic, ErrorCode::invalid_argument,
                   "the dataset holds fixed-size values (structured-chunk parameters version 1): H5Dread reads it "
                   "(h5py too, with the plugin path)");
  if (cd_values[0] != kVarParamsMagic) {
    char marker[16];
    std::snprintf(marker, sizeof marker, "%#x", cd_values[0]);
    throw Error(ErrorCode::corrupt_data,
                std::string("not a variable-length sparse dataset's parameters (marker ") + marker + ")");
  }
  try {
    return from_cd_values(cd_values, count);
  } catch (const Error& e) {
    throw Error(e.code(), std::string("structured-chunk parameters: ") + e.what(), e.file(), e.line());
  }
}

// Fills `chunk`'s header fields from a stored chunk (zeros for one stored around the filter).
void read_var_header(const std::uint8_t* data, std::size_t size, std::uint32_t filter_mask, const ChunkLayout& layout,
                     h5sparse_var_chunk_t& chunk) {
  if (filter_mask & 1) return;
  const VarChunkHeader header = read_var_chunk_header(data, size, layout);
  for (std::size_t s = 0; s < header.sections.size(); ++s) {
    chunk.filter_mask[s] = header.sections[s].filter_mask;
    chunk.section_size[s] = header.sections[s].stored_size;
    chunk.section_orig_size[s] = header.sections[s].unfiltered_size;
  }
}

// Copies `count` items to the room the caller gave, which must be there when they are.
template <typename T>
void put(T* room, const T* from, std::size_t count, const char* what) {
  if (count == 0) return;
  H5SPARSE_FAIL_IF(room == nullptr, ErrorCode::invalid_argument, std::string("the room callback gave no ") + what);
  std::memcpy(room, from, count * sizeof(T));
}

// A fixed-size dataset's parameters from all its cd_values, for encoding its chunks.
SparseParams dataset_params(std::size_t count, const unsigned* cd_values) {
  H5SPARSE_FAIL_IF(count == 0 || cd_values == nullptr, ErrorCode::invalid_argument,
                   "no structured-chunk parameters (cd_values) given");
  H5SPARSE_FAIL_IF(!is_complete_form(cd_values, count), ErrorCode::invalid_argument,
                   "the cd_values are not a sparse dataset's parameters: take all of them from the dataset's "
                   "DCPL (H5Pget_filter_by_id2 of filter 45100)");
  try {
    return from_cd_values(cd_values, count);
  } catch (const Error& e) {
    throw Error(e.code(), std::string("structured-chunk parameters: ") + e.what(), e.file(), e.line());
  }
}

// The caller's stored chunks of a rank-`rank` dataset, copied for the encoder.
std::vector<ChunkAt> carried_chunks(int rank, std::size_t count, const h5sparse_chunk_bytes_t* stored) {
  H5SPARSE_FAIL_IF(count > 0 && stored == nullptr, ErrorCode::invalid_argument, "no stored chunks given");
  std::vector<ChunkAt> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    const h5sparse_chunk_bytes_t& c = stored[i];
    H5SPARSE_FAIL_IF(c.buf == nullptr && c.size != 0, ErrorCode::invalid_argument,
                     "stored chunk " + std::to_string(i) + " has no bytes");
    const auto* bytes = static_cast<const std::uint8_t*>(c.buf);
    out[i].origin.assign(c.offset, c.offset + rank);
    out[i].chunk.bytes.assign(bytes, bytes + c.size);
    out[i].chunk.filter_mask = c.filter_mask;
  }
  return out;
}

// call_guarded, or with `message` given, the failure's text copied there (NUL-terminated, cut
// to fit) and no HDF5 call made.
template <typename Body>
herr_t call_reporting(const char* function, char* message, std::size_t size, Body&& body) noexcept {
  if (message == nullptr || size == 0) return call_guarded<herr_t>(Origin::client, function, -1, body);
  try {
    return body();
  } catch (const std::bad_alloc&) {
    std::snprintf(message, size, "%s: out of memory", function);
  } catch (const std::exception& e) {
    std::snprintf(message, size, "%s: %s", function, e.what());
  } catch (...) {
    std::snprintf(message, size, "%s: unknown failure", function);
  }
  return -1;
}

}  // namespace

extern "C" {

herr_t h5sparse_pset_sparse_chunk(hid_t dcpl_id, int ndims, const hsize_t dim[]) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_pset_sparse_chunk", -1, [&]() -> herr_t {
    throw_if_negative(H5Pset_chunk(dcpl_id, ndims, dim), "cannot set the chunk dimensions");
    if (hdf5::filter_values(dcpl_id, kFilterStructuredChunk)) return 0;  // already sparse: keep its options
    H5SPARSE_FAIL_IF(H5Pget_nfilters(dcpl_id) > 0, ErrorCode::invalid_argument,
            "the property list already has a filter pipeline; sparse datasets filter each section instead "
            "(h5sparse_pset_section_filter)");
    const std::vector<unsigned> request = to_request(SparseParams{});
    throw_if_negative(H5Pset_filter(dcpl_id, kFilterStructuredChunk, H5Z_FLAG_MANDATORY, request.size(), request.data()),
                      "cannot add the structured-chunk filter");
    return 0;
  });
}

herr_t h5sparse_pset_section_filter(hid_t dcpl_id, unsigned section, H5Z_filter_t filter, unsigned flags,
                                    size_t cd_nelmts, const unsigned cd_values[]) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_pset_section_filter", -1, [&]() -> herr_t {
    SparseParams params = current_params(dcpl_id);
    SectionPipeline& pipeline = section_of(params, section);
    H5SPARSE_FAIL_IF(cd_nelmts > 0 && cd_values == nullptr, ErrorCode::invalid_argument, "cd_values is NULL");
    pipeline.push_back({int(filter), flags & kFilterFlagOptional,
                        std::vector<unsigned>(cd_values, cd_values + cd_nelmts)});
    validate_pipeline(pipeline);
    store_params(dcpl_id, params);
    return 0;
  });
}

int h5sparse_pget_section_nfilters(hid_t dcpl_id, unsigned section) {
  return call_guarded<int>(Origin::client, "h5sparse_pget_section_nfilters", -1, [&]() -> int {
    Handle dcpl = dcpl_of(dcpl_id);
    SparseParams params = current_params(dcpl.get());
    return int(section_of(params, section).size());
  });
}

H5Z_filter_t h5sparse_pget_section_filter(hid_t dcpl_id, unsigned section, unsigned idx, unsigned* flags,
                                          size_t* cd_nelmts, unsigned cd_values[]) {
  return call_guarded<H5Z_filter_t>(Origin::client, "h5sparse_pget_section_filter", H5Z_FILTER_ERROR,
                                    [&]() -> H5Z_filter_t {
    Handle dcpl = dcpl_of(dcpl_id);
    SparseParams params = current_params(dcpl.get());
    const SectionPipeline& pipeline = section_of(params, section);
    H5SPARSE_FAIL_IF(idx >= pipeline.size(), ErrorCode::invalid_argument,
            "filter index " + std::to_string(idx) + " beyond the section's " + std::to_string(pipeline.size()));
    const SectionFilter& f = pipeline[idx];
    if (flags) *flags = f.flags;
    if (cd_nelmts) {
      for (std::size_t k = 0; k < f.cd_values.size() && k < *cd_nelmts && cd_values; ++k) cd_values[k] = f.cd_values[k];
      *cd_nelmts = f.cd_values.size();
    }
    return H5Z_filter_t(f.id);
  });
}

herr_t h5sparse_pset_fill_is_undefined(hid_t dcpl_id, hbool_t enabled) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_pset_fill_is_undefined", -1, [&]() -> herr_t {
    SparseParams params = current_params(dcpl_id);
    params.options = enabled ? (params.options | kOptionFillIsUndefined) : (params.options & ~kOptionFillIsUndefined);
    store_params(dcpl_id, params);
    return 0;
  });
}

htri_t h5sparse_is_sparse(hid_t id) {
  return call_guarded<htri_t>(Origin::client, "h5sparse_is_sparse", -1, [&]() -> htri_t {
    Handle dcpl = dcpl_of(id);
    return hdf5::filter_values(dcpl.get(), kFilterStructuredChunk) ? 1 : 0;
  });
}

hid_t h5sparse_dget_defined(hid_t dset_id, hid_t file_space_id, hid_t dxpl_id) {
  return call_guarded<hid_t>(Origin::client, "h5sparse_dget_defined", H5I_INVALID_HID, [&]() -> hid_t {
    H5SparseGetDefinedArgs op_args{file_space_id, H5I_INVALID_HID};
    dataset_operation(dset_id, "h5sparse.get_defined", &op_args, dxpl_id, "h5sparse_dget_defined failed");
    return op_args.defined_space_id;
  });
}

herr_t h5sparse_derase(hid_t dset_id, hid_t file_space_id, hid_t dxpl_id) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_derase", -1, [&]() -> herr_t {
    H5SparseEraseArgs op_args{file_space_id};
    dataset_operation(dset_id, "h5sparse.erase", &op_args, dxpl_id, "h5sparse_derase failed");
    return 0;
  });
}

herr_t h5sparse_dwrite_coo(hid_t dset_id, size_t num_points, const hsize_t* coords, hid_t mem_type_id,
                           const void* values, hid_t dxpl_id) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_dwrite_coo", -1, [&]() -> herr_t {
    H5SparseWriteCooArgs op_args{num_points, coords, mem_type_id, values};
    dataset_operation(dset_id, "h5sparse.write_coo", &op_args, dxpl_id, "h5sparse_dwrite_coo failed");
    return 0;
  });
}

herr_t h5sparse_derase_coo(hid_t dset_id, size_t num_points, const hsize_t* coords, hid_t dxpl_id) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_derase_coo", -1, [&]() -> herr_t {
    H5SparseEraseCooArgs op_args{num_points, coords};
    dataset_operation(dset_id, "h5sparse.erase_coo", &op_args, dxpl_id, "h5sparse_derase_coo failed");
    return 0;
  });
}

herr_t h5sparse_diterate_coo(hid_t dset_id, hid_t file_space_id, hid_t mem_type_id, size_t max_bytes,
                             hsize_t* cursor, h5sparse_coo_op_t op, void* op_data, hid_t dxpl_id) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_diterate_coo", -1, [&]() -> herr_t {
    H5SparseIterateCooArgs op_args{file_space_id, mem_type_id, max_bytes, cursor, op, op_data, 0, nullptr,
                                   nullptr, 0};
    dataset_operation(dset_id, "h5sparse.iterate_coo", &op_args, dxpl_id, "h5sparse_diterate_coo failed");
    return op_args.result;
  });
}

herr_t h5sparse_dread_coo(hid_t dset_id, hid_t file_space_id, hid_t mem_type_id, size_t max_bytes, hsize_t* cursor,
                          h5sparse_coo_room_t room, h5sparse_coo_op_t op, void* op_data, hid_t dxpl_id) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_dread_coo", -1, [&]() -> herr_t {
    H5SPARSE_FAIL_IF(room == nullptr, ErrorCode::invalid_argument, "h5sparse_dread_coo needs a room callback");
    H5SparseIterateCooArgs op_args{file_space_id, mem_type_id, max_bytes, cursor, op, op_data, 0, room,
                                   nullptr, 0};
    dataset_operation(dset_id, "h5sparse.iterate_coo", &op_args, dxpl_id, "h5sparse_dread_coo failed");
    return op_args.result;
  });
}

herr_t h5sparse_dread_csr(hid_t dset_id, hid_t file_space_id, hid_t mem_type_id, size_t index_size,
                          hsize_t* row_counts, h5sparse_coo_room_t room, void* op_data, hid_t dxpl_id) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_dread_csr", -1, [&]() -> herr_t {
    H5SPARSE_FAIL_IF(room == nullptr || row_counts == nullptr, ErrorCode::invalid_argument,
                     "h5sparse_dread_csr needs a room callback and row counts");
    H5SparseIterateCooArgs op_args{file_space_id, mem_type_id, SIZE_MAX, nullptr, nullptr, op_data, 0, room,
                                   row_counts, index_size};
    dataset_operation(dset_id, "h5sparse.iterate_coo", &op_args, dxpl_id, "h5sparse_dread_csr failed");
    return 0;
  });
}

herr_t h5sparse_dwrite_struct_chunk(hid_t dset_id, hid_t dxpl_id, const h5sparse_struct_chunk_info_t* chunk_info,
                                    const hsize_t* offset, const void* const buf[]) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_dwrite_struct_chunk", -1, [&]() -> herr_t {
    H5SparseWriteStructChunkArgs op_args{offset, chunk_info, buf};
    dataset_operation(dset_id, "h5sparse.write_struct_chunk", &op_args, dxpl_id, "h5sparse_dwrite_struct_chunk failed");
    return 0;
  });
}

herr_t h5sparse_dread_struct_chunk(hid_t dset_id, hid_t dxpl_id, const hsize_t* offset,
                                   h5sparse_struct_chunk_info_t* chunk_info, void* buf[]) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_dread_struct_chunk", -1, [&]() -> herr_t {
    H5SparseReadStructChunkArgs op_args{offset, chunk_info, buf};
    dataset_operation(dset_id, "h5sparse.read_struct_chunk", &op_args, dxpl_id, "h5sparse_dread_struct_chunk failed");
    return 0;
  });
}

herr_t h5sparse_dget_struct_chunk_info(hid_t dset_id, hid_t fspace_id, hsize_t chunk_idx, hsize_t* offset,
                                       h5sparse_struct_chunk_info_t* chunk_info, haddr_t* addr, hsize_t* chunk_size) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_dget_struct_chunk_info", -1, [&]() -> herr_t {
    H5SparseStructChunkInfoArgs op_args{fspace_id, chunk_idx, offset, chunk_info, addr, chunk_size};
    dataset_operation(dset_id, "h5sparse.get_struct_chunk_info", &op_args, H5P_DATASET_XFER_DEFAULT,
                      "h5sparse_dget_struct_chunk_info failed");
    return 0;
  });
}

herr_t h5sparse_dget_struct_chunk_info_by_coord(hid_t dset_id, const hsize_t* offset,
                                                h5sparse_struct_chunk_info_t* chunk_info, haddr_t* addr,
                                                hsize_t* chunk_size) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_dget_struct_chunk_info_by_coord", -1, [&]() -> herr_t {
    H5SparseStructChunkInfoByCoordArgs op_args{offset, chunk_info, addr, chunk_size};
    dataset_operation(dset_id, "h5sparse.get_struct_chunk_info_by_coord", &op_args, H5P_DATASET_XFER_DEFAULT,
                      "h5sparse_dget_struct_chunk_info_by_coord failed");
    return 0;
  });
}

herr_t h5sparse_dstruct_chunk_iter(hid_t dset_id, hid_t dxpl_id, h5sparse_struct_chunk_iter_op_t op,
                                   size_t op_data_size, void* op_data) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_dstruct_chunk_iter", -1, [&]() -> herr_t {
    H5SparseStructChunkIterArgs op_args{op, op_data_size, op_data, 0};
    dataset_operation(dset_id, "h5sparse.struct_chunk_iter", &op_args, dxpl_id, "h5sparse_dstruct_chunk_iter failed");
    return op_args.result;
  });
}

ssize_t h5sparse_var_true_type(size_t cd_nelmts, const unsigned cd_values[], void* buf, size_t size) {
  return call_guarded<ssize_t>(Origin::client, "h5sparse_var_true_type", -1, [&]() -> ssize_t {
    const SparseParams params = var_params(cd_nelmts, cd_values);
    if (buf != nullptr) std::memcpy(buf, params.true_type.data(), std::min(size, params.true_type.size()));
    return ssize_t(params.true_type.size());
  });
}

herr_t h5sparse_decode_var_chunk(size_t cd_nelmts, const unsigned cd_values[], const void* buf, size_t buf_size,
                                 uint32_t filter_mask, h5sparse_var_chunk_t* chunk, h5sparse_var_room_t room,
                                 void* op_data) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_decode_var_chunk", -1, [&]() -> herr_t {
    H5SPARSE_FAIL_IF(chunk == nullptr || (buf == nullptr && buf_size != 0), ErrorCode::invalid_argument,
                     "h5sparse_decode_var_chunk needs the chunk's bytes and a chunk to fill");
    const SparseParams params = var_params(cd_nelmts, cd_values);
    const ChunkLayout& layout = params.layout;
    const auto* data = static_cast<const std::uint8_t*>(buf);
    *chunk = h5sparse_var_chunk_t{};
    chunk->fixed_size = layout.var.fixed_size;
    chunk->num_slots = layout.var.slots();
    read_var_header(data, buf_size, filter_mask, layout, *chunk);
    if (room == nullptr) return 0;
    const ChunkVarElements elements = decode_stored_var_elements(data, buf_size, filter_mask, layout);
    const VarValues& v = elements.values;
    chunk->num_elements = elements.offsets.size();
    chunk->data_size = v.data.size();
    H5SPARSE_FAIL_IF(room(chunk, op_data) < 0, ErrorCode::invalid_argument,
                     "the room callback of h5sparse_decode_var_chunk failed");
    put(chunk->offsets, elements.offsets.data(), elements.offsets.size(), "offsets");
    put(static_cast<std::uint8_t*>(chunk->fixed), v.fixed.data(), v.fixed.size(), "fixed parts");
    put(chunk->ends, v.ends.data(), v.ends.size(), "payload ends");
    put(chunk->null, v.null.data(), v.null.size(), "NULL flags");
    put(static_cast<std::uint8_t*>(chunk->data), v.data.data(), v.data.size(), "payload bytes");
    return 0;
  });
}

herr_t h5sparse_pset_chunk_write_check(hid_t dxpl_id, unsigned check) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_pset_chunk_write_check", -1, [&]() -> herr_t {
    H5SPARSE_FAIL_IF(check > H5SPARSE_CHUNK_CHECK_CHECKSUMS, ErrorCode::invalid_argument,
                     "check must be H5SPARSE_CHUNK_CHECK_DECODE (0) or H5SPARSE_CHUNK_CHECK_CHECKSUMS (1), got " +
                         std::to_string(check));
    hdf5::set_chunk_write_check(dxpl_id, hdf5::ChunkWriteCheck(check));
    return 0;
  });
}

herr_t h5sparse_encode_coo(size_t cd_nelmts, const unsigned cd_values[], int rank, const hsize_t dims[],
                           hbool_t moves_rewritten, size_t num_points, const hsize_t* coords, const void* values,
                           size_t num_stored, const h5sparse_chunk_bytes_t* stored, h5sparse_chunk_bytes_op_t op,
                           void* op_data, char* message, size_t message_size) {
  return call_reporting("h5sparse_encode_coo", message, message_size, [&]() -> herr_t {
    const SparseParams params = dataset_params(cd_nelmts, cd_values);
    H5SPARSE_FAIL_IF(rank != int(params.layout.dims.size()) || dims == nullptr, ErrorCode::invalid_argument,
                     "the dataset's chunks have " + std::to_string(params.layout.dims.size()) +
                         " dimensions; the extent given has " + std::to_string(rank));
    H5SPARSE_FAIL_IF(op == nullptr || (num_points > 0 && (coords == nullptr || values == nullptr)),
                     ErrorCode::invalid_argument, "h5sparse_encode_coo needs coordinates, values and an op");
    const Coords extent(dims, dims + rank);
    const std::vector<ChunkAt> carried = carried_chunks(rank, num_stored, stored);
    const EncodeRequest request{params, extent, carried, moves_rewritten != 0};
    static_assert(sizeof(hsize_t) == sizeof(std::uint64_t), "coordinates are 64-bit");
    const std::vector<ChunkAt> chunks = encode_coordinates(request, reinterpret_cast<const std::uint64_t*>(coords),
                                                           num_points, static_cast<const std::uint8_t*>(values));
    for (const ChunkAt& c : chunks) {
      h5sparse_chunk_bytes_t out{};
      std::copy(c.origin.begin(), c.origin.end(), out.offset);
      out.size = c.chunk.bytes.size();
      out.buf = c.chunk.bytes.data();
      H5SPARSE_FAIL_IF(op(&out, op_data) < 0, ErrorCode::invalid_argument, "the op of h5sparse_encode_coo failed");
    }
    return 0;
  });
}

herr_t h5sparse_connector_version(hid_t file_id, char* buf, size_t size) {
  return call_guarded<herr_t>(Origin::client, "h5sparse_connector_version", -1, [&]() -> herr_t {
    throw_if_negative(connector_version(file_id, buf, size), "h5sparse_connector_version failed");
    return 0;
  });
}

}  // extern "C"
