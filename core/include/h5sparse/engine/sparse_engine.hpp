// The sparse engine: the RFC's operations on a sparse dataset (define by writing, read with the
// fill value for undefined elements, erase, get-defined, extent change) as reads and writes of
// whole structured chunks in a ChunkStore. What to touch arrives as ChunkPieces of a ChunkGrid
// (grouped by chunk, `source` numbering elements in the caller's order) and values in the
// dataset's element type: datatype conversion and HDF5 selections stay with the caller.
//
// Chunks are encoded and decoded on the worker pool (chunk_threads.hpp); the store is called on
// the calling thread only. Every failure is an Error naming the store and the chunk.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/chunk_threads.hpp"
#include "h5sparse/decoded_chunk_cache.hpp"
#include "h5sparse/engine/chunk_store.hpp"
#include "h5sparse/engine/coordinates.hpp"
#include "h5sparse/sparse_layout.hpp"
#include "h5sparse/var_chunk.hpp"

namespace h5sparse {

namespace detail {
class ResumableListing;
}

/// The generation of sparse data in this process: a counter every change of a sparse
/// dataset's stored chunks or extent advances, before and after (a failure half-way leaves
/// nothing cached either). Decoded chunks are valid only at the generation they were decoded
/// at, so a change through any handle of any dataset makes every cache start over: coarse,
/// but nothing to track, and no handle misses a change made through another.
std::uint64_t sparse_generation() noexcept;
void note_sparse_change() noexcept;

/// Advances the generation when made and again when destroyed.
class SparseChange {
 public:
  SparseChange() noexcept { note_sparse_change(); }
  ~SparseChange() { note_sparse_change(); }
  SparseChange(const SparseChange&) = delete;
  SparseChange& operator=(const SparseChange&) = delete;
};

/// The chunks an operation touches and its pieces of each: `whole` (every element of the
/// extent in row-major order; each chunk's pieces follow from its position) or `pieces`
/// grouped by chunk (group_by_chunk).
struct ChunkRequest {
  const ChunkGrid& grid;
  const std::vector<ChunkPiece>& pieces;  ///< empty when whole
  bool whole = false;
  std::uint64_t elements = 0;  ///< elements selected
};

/// Where a read puts element `source` of its pieces: dest[source * element size].
struct ReadTarget {
  std::uint8_t* dest;
  const std::uint8_t* fill;  ///< null: zeros
  bool streaming;            ///< streaming stores (stream_store.hpp); the engine fences them
  bool callers_memory;       ///< dest is the caller's final buffer (faulted in ahead)
};

/// Where each chunk's group of pieces starts, followed by pieces.size(): chunk k's pieces are
/// [starts[k], starts[k + 1]).
std::vector<std::size_t> chunk_group_starts(const std::vector<ChunkPiece>& pieces);

class SparseEngine {
 public:
  /// `decoded_cache_bytes`: decoded chunks kept between reads (0: none, nor the listing an
  /// interrupted coordinate scan keeps; a store other processes change, SWMR readers and
  /// MPI-IO files, must keep none).
  SparseEngine(SparseParams params, std::size_t decoded_cache_bytes);
  ~SparseEngine();

  const SparseParams& params() const { return params_; }

  /// Define-by-write: the elements of `pieces` take their values from
  /// `values + piece.source * element size`; later duplicates win. With the fill-is-undefined
  /// option, written fill values leave elements undefined.
  void write(ChunkStore& store, const ChunkGrid& grid, const std::vector<ChunkPiece>& pieces,
             const std::uint8_t* values) const;
  /// Reads the request into `to`: defined values, the fill value elsewhere.
  void read(ChunkStore& store, const ChunkRequest& request, const ReadTarget& to) const;
  /// Makes the elements of `pieces` undefined.
  void erase(ChunkStore& store, const ChunkGrid& grid, const std::vector<ChunkPiece>& pieces) const;
  /// The pieces of `region` in the chunks `store` holds, grouped by chunk, for erase, defined
  /// and check_chunks (not reads: a piece may span lines): a region's cost then follows its
  /// stored chunks, not its size.
  std::vector<ChunkPiece> stored_region_pieces(ChunkStore& store, const ChunkGrid& grid,
                                               const std::vector<Box>& region) const;
  /// The defined elements among `pieces`, as linear offsets in the extent, ascending, unique.
  std::vector<std::uint64_t> defined(ChunkStore& store, const ChunkGrid& grid,
                                     const std::vector<ChunkPiece>& pieces) const;
  /// Coordinate I/O (coordinates.hpp). `coords` holds n x rank coordinates, row-major, each
  /// inside the extent (else Error(invalid_argument) naming the first outside it, and nothing
  /// changes). Writes define the elements with `values` (n in the element type; a coordinate
  /// given twice takes its last value; with fill-is-undefined, fill values erase).
  void write_coordinates(ChunkStore& store, const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n,
                         const std::uint8_t* values) const;
  void erase_coordinates(ChunkStore& store, const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n) const;
  /// write_coordinates of a variable-length dataset: n elements of `values` (as write_var).
  void write_var_coordinates(ChunkStore& store, const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n,
                             const VarValues& values) const;
  /// Makes the elements of `region` undefined, work following the stored chunks it meets and
  /// their elements (a 1% box of 2^20 x 2^20 spans 10^10 elements).
  void erase_region(ChunkStore& store, const ChunkGrid& grid, const std::vector<Box>& region) const;
  /// Visits the defined elements of `scan.region` (of either kind of dataset: see
  /// CoordinateBatch for variable-length values) in batches of whole chunks in row-major order
  /// of their coordinates: a batch holds whole bands of chunks (chunks sharing their range of
  /// dimension 0), so the batches together are in row-major order too, except where one band
  /// holds more than max_bytes: it is cut into runs of whole chunks, each in row-major order.
  void scan_coordinates(ChunkStore& store, const ChunkGrid& grid, const CoordinateScan& scan,
                        const CoordinateSink& sink) const;

  /// Variable-length datasets (params().is_var(); var_engine.cpp). Define-by-write: the
  /// elements of `pieces` take element `piece.source + i` of `values`; later duplicates win;
  /// with the fill-is-undefined option, an element whose slots are all NULL becomes undefined.
  /// erase, defined and check_chunks serve both kinds of dataset; write and read of
  /// fixed-size values refuse variable-length datasets.
  void write_var(ChunkStore& store, const ChunkGrid& grid, const std::vector<ChunkPiece>& pieces,
                 const VarValues& values) const;
  /// The request's elements in selection order (`source`): undefined ones with every slot
  /// NULL and a zero fixed part.
  VarValues read_var(ChunkStore& store, const ChunkRequest& request) const;
  /// The variable-length chunk stored at `origin` (no elements when none is stored).
  ChunkVarElements read_var_chunk(ChunkStore& store, const Coords& origin, std::size_t* stored_size = nullptr) const;
  /// The variable-length chunk of stored bytes (null: nothing stored, no elements), as
  /// decode_stored for fixed-size chunks.
  ChunkVarElements decode_var_stored(ChunkStore& store, const Coords& origin, const StoredChunk* stored) const;
  /// Stores `chunk` at `origin` (as write_chunk).
  void write_var_chunk(ChunkStore& store, const Coords& origin, const ChunkVarElements& chunk,
                       std::size_t replaced_size) const;

  /// Decodes each chunk of `pieces`, throwing the first failure naming its chunk (a failed
  /// read elsewhere cannot say which chunk it was).
  void check_chunks(ChunkStore& store, const ChunkGrid& grid, const std::vector<ChunkPiece>& pieces) const;

  /// The structured chunk stored at `origin`, empty when none is stored; `stored_size` gets
  /// the stored size when one is.
  StructuredChunk read_chunk(ChunkStore& store, const Coords& origin, std::size_t* stored_size = nullptr) const;
  /// The structured chunk of stored bytes (null: nothing stored, empty).
  StructuredChunk decode_stored(ChunkStore& store, const Coords& origin, const StoredChunk* stored) const;
  /// Stores `chunk` at `origin`, in a size other than `replaced_size` when the store moves
  /// rewritten chunks (0: nothing was stored there).
  void write_chunk(ChunkStore& store, const Coords& origin, const StructuredChunk& chunk,
                   std::size_t replaced_size) const;
  void write_stored(ChunkStore& store, const Coords& origin, ByteView stored, std::size_t replaced_size) const;
  /// Rethrows a chunk's failure as the serial path throws it: an Error gets the store and chunk
  /// in front of its message.
  [[noreturn]] void rethrow_naming_chunk(const ChunkStore& store, const IndexedFailure& failure,
                                         const Coords& origin) const;

 private:
  void read_through_cache(ChunkStore& store, const ChunkRequest& request, const std::vector<std::size_t>& starts,
                          const ReadTarget& to) const;
  void read_decoding(ChunkStore& store, const ChunkRequest& request, const std::vector<std::size_t>& starts,
                     const ReadTarget& to) const;
  /// Which elements of the chunk at `origin` are defined (either kind of dataset).
  ChunkSelection defined_in_chunk(ChunkStore& store, const Coords& origin) const;
  void require_fixed_size(const char* operation) const;

  SparseParams params_;
  // Decoded chunks of partial reads (null: none kept).
  std::unique_ptr<DecodedChunkCache> decoded_;
  // The listing an interrupted coordinate scan leaves for the next (null: none kept, as
  // decoded chunks).
  std::unique_ptr<detail::ResumableListing> resumable_;
};

/// "(0, 64)": coordinates for messages.
std::string coords_text(const Coords& coords);

}  // namespace h5sparse
