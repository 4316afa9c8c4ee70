// An ordinary (dense) chunked dataset whose whole filter pipeline is Blosc (32001): the
// connector reads and writes its chunks itself, encoding and decoding them on
// H5SPARSE_NTHREADS threads while the calling thread makes every HDF5 call (direct chunk
// reads and writes). Through HDF5's pipeline each chunk's decode runs between serial per-chunk
// work on one thread; here that work overlaps the codec (docs/DESIGN.md, "Dense Blosc chunks
// on all cores"). Calls this path does not cover take the native path, which gives the same
// values: it is an optimisation, never a second meaning.
#pragma once

#include <hdf5.h>

#include <memory>
#include <utility>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/codecs.hpp"
#include "handle.hpp"

namespace h5sparse::vol {

struct Object;

class DenseBloscDataset {
 public:
  /// The dense Blosc view of a dataset, or nullptr when its layout, pipeline, type or fill
  /// settings are not ones this path reproduces exactly (the native path serves it).
  static std::unique_ptr<DenseBloscDataset> detect(void* under, hid_t under_vol_id, hid_t dxpl);

  /// H5Dread of many chunks decoded on several threads (dense_chunk_read.cpp); false, having
  /// done nothing, when the native path must serve the call.
  bool read(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void* buf) const;
  /// H5Dwrite of whole chunks encoded on several threads (dense_chunk_write.cpp); false, having
  /// done nothing, when the native path must serve the call.
  bool write(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, const void* buf) const;

 private:
  DenseBloscDataset(void* under, hid_t under_vol_id) : under_(under), under_vol_id_(under_vol_id) {}

  /// A transfer this path can serve: equal types, no data transform, valid selections of
  /// equal size, enough chunks and bytes for threads to pay.
  struct Transfer {
    hdf5::Handle full;       // the dataset's current dataspace
    hid_t file_space;        // the file selection (full or the caller's)
    hid_t mem_space;         // the memory selection
    ChunkGrid grid;
    std::uint64_t npoints;
    std::vector<ChunkPiece> pieces;  // grouped by chunk; empty when every element is selected
    std::vector<std::size_t> group_starts;  // not whole: chunk k's pieces are [group_starts[k], [k+1])
    bool whole;                      // every element of the extent, in row-major order
    std::uint64_t chunks;            // chunks the selection touches
    int threads;

    /// The linear grid index of the k-th chunk the transfer touches.
    std::uint64_t chunk_index(std::size_t k) const { return whole ? k : pieces[group_starts[k]].chunk; }
    /// Chunk k's pieces: for a whole transfer made into `whole_pieces`, else its group of `pieces`.
    std::pair<const ChunkPiece*, std::size_t> chunk_pieces(std::size_t k, std::vector<ChunkPiece>& whole_pieces) const {
      if (!whole) return {&pieces[group_starts[k]], group_starts[k + 1] - group_starts[k]};
      whole_pieces.clear();
      grid.whole_chunk_pieces(k, whole_pieces);
      return {whole_pieces.data(), whole_pieces.size()};
    }
  };
  /// The transfer, or nothing when the native path should serve it (any doubt: native).
  std::unique_ptr<Transfer> plan(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl,
                                 bool for_write) const;
  /// "dataset '/a/b', chunk at (0, 64)": context for error messages.
  std::string where(const std::vector<std::uint64_t>& origin) const;

  void* under_;
  hid_t under_vol_id_;
  hdf5::Handle file_type_;
  std::vector<std::uint64_t> chunk_dims_;
  std::size_t element_size_ = 0;
  std::size_t chunk_bytes_ = 0;
  BloscParams params_;
  bool optional_ = false;  // H5Z_FLAG_OPTIONAL: a chunk that does not compress is stored raw
  Bytes fill_;             // one element; empty means zeros
};

/// H5Dread/H5Dwrite of one dataset through the dense Blosc path when it applies (the dataset
/// is recognised on its first transfer, and remembered); false: the caller forwards the call.
bool read_dense_chunks(Object* dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void* buf);
bool write_dense_chunks(Object* dataset, hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl,
                        const void* buf);

}  // namespace h5sparse::vol
