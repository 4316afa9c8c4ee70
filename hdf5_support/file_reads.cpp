// Reads of stored chunks by address (file_reads.hpp).
#include "file_reads.hpp"

#include <H5VLnative.h>
#include <errno.h>
#include <unistd.h>

#include <cstring>
#include <system_error>

#include "h5sparse/error.hpp"
#include "handle.hpp"
#include "native_dataset.hpp"

namespace h5sparse::hdf5 {
namespace {

// The descriptor of a read-only, non-SWMR file of the sec2 driver, or -1.
int sec2_descriptor(void* under, hid_t under_vol_id, hid_t dxpl) {
  if (file_intent(under, under_vol_id, dxpl) & (H5F_ACC_RDWR | H5F_ACC_SWMR_READ)) return -1;
  void* file = file_of(under, under_vol_id, dxpl);
  H5VL_file_get_args_t get{};
  get.op_type = H5VL_FILE_GET_FAPL;
  get.args.get_fapl.fapl_id = H5I_INVALID_HID;
  if (H5VLfile_get(file, under_vol_id, &get, dxpl, nullptr) < 0) return -1;
  const Handle fapl(get.args.get_fapl.fapl_id);
  if (H5Pget_driver(fapl.get()) != H5FD_SEC2) return -1;
  void* handle = nullptr;
  H5VL_native_file_optional_args_t nargs{};
  nargs.get_vfd_handle.fapl_id = fapl.get();
  nargs.get_vfd_handle.file_handle = &handle;
  H5VL_optional_args_t args{H5VL_NATIVE_FILE_GET_VFD_HANDLE, &nargs};
  if (H5VLfile_optional(file, under_vol_id, &args, dxpl, nullptr) < 0 || handle == nullptr) return -1;
  return *static_cast<const int*>(handle);  // sec2's handle is its descriptor
}

}  // namespace

std::optional<FileReads> FileReads::of(void* under, hid_t under_vol_id, hid_t dxpl,
                                       const std::vector<hsize_t>& sample_origin, const ChunkLocation& sample) {
  // A file these reads do not serve is no failure: the probe's records are dropped.
  const hid_t saved = H5Eget_current_stack();
  std::optional<FileReads> reads;
  H5E_BEGIN_TRY {
    try {
      const int fd = sec2_descriptor(under, under_vol_id, dxpl);
      if (fd >= 0) {
        StoredChunk by_hdf5;
        RawBytes by_address;
        read_stored_chunk_of_size(under, under_vol_id, sample_origin, sample.size, dxpl, by_hdf5);
        FileReads candidate(fd);
        candidate.read(sample.address, sample.size, by_address);
        if (by_hdf5.filter_mask == 0 &&
            std::memcmp(by_hdf5.bytes.data(), by_address.data(), std::size_t(sample.size)) == 0)
          reads = candidate;
      }
    } catch (...) {
      reads.reset();
    }
  }
  H5E_END_TRY
  if (saved >= 0) H5Eset_current_stack(saved);
  return reads;
}

void FileReads::read(std::uint64_t address, std::uint64_t size, RawBytes& into) const {
  into.resize(size);
  std::uint64_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd_, into.data() + done, std::size_t(size - done), off_t(address + done));
    if (got < 0 && errno == EINTR) continue;
    H5SPARSE_FAIL_IF(got < 0, ErrorCode::corrupt_data,
                     "reading " + std::to_string(size) + " bytes at file address " + std::to_string(address) +
                         " failed: " + std::error_code(errno, std::generic_category()).message());
    H5SPARSE_FAIL_IF(got == 0, ErrorCode::corrupt_data,
                     "the file ends " + std::to_string(done) + " bytes into the chunk of " + std::to_string(size) +
                         " bytes stored at file address " + std::to_string(address));
    done += std::uint64_t(got);
  }
}

}  // namespace h5sparse::hdf5
