// Collective operations' MPI side (mpi_collective.hpp).
#include "mpi_collective.hpp"

#include <H5VLconnector_passthru.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "error_stack.hpp"
#include "handle.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse::hdf5 {

void check_mpi(int rc, const char* what) {
  H5SPARSE_FAIL_IF(rc != MPI_SUCCESS, ErrorCode::mpi_failure, std::string("MPI failure: ") + what);
}

MpiComm::MpiComm(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiComm::~MpiComm() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

hid_t collective_transfer(Handle& dxpl) {
  if (!dxpl.valid()) {
    dxpl = checked(H5Pcreate(H5P_DATASET_XFER), "cannot create transfer properties");
    throw_if_negative(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE), "cannot request collective transfer");
  }
  return dxpl.get();
}

std::unique_ptr<MpiComm> file_communicator(void* under, hid_t under_vol_id) {
  H5VL_file_get_args_t args{};
  args.op_type = H5VL_FILE_GET_FAPL;
  args.args.get_fapl.fapl_id = H5I_INVALID_HID;
  throw_if_negative(H5VLfile_get(file_of(under, under_vol_id, H5P_DATASET_XFER_DEFAULT), under_vol_id, &args,
                                 H5P_DATASET_XFER_DEFAULT, nullptr),
                    "cannot get the file access properties");
  Handle fapl = checked(args.args.get_fapl.fapl_id, "cannot get the file access properties");
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
  throw_if_negative(H5Pget_fapl_mpio(fapl.get(), &comm, &info), "cannot get the file's MPI communicator");
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  return std::make_unique<MpiComm>(comm);
}

MPI_File mpi_file_handle(void* under, hid_t under_vol_id) {
  void* handle = nullptr;
  H5VL_native_file_optional_args_t nargs{};
  nargs.get_vfd_handle.fapl_id = H5P_FILE_ACCESS_DEFAULT;
  nargs.get_vfd_handle.file_handle = &handle;
  H5VL_optional_args_t args{H5VL_NATIVE_FILE_GET_VFD_HANDLE, &nargs};
  throw_if_negative(H5VLfile_optional(file_of(under, under_vol_id, H5P_DATASET_XFER_DEFAULT), under_vol_id, &args,
                                      H5P_DATASET_XFER_DEFAULT, nullptr),
                    "cannot get the file's MPI-IO handle");
  H5SPARSE_FAIL_IF(handle == nullptr, ErrorCode::hdf5_call, "the file has no MPI-IO handle");
  return *static_cast<MPI_File*>(handle);
}

std::optional<LocatedChunk> read_stored_chunk_mpi(void* under, hid_t under_vol_id, MPI_File fh,
                                                  const std::vector<std::uint64_t>& origin) {
  const std::vector<hsize_t> offset(origin.begin(), origin.end());
  LocatedChunk chunk;
  const std::optional<hsize_t> located =
      locate_stored_chunk(under, under_vol_id, offset.data(), H5P_DATASET_XFER_DEFAULT, chunk);
  if (!located) return std::nullopt;
  const hsize_t size = *located;
  H5SPARSE_FAIL_IF(size > hsize_t(INT_MAX), ErrorCode::unsupported, "a stored chunk over 2 GiB");
  chunk.bytes.resize(size);
  MPI_Status status;
  check_mpi(MPI_File_read_at(fh, MPI_Offset(chunk.addr), chunk.bytes.data(), int(size), MPI_BYTE, &status),
            "reading a stored chunk");
  int got = 0;
  MPI_Get_count(&status, MPI_BYTE, &got);
  H5SPARSE_FAIL_IF(hsize_t(got) != size, ErrorCode::corrupt_data, "a stored chunk lies past the end of the file");
  return chunk;
}

namespace {

// The sizes every rank sends to and receives from every other, refused over 2 GiB in all.
void exchange_sizes(const MpiComm& comm, const std::vector<Bytes>& messages, std::vector<int>& send_sizes,
                    std::vector<int>& recv_sizes) {
  const std::size_t ranks = std::size_t(comm.size());
  std::vector<long long> send(ranks), recv(ranks);
  for (std::size_t r = 0; r < ranks; ++r) send[r] = static_cast<long long>(messages[r].size());
  check_mpi(MPI_Alltoall(send.data(), 1, MPI_LONG_LONG, recv.data(), 1, MPI_LONG_LONG, comm.get()),
            "exchanging message sizes");
  long long send_total = 0, recv_total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    send_total += send[r];
    recv_total += recv[r];
  }
  agree(comm, "the sparse exchange", [&] {
    H5SPARSE_FAIL_IF(send_total > INT_MAX || recv_total > INT_MAX, ErrorCode::unsupported,
                     "one collective sparse write may move at most 2 GiB to or from each rank; split the write");
  });
  send_sizes.assign(send.begin(), send.end());
  recv_sizes.assign(recv.begin(), recv.end());
}

// Displacements of consecutive blocks of `sizes` bytes; returns the total (at least 1, so that
// an empty buffer still has an address).
std::size_t displacements(const std::vector<int>& sizes, std::vector<int>& displs) {
  std::size_t at = 0;
  displs.resize(sizes.size());
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    displs[r] = int(at);
    at += std::size_t(sizes[r]);
  }
  return at ? at : 1;
}

}  // namespace

std::vector<ByteView> exchange_messages(const MpiComm& comm, std::vector<Bytes>& messages, Bytes& storage) {
  std::vector<int> scounts, rcounts, sdispls, rdispls;
  exchange_sizes(comm, messages, scounts, rcounts);
  Bytes send(displacements(scounts, sdispls));
  storage.assign(displacements(rcounts, rdispls), 0);
  for (std::size_t r = 0; r < messages.size(); ++r)
    if (!messages[r].empty()) std::memcpy(&send[std::size_t(sdispls[r])], messages[r].data(), messages[r].size());
  messages.clear();
  check_mpi(MPI_Alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_BYTE, storage.data(), rcounts.data(),
                          rdispls.data(), MPI_BYTE, comm.get()),
            "exchanging chunk pieces");
  std::vector<ByteView> received;
  for (std::size_t r = 0; r < rcounts.size(); ++r)
    received.emplace_back(storage.data() + rdispls[r], std::size_t(rcounts[r]));
  return received;
}

void PhaseClock::lap(const char* phase) {
  if (!on_) return;
  const double now = MPI_Wtime();
  text_ += std::string(" ") + phase + "=" + std::to_string(now - last_);
  last_ = now;
}

void PhaseClock::print(int rank, const std::string& extra) const {
  if (on_) std::fprintf(stderr, "h5sparse-mpi-timing rank=%d%s%s\n", rank, text_.c_str(), extra.c_str());
}

}  // namespace h5sparse::hdf5
