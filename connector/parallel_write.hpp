// Sparse writes and erases on MPI-IO files (parallel flavour only). Collective: every rank of
// the file's communicator calls them, each with its own selection (possibly empty). Each
// chunk has one owner rank; the ranks send the owners their pieces, each owner merges them
// into the stored structured chunk and encodes it (core's engine/owner_merge.hpp), and all
// ranks store their chunks with one collective H5Dwrite of the chunks' dense images, which the
// structured-chunk filter replaces by the pre-encoded chunks (filters/pre_encoded_chunks.hpp).
// No direct chunk writes: HDF5 allocates and indexes the chunks collectively. docs/DESIGN.md,
// "Parallel HDF5", has the design and its trade-offs.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <map>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "file_selection.hpp"
#include "h5sparse/engine/owner_merge.hpp"
#include "mpi_collective.hpp"

namespace h5sparse::vol {

class SparseDataset;

class ParallelWrite {
 public:
  /// H5Dwrite on a sparse dataset of an MPI-IO file; `dxpl` must request collective transfer.
  static void write(SparseDataset& dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl,
                    const void* buf);
  /// Erase on a sparse dataset of an MPI-IO file (collective whatever `dxpl` says).
  static void erase(SparseDataset& dataset, hid_t file_space, hid_t dxpl);
  /// Coordinate writes and erases: those of the points' selection, collective whatever `dxpl`
  /// says (as erase).
  static void write_points(SparseDataset& dataset, std::size_t n, const hsize_t* coords, hid_t mem_type,
                           const void* values, hid_t dxpl);
  static void erase_points(SparseDataset& dataset, std::size_t n, const hsize_t* coords, hid_t dxpl);

 private:
  /// The coordinates' dataspaces, made on every rank before any goes on.
  static hdf5::PointSpaces agreed_points(SparseDataset& dataset, std::size_t n, const hsize_t* coords, hid_t dxpl);
  /// The collective part, after each rank resolved its selection; `source` is null for erase.
  static void run(SparseDataset& dataset, const hdf5::MpiComm& comm, OwnerOp op, const std::vector<ChunkPiece>& pieces,
                  const ChunkGrid& grid, hid_t full_space, const std::uint8_t* source, hid_t dxpl,
                  hdf5::PhaseClock& clock);
  /// An owner's chunks: what is stored read with MPI-IO, the contributions merged and encoded.
  static std::vector<OwnedChunk> merge(SparseDataset& dataset, OwnerOp op,
                                       std::map<std::uint64_t, std::vector<Contribution>>& work,
                                       const ChunkGrid& grid);
  /// One collective H5Dwrite of the round's dense images, the filter swapping in the encodings.
  static void write_round(SparseDataset& dataset, const hdf5::MpiComm& comm, const std::vector<OwnedChunk>& owned,
                          int round, const ChunkGrid& grid, hid_t full_space, hid_t dxpl, hdf5::PhaseClock& clock);
};

}  // namespace h5sparse::vol
