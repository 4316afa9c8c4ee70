// Collective sparse writes and erases on MPI-IO files (see parallel_write.hpp).
#include "parallel_write.hpp"

#include <H5VLconnector_passthru.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "error_stack.hpp"
#include "file_selection.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/piece_merge.hpp"
#include "memory_selection.hpp"
#include "pre_encoded_chunks.hpp"
#include "sparse_dataset.hpp"
#include "structured_chunk_class.hpp"

namespace h5sparse::vol {

using hdf5::agree;
using hdf5::check_mpi;
using hdf5::MpiComm;

void ParallelWrite::write(SparseDataset& d, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl,
                          const void* buf) {
  // Refused before any communication: every rank that calls with an independent transfer
  // fails alone, none waits.
  H5FD_mpio_xfer_t mode = H5FD_MPIO_INDEPENDENT;
  hdf5::throw_if_negative(H5Pget_dxpl_mpio(dxpl, &mode), "cannot read the transfer mode");
  H5SPARSE_FAIL_IF(mode != H5FD_MPIO_COLLECTIVE, ErrorCode::unsupported,
          "writes to sparse datasets on MPI-IO files must be collective: set H5Pset_dxpl_mpio(dxpl, "
          "H5FD_MPIO_COLLECTIVE) (h5py: 'with dset.collective:') and call H5Dwrite on every rank");
  hdf5::PhaseClock clock;
  const std::unique_ptr<MpiComm> comm = hdf5::file_communicator(d.under_, d.under_vol_id_);
  std::unique_ptr<SparseDataset::Selection> sel;
  std::vector<ChunkPiece> pieces;
  Bytes storage;
  const std::uint8_t* source = nullptr;
  agree(*comm, "the sparse write", [&] {
    sel = std::make_unique<SparseDataset::Selection>(d.resolve(file_space, dxpl));
    const hid_t mspace = hdf5::memory_space_for(mem_space, *sel);
    if (sel->npoints == 0) return;
    H5SPARSE_FAIL_IF(buf == nullptr, ErrorCode::invalid_argument, "no data buffer to write from");
    source = hdf5::values_in_file_type(mem_type, mspace, std::size_t(sel->npoints), d.file_type_.get(), d.params().fill,
                                       dxpl, buf, storage);
    pieces = hdf5::selection_pieces(sel->space, sel->grid);
  });
  clock.lap("prepare");
  run(d, *comm, OwnerOp::write, pieces, sel->grid, sel->full.get(), source, dxpl, clock);
  clock.print(comm->rank(), " elements=" + std::to_string(sel->npoints));
}

void ParallelWrite::erase(SparseDataset& d, hid_t file_space, hid_t dxpl) {
  hdf5::PhaseClock clock;  // not printed
  const std::unique_ptr<MpiComm> comm = hdf5::file_communicator(d.under_, d.under_vol_id_);
  std::unique_ptr<SparseDataset::Selection> sel;
  std::vector<ChunkPiece> pieces;
  agree(*comm, "the sparse erase", [&] {
    sel = std::make_unique<SparseDataset::Selection>(d.resolve(file_space, dxpl));
    pieces = hdf5::selection_pieces(sel->space, sel->grid);
    hdf5::collective_transfer(d.collective_dxpl_);
  });
  run(d, *comm, OwnerOp::erase, pieces, sel->grid, sel->full.get(), nullptr, d.collective_dxpl_.get(), clock);
}

void ParallelWrite::write_points(SparseDataset& d, std::size_t n, const hsize_t* coords, hid_t mem_type,
                                 const void* values, hid_t dxpl) {
  const hdf5::PointSpaces points = agreed_points(d, n, coords, dxpl);
  write(d, mem_type, points.memory.get(), points.file.get(), d.collective_dxpl_.get(), values);
}

void ParallelWrite::erase_points(SparseDataset& d, std::size_t n, const hsize_t* coords, hid_t dxpl) {
  erase(d, agreed_points(d, n, coords, dxpl).file.get(), dxpl);
}

hdf5::PointSpaces ParallelWrite::agreed_points(SparseDataset& d, std::size_t n, const hsize_t* coords, hid_t dxpl) {
  hdf5::PointSpaces points;
  agree(*hdf5::file_communicator(d.under_, d.under_vol_id_), "selecting the coordinates", [&] {
    points = hdf5::point_spaces(d.extent(dxpl), n, coords);
    hdf5::collective_transfer(d.collective_dxpl_);
  });
  return points;
}

std::vector<OwnedChunk> ParallelWrite::merge(SparseDataset& d, OwnerOp op,
                                             std::map<std::uint64_t, std::vector<Contribution>>& work,
                                             const ChunkGrid& grid) {
  const SparseParams& params = d.params();
  PieceMerger merger(params.layout, params.fill.empty() ? nullptr : params.fill.data(), params.fill_is_undefined());
  const MPI_File fh = work.empty() ? MPI_FILE_NULL : hdf5::mpi_file_handle(d.under_, d.under_vol_id_);
  hdf5::NativeChunkStore names = d.store(H5P_DATASET_XFER_DEFAULT);  // names the chunk of a failure
  std::vector<OwnedChunk> owned;
  for (auto& [index, contributions] : work) {
    const std::vector<std::uint64_t> origin = grid.chunk_origin(index);
    const std::optional<hdf5::LocatedChunk> old = hdf5::read_stored_chunk_mpi(d.under_, d.under_vol_id_, fh, origin);
    StructuredChunk chunk = d.engine_.decode_stored(names, origin, old ? &*old : nullptr);
    std::optional<OwnedChunk> o = merge_contributions(params, grid, index, std::move(chunk), old.has_value(),
                                                      contributions, op, d.fill_never_, merger);
    if (o) owned.push_back(std::move(*o));
  }
  return owned;
}

void ParallelWrite::run(SparseDataset& d, const MpiComm& comm, OwnerOp op, const std::vector<ChunkPiece>& pieces,
                        const ChunkGrid& grid, hid_t full_space, const std::uint8_t* source, hid_t dxpl,
                        hdf5::PhaseClock& clock) {
  const std::size_t es = d.params().layout.element_size;
  const std::size_t self = std::size_t(comm.rank());
  // 1. Pieces to their chunks' owners; what a rank owns itself is used in place, not sent.
  RoutedPieces routed = route_to_owners(pieces, source, es, grid.chunk_count(), std::size_t(comm.size()), self);
  Bytes storage;
  const std::vector<ByteView> received = hdf5::exchange_messages(comm, routed.messages, storage);
  clock.lap("exchange");
  // 2. Owners merge, rank by rank, and encode.
  std::vector<OwnedChunk> owned;
  int local_rounds = 0;
  agree(comm, "merging structured chunks", [&] {
    auto work = gather_contributions(received, std::move(routed.own), self, grid.chunk_count(), es, op);
    owned = merge(d, op, work, grid);
    local_rounds = assign_rounds(owned);
  });
  storage.clear();
  clock.lap("merge_encode");
  int rounds = 0;
  check_mpi(MPI_Allreduce(&local_rounds, &rounds, 1, MPI_INT, MPI_MAX, comm.get()), "counting write rounds");
  // 3. One collective H5Dwrite per round, with our copy of the filter (the one that sees
  // PreEncodedChunks) registered for these writes only.
  std::optional<hdf5::StructuredChunkClassOverride> our_filter;
  agree(comm, "registering the structured-chunk filter", [&] { our_filter.emplace(hdf5::structured_chunk_class()); });
  for (int round = 0; round < rounds; ++round) write_round(d, comm, owned, round, grid, full_space, dxpl, clock);
  clock.lap("collective_write");
}

// Each owner selects its chunks of the round (the part inside the extent) and writes their
// dense images; the filter swaps in the encoded chunks.
void ParallelWrite::write_round(SparseDataset& d, const MpiComm& comm, const std::vector<OwnedChunk>& owned, int round,
                                const ChunkGrid& grid, hid_t full_space, hid_t dxpl, hdf5::PhaseClock& clock) {
  hdf5::PreEncodedChunks pre(to_cd_values(d.params()));
  hdf5::Handle file_space = hdf5::checked(H5Scopy(full_space), "cannot copy the dataspace");
  hdf5::ImageBox memory;
  agree(comm, "preparing the collective chunk write", [&] {
    std::vector<const OwnedChunk*> chunks;
    std::vector<std::uint64_t> indices;
    for (const OwnedChunk& o : owned) {
      if (o.round != round) continue;
      chunks.push_back(&o);
      indices.push_back(o.chunk);
      pre.add(o.dense.data(), o.dense.size(), o.encoded);
    }
    hdf5::select_chunks(file_space.get(), grid, indices);
    memory = hdf5::image_box(grid, chunks, d.params().layout.element_size);
  });
  clock.lap("select");
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
