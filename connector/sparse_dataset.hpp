// A sparse dataset seen from the connector: a native chunked dataset whose pipeline holds the
// structured-chunk filter. Writes define exactly the written elements (read-merge-write of
// structured chunks through the native direct chunk operations); reads go through the native
// path, where the filter expands chunks with the fill value; get-defined and erase read and
// rewrite structured chunks.
#pragma once

#include <hdf5.h>

#include <memory>
#include <string>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/chunk_threads.hpp"
#include "h5sparse/decoded_chunk_cache.hpp"
#include "h5sparse/sparse_layout.hpp"
#include "handle.hpp"
#include "native_dataset.hpp"

namespace h5sparse::vol {

/// True when the selection is every element of the extent: all, or a hyperslab selection with as
/// many elements (a hyperslab never selects an element twice; its order is row-major).
bool selects_everything(hid_t space, const ChunkGrid& grid, std::uint64_t npoints);

/// The selection's pieces grouped by chunk, in selection order inside each chunk (`source`
/// numbers the elements in the order H5Dread/H5Dwrite pair them with memory elements).
std::vector<ChunkPiece> selection_pieces(hid_t space, const ChunkGrid& grid);

/// The chunks pieces grouped by chunk (selection_pieces) fall in.
std::uint64_t chunks_of(const std::vector<ChunkPiece>& pieces);

/// Where each chunk's group of such pieces starts, followed by pieces.size(): chunk k's pieces
/// are [starts[k], starts[k + 1]).
std::vector<std::size_t> chunk_group_starts(const std::vector<ChunkPiece>& pieces);

class SparseDataset {
 public:
  /// Returns the sparse view of a freshly created or opened dataset, or nullptr when it is an
  /// ordinary dataset (no structured-chunk filter in its pipeline).
  static std::unique_ptr<SparseDataset> detect(void* under, hid_t under_vol_id, hid_t dxpl);

  /// Before a dataset is created: refuses what a sparse dataset cannot be (HDF5 would silently
  /// drop the structured-chunk filter for variable-length types and create a dense dataset).
  static void check_create(hid_t dcpl, hid_t type);

  /// H5Dwrite semantics with the RFC's meaning: the selected elements become defined.
  void write(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, const void* buf);
  /// A dataspace (dataset extent) selecting the defined elements among those selected.
  hid_t get_defined(hid_t file_space, hid_t dxpl);
  /// H5Dread with the RFC's meaning (undefined elements read as the fill value), decoding
  /// chunks straight into `buf`. Returns false, having done nothing, for a call the native
  /// path must serve (datatype conversion, data transform, fill time "never").
  bool read(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void* buf) const;
  /// Makes the selected elements undefined.
  void erase(hid_t file_space, hid_t dxpl);
  /// After a failed native read: throws an Error naming the first chunk of the selection that
  /// does not decode (the filter below cannot say which dataset or chunk it was given).
  void diagnose_read(hid_t file_space, hid_t dxpl) const;
  /// H5Dset_extent with the RFC's meaning (sparse_extent.cpp): HDF5 changes the extent below,
  /// and no element outside the box the old and new extents share stays defined.
  void set_extent(const hsize_t* size, hid_t dxpl);
  /// After a read the native path served: HDF5 may now hold decoded chunks of this dataset in
  /// its chunk cache, which H5Ocopy would encode again (sparse_copy.cpp).
  void note_native_read() const;
  /// Reads every stored chunk directly, which drops it from HDF5's chunk cache.
  void evict_cached_chunks(hid_t dxpl) const;
  ~SparseDataset();

  const SparseParams& params() const { return params_; }
  /// True when the dataset's file is on MPI-IO (parallel flavour only): writes and erases
  /// then take the collective path (parallel_write.hpp), never direct chunk writes.
  bool on_mpi_file() const { return mpi_file_; }

 private:
  friend class ParallelWrite;
  SparseDataset(void* under, hid_t under_vol_id, SparseParams params, hdf5::Handle file_type);

  struct Selection {  // a file selection resolved against the current extent
    hdf5::Handle full;  // the dataset's current dataspace
    hid_t space;        // the selection to use (full or the caller's)
    ChunkGrid grid;
    hssize_t npoints;
  };
  Selection resolve(hid_t file_space, hid_t dxpl) const;
  /// The memory dataspace of a transfer (H5S_ALL: the file selection), checked to select as
  /// many elements as the file selection.
  hid_t memory_space(hid_t mem_space, const Selection& sel) const;
  std::vector<std::uint64_t> extent(hid_t dxpl) const;
  /// A read of a small part of the chunks it touches (sparse_read.cpp): chunk after chunk on
  /// this thread, each decoded once and kept in decoded_ for the reads after it.
  struct ReadTarget {
    std::uint8_t* dest;         // element `source` of a piece goes to dest[source * element size]
    const std::uint8_t* fill;   // null: zeros
    bool streaming;             // streaming stores (stream_store.hpp), fenced by the caller
    bool callers_memory;        // dest is the caller's buffer (not a staging copy of ours)
  };
  void read_through_cache(const Selection& sel, const std::vector<ChunkPiece>& pieces,
                          const std::vector<std::size_t>& group_starts, const ReadTarget& to, hid_t dxpl) const;
  /// Any other read (sparse_read.cpp): chunks read on this thread, a window ahead, and decoded
  /// straight into `dest` on the pool's threads.
  void read_decoding(const Selection& sel, bool whole, const std::vector<ChunkPiece>& pieces,
                     const std::vector<std::size_t>& group_starts, const ReadTarget& to, hid_t dxpl) const;
  /// Each chunk's stored size (0: none stored) by linear index in `grid`, from one pass over
  /// the chunk index (sparse_read.cpp).
  std::vector<hsize_t> whole_read_stored_sizes(const ChunkGrid& grid, hid_t dxpl) const;

  /// The stored structured chunk at `origin`, empty if none is stored; its stored size goes
  /// to `stored_size` when one is stored.
  StructuredChunk read_chunk(const std::vector<std::uint64_t>& origin, hid_t dxpl,
                             std::size_t* stored_size = nullptr) const;
  /// Stores a chunk (write_chunk: encodes it; write_stored: already encoded) at `origin`, in a
  /// size other than `avoid_size` (avoid_chunk_size), so that HDF5 moves the chunk instead of
  /// overwriting the one of that size (SWMR writers; 0: any size).
  void write_chunk(const std::vector<std::uint64_t>& origin, const StructuredChunk& chunk, hid_t dxpl,
                   std::size_t avoid_size = 0) const;
  void write_stored(const std::vector<std::uint64_t>& origin, ByteView stored, hid_t dxpl,
                    std::size_t avoid_size = 0) const;
  /// Rethrows a chunk's failure from a parallel loop on this thread as the serial path throws
  /// it: an Error gets the dataset and chunk (`origin`) in front of its message.
  [[noreturn]] void rethrow_naming_chunk(const IndexedFailure& failure, const std::vector<std::uint64_t>& origin) const;
  /// The structured chunk of what is stored at `origin` (null: nothing, an empty chunk).
  StructuredChunk decode_stored(const std::vector<std::uint64_t>& origin, const StoredChunk* stored) const;
  /// The selected memory elements in selection order, in the file datatype: `buf` itself when
  /// it already is that, else gathered and converted into `storage`.
  const std::uint8_t* file_values(hid_t mem_type, hid_t mem_space, std::size_t count, hid_t dxpl, const void* buf,
                                  Bytes& storage) const;
  /// "dataset '/a/b', chunk at (0, 64)": context for error messages.
  std::string where(const std::vector<std::uint64_t>& origin) const;

  void* under_;
  hid_t under_vol_id_;
  SparseParams params_;
  hdf5::Handle file_type_;
  bool fill_never_ = false;  // H5D_FILL_TIME_NEVER: native reads leave unallocated parts alone
  bool mpi_file_ = false;
  // Decoded chunks of partial reads, within the budget of the dataset access list's chunk
  // cache (H5Pset_chunk_cache's rdcc_nbytes: HDF5 would spend it on the same chunks, decoded).
  // Null when that is 0 bytes, on SWMR readers (another process changes the file) and on
  // MPI-IO files (other ranks do).
  std::unique_ptr<DecodedChunkCache> decoded_;
  // The collective transfer list of parallel erases. It outlives the call: HDF5 writes the
  // actual I/O mode into the list its API context last used when the call returns.
  hdf5::Handle collective_dxpl_;
};

struct Object;

/// Before H5Ocopy: makes HDF5 drop the decoded chunks it caches for any open sparse dataset
/// (a copy would encode them again through the filter, defining every element).
void evict_decoded_chunks(hid_t dxpl);

/// Recognises a just-opened dataset as sparse (or not). When its parameters cannot be read,
/// closes the dataset below, frees the wrapper and rethrows, so nothing leaks.
void attach_sparse(Object* dataset, hid_t dxpl);

}  // namespace h5sparse::vol
