// Coordinate I/O: a sparse dataset's elements in and out as coordinates and values, the form
// sparse users hold them in (scipy.sparse, pydata sparse, TileDB). The engine's operations
// (SparseEngine::write_coordinates, erase_coordinates, scan_coordinates) work chunk by chunk on
// the chunks' elements (ChunkElements: offsets and values), so their cost follows the elements
// and chunks touched, never the extent or the chunk size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "h5sparse/engine/chunk_store.hpp"
#include "h5sparse/var_chunk.hpp"

namespace h5sparse {

/// Elements [start[d], start[d] + count[d]) in each dimension d.
struct Box {
  Coords start, count;
};

/// Where a batch of a scan is written: room for `count` coordinates (count x rank; in
/// compressed-row form, `count` columns of CompressedRows::index_size bytes) and, when the
/// scan reads values, `count` values in the dataset's element type (a variable-length
/// dataset's: `count` uint64 element numbers, see CoordinateBatch).
struct CoordinateDestination {
  std::uint64_t* coords = nullptr;
  std::uint8_t* values = nullptr;
};

/// A matrix's elements in compressed-row form, as scipy.sparse's CSR and anndata hold them:
/// in place of its coordinates, each element's column minus the region's first column (an
/// `index_size`-byte integer: 4 when the region is narrower than 2^31 columns, or 8), and
/// per row of the region (from its first row) its count of elements, set in `row_counts`.
/// The elements come in row-major order, so the counts' prefix sums are CSR's row pointers;
/// writing 4 or 8 bytes an element where coordinates take 16 halves a read's memory traffic.
/// A scan in this form reads a 2-D dataset's one-box region in one batch.
struct CompressedRows {
  std::uint64_t* row_counts = nullptr;  ///< null: coordinates, not this form
  std::size_t index_size = 8;
};

/// Gives the destination of a batch of `count` elements before anything of it is written.
using CoordinateRoom = std::function<CoordinateDestination(std::size_t count)>;

/// The defined elements a scan visits: those inside any of `region`'s boxes (a dataset's whole
/// extent is one box), with their values or not, in batches of about `max_bytes`.
struct CoordinateScan {
  std::vector<Box> region;
  bool values = true;
  std::size_t max_bytes = std::size_t(64) << 20;
  /// What a batch holds of its chunks before the caller's memory for it is known: beyond it,
  /// chunks of 4 KiB and more are let go and read again when the batch is written, so that a
  /// read of everything in one batch needs little memory beside its result.
  std::size_t held_bytes = std::size_t(16) << 20;
  /// Where a scan resumes: chunks whose origin comes before it in row-major order are skipped
  /// (empty: from the first chunk). A batch's `next` is the value that resumes after it.
  Coords from;
  /// The caller's memory for each batch (empty: the scan's own, valid during the sink's call):
  /// a batch is then written once, straight where it is wanted.
  CoordinateRoom room;
  CompressedRows compressed_rows;
};

/// One batch of a scan: `count` elements, their coordinates (count x rank, row-major; in
/// compressed-row form their columns) and, when asked, their values in the dataset's element
/// type: in the room the scan's `room` gave, else valid only during the sink's call. A
/// variable-length dataset's values are numbers (uint64) of elements of `var_values`, which
/// holds the batch's values (and maybe others), valid during the sink's call.
struct CoordinateBatch {
  std::size_t count = 0;
  const std::uint64_t* coords = nullptr;
  const std::uint8_t* values = nullptr;
  const VarValues* var_values = nullptr;  ///< variable-length datasets only
  const Coords* next = nullptr;  ///< origin of the first chunk after the batch; null: none is left
};

/// Receives the batches of a scan; returns false to stop it.
using CoordinateSink = std::function<bool(const CoordinateBatch&)>;

}  // namespace h5sparse
