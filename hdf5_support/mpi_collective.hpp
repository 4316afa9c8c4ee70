// What a collective operation on a dataset of an MPI-IO file needs beyond HDF5's own
// collective calls (parallel flavour only): the file's communicator and MPI-IO handle, found
// through the connector below; agreement of all ranks on each step's outcome, so that no rank
// waits in a collective another never reaches; one all-to-all exchange of byte messages; and
// the per-phase timing of H5SPARSE_MPI_TIMING.
#pragma once

#include <hdf5.h>
#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"
#include "handle.hpp"
#include "native_dataset.hpp"

namespace h5sparse::hdf5 {

/// Throws Error(mpi_failure) naming `what` when an MPI call failed.
void check_mpi(int rc, const char* what);

/// A communicator duplicated by HDF5 for us; freed unless MPI has already been finalized.
class MpiComm {
 public:
  explicit MpiComm(MPI_Comm comm);
  ~MpiComm();
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;
  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

/// The communicator of the dataset's file (collective: HDF5 duplicates it when it copies the
/// file access properties).
std::unique_ptr<MpiComm> file_communicator(void* under, hid_t under_vol_id);

/// `dxpl`, made a collective transfer list on first use (H5Pset_dxpl_mpio); its id.
hid_t collective_transfer(Handle& dxpl);

/// The file's MPI-IO handle (what H5Fget_vfd_handle returns for the MPI-IO driver).
MPI_File mpi_file_handle(void* under, hid_t under_vol_id);

/// The chunk stored at `origin`, its bytes read with an independent MPI_File_read_at, or nothing
/// when none is stored. Not with H5Dread_chunk: HDF5 fixes the transfer mode of the whole API
/// call on its first raw-data read (the API context caches it), and the collective chunk write
/// that follows in the same call would then run as an (refused) independent one; a collective
/// read would wait for ranks that own other chunks.
std::optional<LocatedChunk> read_stored_chunk_mpi(void* under, hid_t under_vol_id, MPI_File fh,
                                                  const std::vector<std::uint64_t>& origin);

/// Runs `step` on every rank and lets all ranks learn whether it failed anywhere. The failing
/// rank rethrows its own error; the others report which rank failed.
template <typename Step>
void agree(const MpiComm& comm, const char* what, Step&& step) {
  std::exception_ptr error;
  try {
    step();
  } catch (...) {
    error = std::current_exception();
  }
  int mine = error ? comm.rank() : INT_MAX, first = INT_MAX;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm.get()), "agreeing on the outcome");
  if (error) std::rethrow_exception(error);
  H5SPARSE_FAIL_IF(first != INT_MAX, ErrorCode::invalid_argument,
                   std::string(what) + " failed on MPI rank " + std::to_string(first) +
                       " (its error stack says why); no rank changed the dataset");
}

/// Every rank's messages to every other (MPI_Alltoallv; at most 2 GiB to or from each rank);
/// `messages` is emptied, `received[r]` (rank r's message to this one) points into `storage`.
std::vector<ByteView> exchange_messages(const MpiComm& comm, std::vector<Bytes>& messages, Bytes& storage);

/// H5SPARSE_MPI_TIMING=1: each rank prints the seconds of each phase of a collective write to
/// stderr (the per-rank costs of the scaling model in README, "Parallel writes").
class PhaseClock {
 public:
  /// Ends the phase `phase` (when timing is on).
  void lap(const char* phase);
  void print(int rank, const std::string& extra) const;

 private:
  bool on_ = std::getenv("H5SPARSE_MPI_TIMING") != nullptr;
  double last_ = MPI_Wtime();
  std::string text_;
};

}  // namespace h5sparse::hdf5
