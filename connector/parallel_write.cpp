// Collective sparse writes and erases on MPI-IO files (see parallel_write.hpp).
#include "parallel_write.hpp"

#include <H5VLconnector_passthru.h>
#include <mpi.h>
#include "h5sparse/checksum.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "error_stack.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/engine/owner_merge.hpp"
#include "h5sparse/piece_merge.hpp"
#include "native_dataset.hpp"
#include "pre_encoded_chunks.hpp"
#include "sparse_dataset.hpp"
#include "structured_chunk_class.hpp"

namespace h5sparse::vol {

// A communicator duplicated by HDF5 for us; freed unless MPI has already been finalized.
class MpiComm {
 public:
  explicit MpiComm(MPI_Comm comm) : comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiComm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;
  MPI_Comm get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

namespace {

using hdf5::checked;
using hdf5::Handle;
using hdf5::throw_if_negative;

void check_mpi(int rc, const char* what) {
  H5SPARSE_FAIL_IF(rc != MPI_SUCCESS, ErrorCode::mpi_failure, std::string("MPI failure: ") + what);
}

void* file_of(void* under, hid_t under_vol_id) {
  H5VL_object_get_args_t args{};
  H5VL_loc_params_t loc{};
  loc.type = H5VL_OBJECT_BY_SELF;
  loc.obj_type = H5I_DATASET;
  void* file = nullptr;
  args.op_type = H5VL_OBJECT_GET_FILE;
  args.args.get_file.file = &file;
  throw_if_negative(H5VLobject_get(under, &loc, under_vol_id, &args, H5P_DATASET_XFER_DEFAULT, nullptr),
                    "cannot find the dataset's file");
  return file;
}

// Collective (HDF5 duplicates the communicator when it copies the file access properties).
std::unique_ptr<MpiComm> communicator(void* under, hid_t under_vol_id) {
  H5VL_file_get_args_t args{};
  args.op_type = H5VL_FILE_GET_FAPL;
  args.args.get_fapl.fapl_id = H5I_INVALID_HID;
  throw_if_negative(H5VLfile_get(file_of(under, under_vol_id), under_vol_id, &args, H5P_DATASET_XFER_DEFAULT, nullptr),
                    "cannot get the file access properties");
  Handle fapl = checked(args.args.get_fapl.fapl_id, "cannot get the file access properties");
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Info info = MPI_INFO_NULL;
  throw_if_negative(H5Pget_fapl_mpio(fapl.get(), &comm, &info), "cannot get the file's MPI communicator");
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  return std::make_unique<MpiComm>(comm);
}

// The file's MPI-IO handle (what H5Fget_vfd_handle returns for the MPI-IO driver).
MPI_File mpi_file_handle(void* under, hid_t under_vol_id) {
  void* handle = nullptr;
  H5VL_native_file_optional_args_t nargs{};
  nargs.get_vfd_handle.fapl_id = H5P_FILE_ACCESS_DEFAULT;
  nargs.get_vfd_handle.file_handle = &handle;
  H5VL_optional_args_t args{H5VL_NATIVE_FILE_GET_VFD_HANDLE, &nargs};
  throw_if_negative(H5VLfile_optional(file_of(under, under_vol_id), under_vol_id, &args, H5P_DATASET_XFER_DEFAULT,
                                      nullptr),
                    "cannot get the file's MPI-IO handle");
  H5SPARSE_FAIL_IF(handle == nullptr, ErrorCode::hdf5_call, "the file has no MPI-IO handle");
  return *static_cast<MPI_File*>(handle);
}

// The chunk stored at `origin`, its bytes read with an independent MPI_File_read_at. Not with
// H5Dread_chunk: HDF5 fixes the transfer mode of the whole API call on its first raw-data read
// (the API context caches it), and the collective chunk write that follows in the same call
// would then run as an (refused) independent one; a collective read would wait for ranks that
// own other chunks.
std::optional<LocatedChunk> read_stored_mpi(void* under, hid_t under_vol_id, MPI_File fh,
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

// H5SPARSE_MPI_TIMING=1: each rank prints the seconds of each phase of a collective write or
// erase to stderr (the per-rank costs of the scaling model in README, "Parallel writes").
struct PhaseClock {
  bool on = std::getenv("H5SPARSE_MPI_TIMING") != nullptr;
  double last = MPI_Wtime();
  std::string text;
  void lap(const char* phase) {
    if (!on) return;
    const double now = MPI_Wtime();
    text += std::string(" ") + phase + "=" + std::to_string(now - last);
    last = now;
  }
  void print(int rank, const std::string& extra) const {
    if (on) std::fprintf(stderr, "h5sparse-mpi-timing rank=%d%s%s\n", rank, text.c_str(), extra.c_str());
  }
};

PhaseClock* g_clock = nullptr;  // the clock of the collective call in progress
void lap(const char* phase) {
  if (g_clock) g_clock->lap(phase);
}

// Runs `step` on every rank and lets all ranks learn whether it failed anywhere, so that no
// rank waits in a collective another rank never reaches. The failing rank rethrows its own
// error; the others report which rank failed.
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

}  // namespace

bool ParallelWrite::on_mpi_file(void* under, hid_t under_vol_id) {
  // H5Fget_mpi_atomicity answers only for MPI drivers, and locally: a probe that costs no
  // communication, so datasets opened by a single rank stay usable.
  const hid_t saved = H5Eget_current_stack();
  herr_t rc = -1;
  hbool_t flag = false;
  H5E_BEGIN_TRY {
    H5VL_native_file_optional_args_t nargs{};
    nargs.get_mpi_atomicity.flag = &flag;
    H5VL_optional_args_t args{H5VL_NATIVE_FILE_GET_MPI_ATOMICITY, &nargs};
    void* file = nullptr;
    try {
      file = file_of(under, under_vol_id);
    } catch (...) {
      file = nullptr;
    }
    if (file) rc = H5VLfile_optional(file, under_vol_id, &args, H5P_DATASET_XFER_DEFAULT, nullptr);
  }
  H5E_END_TRY
  if (saved >= 0) H5Eset_current_stack(saved);
  return rc >= 0;
}

void ParallelWrite::write(SparseDataset& d, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl,
                          const void* buf) {
  // Refused before any communication: every rank that calls with an independent transfer
  // fails alone, none waits.
  H5FD_mpio_xfer_t mode = H5FD_MPIO_INDEPENDENT;
  throw_if_negative(H5Pget_dxpl_mpio(dxpl, &mode), "cannot read the transfer mode");
  H5SPARSE_FAIL_IF(mode != H5FD_MPIO_COLLECTIVE, ErrorCode::unsupported,
          "writes to sparse datasets on MPI-IO files must be collective: set H5Pset_dxpl_mpio(dxpl, "
          "H5FD_MPIO_COLLECTIVE) (h5py: 'with dset.collective:') and call H5Dwrite on every rank");
  PhaseClock clock;
  const std::unique_ptr<MpiComm> comm = communicator(d.under_, d.under_vol_id_);
  std::unique_ptr<SparseDataset::Selection> sel;
  std::vector<ChunkPiece> pieces;
  Bytes storage;
  const std::uint8_t* source = nullptr;
  agree(*comm, "the sparse write", [&] {
    sel = std::make_unique<SparseDataset::Selection>(d.resolve(file_space, dxpl));
    const hid_t mspace = mem_space == H5S_ALL ? sel->space : mem_space;
    const hssize_t mem_points = H5Sget_select_npoints(mspace);
    throw_if_negative(mem_points, "cannot count the selected memory elements");
    H5SPARSE_FAIL_IF(mem_points != sel->npoints, ErrorCode::invalid_argument,
            "memory selection has " + std::to_string(mem_points) + " elements, file selection " +
                std::to_string(sel->npoints));
    if (sel->npoints == 0) return;
    H5SPARSE_FAIL_IF(buf == nullptr, ErrorCode::invalid_argument, "no data buffer to write from");
    source = d.file_values(mem_type, mspace, std::size_t(sel->npoints), dxpl, buf, storage);
    pieces = selection_pieces(sel->space, sel->grid);
  });
  clock.lap("prepare");
  g_clock = &clock;
  try {
    run(d, *comm, OwnerOp::write, pieces, sel->grid, sel->full.get(), source, dxpl);
  } catch (...) {
    g_clock = nullptr;
    throw;
  }
  g_clock = nullptr;
  clock.print(comm->rank(), " elements=" + std::to_string(sel->npoints));
}

void ParallelWrite::erase(SparseDataset& d, hid_t file_space, hid_t dxpl) {
  const std::unique_ptr<MpiComm> comm = communicator(d.under_, d.under_vol_id_);
  std::unique_ptr<SparseDataset::Selection> sel;
  std::vector<ChunkPiece> pieces;
  agree(*comm, "the sparse erase", [&] {
    sel = std::make_unique<SparseDataset::Selection>(d.resolve(file_space, dxpl));
    pieces = selection_pieces(sel->space, sel->grid);
    if (!d.collective_dxpl_.valid()) {
      d.collective_dxpl_ = checked(H5Pcreate(H5P_DATASET_XFER), "cannot create transfer properties");
      throw_if_negative(H5Pset_dxpl_mpio(d.collective_dxpl_.get(), H5FD_MPIO_COLLECTIVE),
                        "cannot request collective transfer");
    }
  });
  run(d, *comm, OwnerOp::erase, pieces, sel->grid, sel->full.get(), nullptr, d.collective_dxpl_.get());
}

namespace {

// Step 1 (core's owner_merge.hpp) on the wire: every rank's messages to every other
// (MPI_Alltoallv); `received[r]` points into `storage`.
std::vector<ByteView> exchange(const MpiComm& comm, std::vector<Bytes>& messages, Bytes& storage) {
  const std::size_t ranks = std::size_t(comm.size());
  std::vector<long long> send_sizes(ranks), recv_sizes(ranks);
  for (std::size_t r = 0; r < ranks; ++r) send_sizes[r] = static_cast<long long>(messages[r].size());
  check_mpi(MPI_Alltoall(send_sizes.data(), 1, MPI_LONG_LONG, recv_sizes.data(), 1, MPI_LONG_LONG, comm.get()),
            "exchanging message sizes");
  long long send_total = 0, recv_total = 0;
  for (std::size_t r = 0; r < ranks; ++r) {
    send_total += send_sizes[r];
    recv_total += recv_sizes[r];
  }
  agree(comm, "the sparse exchange", [&] {
    H5SPARSE_FAIL_IF(send_total > INT_MAX || recv_total > INT_MAX, ErrorCode::unsupported,
                     "one collective sparse write may move at most 2 GiB to or from each rank; split the write");
  });
  std::vector<int> scounts(ranks), sdispls(ranks), rcounts(ranks), rdispls(ranks);
  Bytes send(std::size_t(send_total ? send_total : 1));
  storage.assign(std::size_t(recv_total ? recv_total : 1), 0);
  for (std::size_t r = 0, s = 0, q = 0; r < ranks; ++r) {
    scounts[r] = int(send_sizes[r]);
    sdispls[r] = int(s);
    if (!messages[r].empty()) std::memcpy(&send[s], messages[r].data(), messages[r].size());
    s += std::size_t(scounts[r]);
    rcounts[r] = int(recv_sizes[r]);
    rdispls[r] = int(q);
    q += std::size_t(rcounts[r]);
  }
  messages.clear();
  check_mpi(MPI_Alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_BYTE, storage.data(), rcounts.data(),
                          rdispls.data(), MPI_BYTE, comm.get()),
            "exchanging chunk pieces");
  std::vector<ByteView> received;
  for (std::size_t r = 0; r < ranks; ++r) received.emplace_back(storage.data() + rdispls[r], std::size_t(rcounts[r]));
  return received;
}

// The file selection of one round's chunks (the part of each inside the extent).
void select_chunks(hid_t space, const ChunkGrid& grid, const std::vector<const OwnedChunk*>& chunks) {
  throw_if_negative(H5Sselect_none(space), "cannot clear the selection");
  const std::size_t rank = grid.rank();
  std::vector<hsize_t> start(rank), count(rank);
  for (const OwnedChunk* o : chunks) {
    const std::vector<std::uint64_t> origin = grid.chunk_origin(o->chunk);
    for (std::size_t j = 0; j < rank; ++j) {
      start[j] = origin[j];
      count[j] = std::min(grid.chunk_dims()[j], grid.dataset_dims()[j] - origin[j]);
    }
    throw_if_negative(H5Sselect_hyperslab(space, H5S_SELECT_OR, start.data(), nullptr, count.data(), nullptr),
                      "cannot select a chunk");
  }
}

// One round's memory: the bounding box of its chunks, selected like the file (same shape, so
// HDF5 maps memory to chunks block by block), each chunk's image copied into its place (pages
// outside the selection are never touched).
struct RoundMemory {
  Handle space;
  std::unique_ptr<std::uint8_t[]> bytes;
};

RoundMemory round_memory(const ChunkGrid& grid, const std::vector<const OwnedChunk*>& chunks, std::size_t es) {
  const std::size_t rank = grid.rank();
  const std::vector<std::uint64_t>& dims = grid.dataset_dims();
  const std::vector<std::uint64_t>& cdims = grid.chunk_dims();
  std::vector<std::uint64_t> lo(rank, 0), hi(rank, 0), box(rank, 1);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const std::vector<std::uint64_t> origin = grid.chunk_origin(chunks[c]->chunk);
    for (std::size_t j = 0; j < rank; ++j) {
      const std::uint64_t end = std::min(origin[j] + cdims[j], dims[j]);
      lo[j] = c == 0 ? origin[j] : std::min(lo[j], origin[j]);
      hi[j] = c == 0 ? end : std::max(hi[j], end);
    }
  }
  std::size_t box_elements = 1;
  for (std::size_t j = 0; j < rank && !chunks.empty(); ++j) {
    box[j] = hi[j] - lo[j];
    box_elements *= std::size_t(box[j]);
  }
  const std::vector<hsize_t> box_dims(box.begin(), box.end());
  RoundMemory m{checked(H5Screate_simple(int(rank), box_dims.data(), nullptr), "cannot create the memory dataspace"),
                std::unique_ptr<std::uint8_t[]>(new std::uint8_t[box_elements * es])};
  throw_if_negative(H5Sselect_none(m.space.get()), "cannot clear the memory selection");
  std::vector<std::uint64_t> at(rank), count(rank);
  for (const OwnedChunk* o : chunks) {
    const std::vector<std::uint64_t> origin = grid.chunk_origin(o->chunk);
    for (std::size_t j = 0; j < rank; ++j) {
      at[j] = origin[j] - lo[j];
      count[j] = std::min(cdims[j], dims[j] - origin[j]);
    }
    const std::vector<hsize_t> start(at.begin(), at.end()), block(count.begin(), count.end());
    throw_if_negative(H5Sselect_hyperslab(m.space.get(), H5S_SELECT_OR, start.data(), nullptr, block.data(), nullptr),
                      "cannot select a chunk in memory");
    copy_image_into_box(o->dense.data(), cdims, count, at, box, es, m.bytes.get());
  }
  return m;
}

}  // namespace

std::vector<OwnedChunk> ParallelWrite::merge(SparseDataset& d, OwnerOp op,
                                             std::map<std::uint64_t, std::vector<Contribution>>& work,
                                             const ChunkGrid& grid) {
  const SparseParams& params = d.params();
  PieceMerger merger(params.layout, params.fill.empty() ? nullptr : params.fill.data(), params.fill_is_undefined());
  const MPI_File fh = work.empty() ? MPI_FILE_NULL : mpi_file_handle(d.under_, d.under_vol_id_);
  NativeChunkStore names = d.store(H5P_DATASET_XFER_DEFAULT);  // names the chunk of a failure
  std::vector<OwnedChunk> owned;
  for (auto& [index, contributions] : work) {
    const std::vector<std::uint64_t> origin = grid.chunk_origin(index);
    const std::optional<LocatedChunk> old = read_stored_mpi(d.under_, d.under_vol_id_, fh, origin);
    StructuredChunk chunk = d.engine_.decode_stored(names, origin, old ? &*old : nullptr);
    std::optional<OwnedChunk> o = merge_contributions(params, grid, index, std::move(chunk), old.has_value(),
                                                      contributions, op, d.fill_never_, merger);
    if (o) owned.push_back(std::move(*o));
  }
  return owned;
}

void ParallelWrite::run(SparseDataset& d, const MpiComm& comm, OwnerOp op, const std::vector<ChunkPiece>& pieces,
                        const ChunkGrid& grid, hid_t full_space, const std::uint8_t* source, hid_t dxpl) {
  const std::size_t es = d.params().layout.element_size;
  const std::size_t self = std::size_t(comm.rank());
  // 1. Pieces to their chunks' owners; what a rank owns itself is used in place, not sent.
  RoutedPieces routed = route_to_owners(pieces, source, es, grid.chunk_count(), std::size_t(comm.size()), self);
  Bytes storage;
  const std::vector<ByteView> received = exchange(comm, routed.messages, storage);
  lap("exchange");
  // 2. Owners merge, rank by rank, and encode.
  std::vector<OwnedChunk> owned;
  int local_rounds = 0;
  agree(comm, "merging structured chunks", [&] {
    auto work = gather_contributions(received, std::move(routed.own), self, grid.chunk_count(), es, op);
    owned = merge(d, op, work, grid);
    local_rounds = assign_rounds(owned);
  });
  storage.clear();
  lap("merge_encode");
  int rounds = 0;
  check_mpi(MPI_Allreduce(&local_rounds, &rounds, 1, MPI_INT, MPI_MAX, comm.get()), "counting write rounds");
  // 3. One collective H5Dwrite per round, with our copy of the filter (the one that sees
  // PreEncodedChunks) registered for these writes only.
  std::optional<hdf5::StructuredChunkClassOverride> our_filter;
  agree(comm, "registering the structured-chunk filter", [&] { our_filter.emplace(hdf5::structured_chunk_class()); });
  for (int round = 0; round < rounds; ++round) write_round(d, comm, owned, round, grid, full_space, dxpl);
  lap("collective_write");
}

// Each owner selects its chunks of the round (the part inside the extent) and writes their
// dense images; the filter swaps in the encoded chunks.
void ParallelWrite::write_round(SparseDataset& d, const MpiComm& comm, const std::vector<OwnedChunk>& owned, int round,
                                const ChunkGrid& grid, hid_t full_space, hid_t dxpl) {
  hdf5::PreEncodedChunks pre(to_cd_values(d.params()));
  Handle file_space = checked(H5Scopy(full_space), "cannot copy the dataspace");
  RoundMemory memory;
  agree(comm, "preparing the collective chunk write", [&] {
    std::vector<const OwnedChunk*> chunks;
    for (const OwnedChunk& o : owned) {
      if (o.round != round) continue;
      chunks.push_back(&o);
      pre.add(o.dense.data(), o.dense.size(), o.encoded);
    }
    select_chunks(file_space.get(), grid, chunks);
    memory = round_memory(grid, chunks, d.params().layout.element_size);
  });
  lap("select");
  herr_t rc = 0;
  {
    hdf5::PreEncodedChunks::Activation active(pre);
    void* under = d.under_;
    hid_t type = d.file_type_.get(), ms = memory.space.get(), fs = file_space.get();
    const void* bufs[] = {memory.bytes.get()};
    rc = H5VLdataset_write(1, &under, d.under_vol_id_, &type, &ms, &fs, dxpl, bufs, nullptr);
  }
  // Every registered chunk taken, nothing else encoded: else HDF5 stored something the
  // connector did not mean (dense semantics) and the caller must know.
  long long local[2] = {rc < 0 ? 1 : 0, static_cast<long long>(pre.misses() + pre.pending())}, total[2] = {0, 0};
  check_mpi(MPI_Allreduce(local, total, 2, MPI_LONG_LONG, MPI_SUM, comm.get()), "checking the chunk write");
  H5SPARSE_FAIL_IF(rc < 0, ErrorCode::hdf5_call, "the collective write of structured chunks failed");
  H5SPARSE_FAIL_IF(total[0] > 0, ErrorCode::hdf5_call,
                   "the collective write of structured chunks failed on " + std::to_string(total[0]) + " rank(s)");
  H5SPARSE_FAIL_IF(total[1] > 0, ErrorCode::internal_error,
                   std::to_string(total[1]) + " chunk(s) of this collective write did not reach the file as the "
                   "connector encoded them (their defined elements may differ from what was written); please report this");
}

}  // namespace h5sparse::vol
