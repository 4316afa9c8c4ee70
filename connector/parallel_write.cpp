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
  H5SPARSE_FAIL_IF(rc != MPI_SUCCESS, ErrorCode::codec_failure, std::string("MPI failure: ") + what);
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
  H5SPARSE_FAIL_IF(handle == nullptr, ErrorCode::codec_failure, "the file has no MPI-IO handle");
  return *static_cast<MPI_File*>(handle);
}

// The chunk stored at `origin`, its bytes read with an independent MPI_File_read_at. Not with
// H5Dread_chunk: HDF5 fixes the transfer mode of the whole API call on its first raw-data read
// (the API context caches it), and the collective chunk write that follows in the same call
// would then run as an (refused) independent one; a collective read would wait for ranks that
// own other chunks.
std::optional<StoredChunk> read_stored_mpi(void* under, hid_t under_vol_id, MPI_File fh,
                                           const std::vector<std::uint64_t>& origin) {
  const std::vector<hsize_t> offset(origin.begin(), origin.end());
  StoredChunk chunk;
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

// --- messages: per chunk [chunk, piece count, (start, length) per piece, values if a write] ----
void put_u64(Bytes& out, std::uint64_t v) {
  const std::size_t at = out.size();
  out.resize(at + 8);
  std::memcpy(&out[at], &v, 8);
}

std::uint64_t get_u64(const std::uint8_t*& p, const std::uint8_t* end) {
  H5SPARSE_FAIL_IF(end - p < 8, ErrorCode::codec_failure, "truncated exchange message");
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  p += 8;
  return v;
}

// What one rank asks the owner to do to one chunk.
struct Contribution {
  std::vector<ChunkPiece> pieces;  // source: element index into `values`
  const std::uint8_t* values = nullptr;
};

// The chunk as its owner stores it this time: the dense image HDF5 will hand the filter and
// the structured chunk the filter must return for it.
struct OwnedChunk {
  std::uint64_t chunk;
  Bytes dense;
  Bytes encoded;
  int round = 0;
};

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
    run(d, *comm, Op::write, pieces, sel->grid, sel->full.get(), source, dxpl);
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
  run(d, *comm, Op::erase, pieces, sel->grid, sel->full.get(), nullptr, d.collective_dxpl_.get());
}

namespace {

// Rounds: within one collective H5Dwrite a rank's dense images must identify their encodings.
// Chunks whose images are equal byte for byte but whose encodings differ (e.g. one erased
// chunk and one whose defined elements all hold the fill value) go into different rounds.
int assign_rounds(std::vector<OwnedChunk>& owned) {
  std::unordered_multimap<std::uint64_t, std::size_t> by_image;
  int rounds = owned.empty() ? 0 : 1;
  for (std::size_t i = 0; i < owned.size(); ++i) {
    const std::uint64_t h = xxh3_64(owned[i].dense.data(), owned[i].dense.size());
    std::vector<int> taken;  // rounds holding the same image with another encoding
    bool same_as_earlier = false;
    const auto [first, last] = by_image.equal_range(h);
    for (auto it = first; it != last && !same_as_earlier; ++it) {
      const OwnedChunk& other = owned[it->second];
      if (other.dense != owned[i].dense) continue;
      if (other.encoded == owned[i].encoded) {
        owned[i].round = other.round;
        same_as_earlier = true;
      } else {
        taken.push_back(other.round);
      }
    }
    if (!same_as_earlier) {
      int r = 0;
      while (std::find(taken.begin(), taken.end(), r) != taken.end()) ++r;
      owned[i].round = r;
    }
    rounds = std::max(rounds, owned[i].round + 1);
    by_image.emplace(h, i);
  }
  return rounds;
}

}  // namespace

void ParallelWrite::run(SparseDataset& d, const MpiComm& comm, Op op, const std::vector<ChunkPiece>& pieces,
                        const ChunkGrid& grid, hid_t full_space, const std::uint8_t* source, hid_t dxpl) {
  const SparseParams& params = d.params_;
  const std::size_t es = params.layout.element_size;
  const int nranks = comm.size();
  const std::size_t ranks = std::size_t(nranks);

  // 1. Pieces to their chunks' owners. Chunks are owned in contiguous runs of the chunk order
  // (rank r: chunks [r*C/P, (r+1)*C/P)), so that ranks writing bands of rows mostly own what
  // they write; what a rank owns itself is used in place, not sent.
  const std::uint64_t chunk_count = grid.chunk_count();
  auto owner_of = [&](std::uint64_t chunk) {
    return std::size_t((static_cast<unsigned __int128>(chunk) * ranks) / chunk_count);
  };
  std::vector<Bytes> outgoing(ranks);
  std::vector<Contribution> own;  // this rank's pieces of the chunks it owns, values in `source`
  for (std::size_t begin = 0; begin < pieces.size();) {
    std::size_t end = begin;
    while (end < pieces.size() && pieces[end].chunk == pieces[begin].chunk) ++end;
    const std::size_t owner = owner_of(pieces[begin].chunk);
    if (owner == std::size_t(comm.rank())) {
      own.push_back(Contribution{std::vector<ChunkPiece>(pieces.begin() + std::ptrdiff_t(begin),
                                                         pieces.begin() + std::ptrdiff_t(end)),
                                 source});
      begin = end;
      continue;
    }
    Bytes& out = outgoing[owner];
    put_u64(out, pieces[begin].chunk);
    put_u64(out, end - begin);
    for (std::size_t i = begin; i < end; ++i) {
      put_u64(out, pieces[i].in_chunk_start);
      put_u64(out, pieces[i].length);
    }
    if (op == Op::write)
      for (std::size_t i = begin; i < end; ++i)
        out.insert(out.end(), source + pieces[i].source * es, source + (pieces[i].source + pieces[i].length) * es);
    begin = end;
  }
  std::vector<long long> send_sizes(ranks), recv_sizes(ranks);
  for (int r = 0; r < nranks; ++r) send_sizes[std::size_t(r)] = static_cast<long long>(outgoing[std::size_t(r)].size());
  check_mpi(MPI_Alltoall(send_sizes.data(), 1, MPI_LONG_LONG, recv_sizes.data(), 1, MPI_LONG_LONG, comm.get()),
            "exchanging message sizes");
  long long send_total = 0, recv_total = 0;
  for (int r = 0; r < nranks; ++r) {
    send_total += send_sizes[std::size_t(r)];
    recv_total += recv_sizes[std::size_t(r)];
  }
  agree(comm, "the sparse exchange", [&] {
    H5SPARSE_FAIL_IF(send_total > INT_MAX || recv_total > INT_MAX, ErrorCode::unsupported,
            "one collective sparse write may move at most 2 GiB to or from each rank; split the write");
  });
  std::vector<int> scounts(ranks), sdispls(ranks), rcounts(ranks),
      rdispls(ranks);
  Bytes send(std::size_t(send_total ? send_total : 1)), recv(std::size_t(recv_total ? recv_total : 1));
  for (int r = 0, s = 0, q = 0; r < nranks; ++r) {
    const std::size_t i = std::size_t(r);
    scounts[i] = int(send_sizes[i]);
    sdispls[i] = s;
    if (!outgoing[i].empty()) std::memcpy(&send[std::size_t(s)], outgoing[i].data(), outgoing[i].size());
    s += scounts[i];
    rcounts[i] = int(recv_sizes[i]);
    rdispls[i] = q;
    q += rcounts[i];
  }
  outgoing.clear();
  check_mpi(MPI_Alltoallv(send.data(), scounts.data(), sdispls.data(), MPI_BYTE, recv.data(), rcounts.data(),
                          rdispls.data(), MPI_BYTE, comm.get()),
            "exchanging chunk pieces");
  lap("exchange");

  // 2. Owners merge, rank by rank, and encode.
  std::vector<OwnedChunk> owned;
  int local_rounds = 0;
  agree(comm, "merging structured chunks", [&] {
    std::map<std::uint64_t, std::vector<Contribution>> work;
    for (int r = 0; r < nranks; ++r) {
      if (r == comm.rank())  // in rank order like the others
        for (Contribution& c : own) work[c.pieces.front().chunk].push_back(std::move(c));
      const std::uint8_t* p = recv.data() + rdispls[std::size_t(r)];
      const std::uint8_t* end = p + rcounts[std::size_t(r)];
      while (p < end) {
        Contribution c;
        const std::uint64_t chunk = get_u64(p, end);
        const std::uint64_t count = get_u64(p, end);
        H5SPARSE_FAIL_IF(chunk >= grid.chunk_count() || count > std::uint64_t(end - p) / 16, ErrorCode::codec_failure,
                "malformed exchange message");
        std::uint64_t elements = 0;
        for (std::uint64_t k = 0; k < count; ++k) {
          const std::uint64_t start = get_u64(p, end), length = get_u64(p, end);
          c.pieces.push_back(ChunkPiece{chunk, start, length, elements});
          elements += length;
        }
        if (op == Op::write) {
          H5SPARSE_FAIL_IF(std::uint64_t(end - p) < elements * es, ErrorCode::codec_failure, "truncated exchange message");
          c.values = p;
          p += elements * es;
        }
        work[chunk].push_back(std::move(c));
      }
    }
    const std::uint8_t* fill = params.fill.empty() ? nullptr : params.fill.data();
    PieceMerger merger(params.layout, fill, params.fill_is_undefined());
    const std::uint64_t chunk_elements = params.layout.element_count();
    const MPI_File fh = work.empty() ? MPI_FILE_NULL : mpi_file_handle(d.under_, d.under_vol_id_);
    for (auto& [index, contributions] : work) {
      const std::vector<std::uint64_t> origin = grid.chunk_origin(index);
      const std::optional<StoredChunk> old = read_stored_mpi(d.under_, d.under_vol_id_, fh, origin);
      const bool stored = old.has_value();
      StructuredChunk chunk = d.decode_stored(origin, old ? &*old : nullptr);
      for (const Contribution& c : contributions) {
        if (op == Op::write) merger.write(chunk, c.pieces.data(), c.pieces.data() + c.pieces.size(), c.values);
        else merger.erase(chunk, c.pieces.data(), c.pieces.data() + c.pieces.size());
      }
      if (!stored && chunk.defined.none()) continue;  // nothing was there, nothing is now
      OwnedChunk o{index, Bytes(chunk_elements * es), encode_chunk(chunk, params.layout), 0};
      expand_to_dense(chunk, params.layout, fill, o.dense.data());
      if (!stored && d.fill_never_) {
        // HDF5 zero-fills the part of a new edge chunk outside the extent when fill values are
        // never written: the image must be what the filter will be handed.
        for (std::uint64_t k = 0; k < chunk_elements; ++k)
          if (!grid.inside_extent(index, k)) std::memset(&o.dense[k * es], 0, es);
      }
      owned.push_back(std::move(o));
    }
    local_rounds = assign_rounds(owned);
  });
  recv.clear();
  lap("merge_encode");
  int rounds = 0;
  check_mpi(MPI_Allreduce(&local_rounds, &rounds, 1, MPI_INT, MPI_MAX, comm.get()), "counting write rounds");

  // 3. One collective H5Dwrite per round: each owner selects its chunks (the part inside the
  // extent) and writes their dense images; the filter swaps in the encoded chunks.
  // Our copy of the filter, the one that sees PreEncodedChunks, for these writes only.
  std::optional<hdf5::StructuredChunkClassOverride> our_filter;
  agree(comm, "registering the structured-chunk filter", [&] { our_filter.emplace(hdf5::structured_chunk_class()); });
  const std::size_t rank = grid.rank();
  const std::vector<std::uint64_t>& dims = grid.dataset_dims();
  const std::vector<std::uint64_t>& cdims = grid.chunk_dims();
  std::vector<unsigned> cd_values = to_cd_values(params);
  for (int round = 0; round < rounds; ++round) {
    hdf5::PreEncodedChunks pre(cd_values);
    Handle file_space = checked(H5Scopy(full_space), "cannot copy the dataspace");
    Handle mem_space;
    std::unique_ptr<std::uint8_t[]> memory;
    herr_t rc = 0;
    agree(comm, "preparing the collective chunk write", [&] {
      throw_if_negative(H5Sselect_none(file_space.get()), "cannot clear the selection");
      std::unordered_map<std::uint64_t, const OwnedChunk*> in_round;
      for (const OwnedChunk& o : owned) {
        if (o.round != round) continue;
        in_round.emplace(o.chunk, &o);
        pre.add(o.dense.data(), o.dense.size(), o.encoded);
        const std::vector<std::uint64_t> origin = grid.chunk_origin(o.chunk);
        std::vector<hsize_t> start(rank), count(rank);
        for (std::size_t j = 0; j < rank; ++j) {
          start[j] = origin[j];
          count[j] = std::min(cdims[j], dims[j] - origin[j]);
        }
        throw_if_negative(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_OR, start.data(), nullptr, count.data(),
                                              nullptr),
                          "cannot select a chunk");
      }
      // Memory: the bounding box of this round's chunks, selected like the file (same shape,
      // so HDF5 maps memory to chunks block by block), each chunk's image copied into its place
      // (pages outside the selection are never touched).
      std::vector<hsize_t> lo(rank, 0), hi(rank, 0);
      bool first = true;
      for (const auto& [index, o] : in_round) {
        const std::vector<std::uint64_t> origin = grid.chunk_origin(index);
        for (std::size_t j = 0; j < rank; ++j) {
          const hsize_t end = std::min(origin[j] + cdims[j], dims[j]);
          lo[j] = first ? origin[j] : std::min<hsize_t>(lo[j], origin[j]);
          hi[j] = first ? end : std::max<hsize_t>(hi[j], end);
        }
        first = false;
      }
      std::vector<hsize_t> box(rank, 1);
      std::size_t box_elements = 1;
      for (std::size_t j = 0; j < rank && !in_round.empty(); ++j) {
        box[j] = hi[j] - lo[j];
        box_elements *= std::size_t(box[j]);
      }
      memory.reset(new std::uint8_t[box_elements * es]);
      mem_space = checked(H5Screate_simple(int(rank), box.data(), nullptr), "cannot create the memory dataspace");
      throw_if_negative(H5Sselect_none(mem_space.get()), "cannot clear the memory selection");
      for (const auto& [index, o] : in_round) {
        const std::vector<std::uint64_t> origin = grid.chunk_origin(index);
        std::vector<hsize_t> at(rank), count(rank);
        for (std::size_t j = 0; j < rank; ++j) {
          at[j] = origin[j] - lo[j];
          count[j] = std::min(cdims[j], dims[j] - origin[j]);
        }
        throw_if_negative(H5Sselect_hyperslab(mem_space.get(), H5S_SELECT_OR, at.data(), nullptr, count.data(), nullptr),
                          "cannot select a chunk in memory");
        // Copy the image row by row (rows along the last dimension), odometer over the others.
        std::vector<hsize_t> i(rank, 0);
        const std::size_t row = std::size_t(count[rank - 1]) * es;
        while (true) {
          std::size_t src = 0, dst = 0;
          for (std::size_t j = 0; j < rank; ++j) {
            src = src * cdims[j] + i[j];
            dst = dst * box[j] + at[j] + i[j];
          }
          std::memcpy(&memory[dst * es], &o->dense[src * es], row);
          std::size_t j = rank - 1;
          while (j-- > 0 && ++i[j] == count[j]) i[j] = 0;
          if (j == SIZE_MAX) break;
        }
      }
    });
    lap("select");
    {
      hdf5::PreEncodedChunks::Activation active(pre);
      void* under = d.under_;
      hid_t type = d.file_type_.get(), ms = mem_space.get(), fs = file_space.get();
      const void* bufs[] = {memory.get()};
      rc = H5VLdataset_write(1, &under, d.under_vol_id_, &type, &ms, &fs, dxpl, bufs, nullptr);
    }
    // Every registered chunk taken, nothing else encoded: else HDF5 stored something the
    // connector did not mean (dense semantics) and the caller must know.
    long long local[2] = {rc < 0 ? 1 : 0, static_cast<long long>(pre.misses() + pre.pending())}, total[2] = {0, 0};
    check_mpi(MPI_Allreduce(local, total, 2, MPI_LONG_LONG, MPI_SUM, comm.get()), "checking the chunk write");
    H5SPARSE_FAIL_IF(rc < 0, ErrorCode::codec_failure, "the collective write of structured chunks failed");
    H5SPARSE_FAIL_IF(total[0] > 0, ErrorCode::codec_failure,
            "the collective write of structured chunks failed on " + std::to_string(total[0]) + " rank(s)");
    H5SPARSE_FAIL_IF(total[1] > 0, ErrorCode::codec_failure,
            std::to_string(total[1]) + " chunk(s) of this collective write did not reach the file as the connector "
            "encoded them (their defined elements may differ from what was written); please report this");
  }
  lap("collective_write");
}

}  // namespace h5sparse::vol
