#include "transfer_properties.hpp"

#include <string>

#include "error_stack.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse::hdf5 {
namespace {

constexpr const char* kChunkWriteCheck = "h5sparse_chunk_write_check";

}  // namespace

void set_chunk_write_check(hid_t dxpl, ChunkWriteCheck check) {
  H5SPARSE_FAIL_IF(H5Pisa_class(dxpl, H5P_DATASET_XFER) <= 0, ErrorCode::invalid_argument,
                   "expected a dataset transfer property list");
  unsigned value = unsigned(check);
  const htri_t exists = H5Pexist(dxpl, kChunkWriteCheck);
  throw_if_negative(exists, "cannot look up the chunk write check");
  if (exists > 0)
    throw_if_negative(H5Pset(dxpl, kChunkWriteCheck, &value), "cannot set the chunk write check");
  else
    throw_if_negative(H5Pinsert2(dxpl, kChunkWriteCheck, sizeof value, &value, nullptr, nullptr, nullptr, nullptr,
                                 nullptr, nullptr),
                      "cannot add the chunk write check to the DXPL");
}

ChunkWriteCheck chunk_write_check(hid_t dxpl) {
  if (dxpl == H5P_DEFAULT || dxpl == H5P_DATASET_XFER_DEFAULT) return ChunkWriteCheck::decode;
  const htri_t exists = H5Pexist(dxpl, kChunkWriteCheck);
  throw_if_negative(exists, "cannot look up the chunk write check");
  if (exists == 0) return ChunkWriteCheck::decode;
  unsigned value = 0;
  throw_if_negative(H5Pget(dxpl, kChunkWriteCheck, &value), "cannot read the chunk write check");
  H5SPARSE_FAIL_IF(value > unsigned(ChunkWriteCheck::checksums), ErrorCode::invalid_argument,
                   "unknown chunk write check " + std::to_string(value));
  return ChunkWriteCheck(value);
}

}  // namespace h5sparse::hdf5
