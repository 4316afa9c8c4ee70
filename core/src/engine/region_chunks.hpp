// The stored chunks a region meets, found without visiting the region's chunk places one by
// one unless the chunk index is much larger than the region (engine/region_chunks.cpp), and
// the region's pieces in them. Coordinate reads, erases and get-defined of a region use it so
// that their cost follows the stored chunks, never the region's size: a 1% box of a
// 2^20 x 2^20 dataset spans 10^10 elements. Private to core.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/engine/chunk_store.hpp"
#include "h5sparse/engine/coordinates.hpp"
#include "h5sparse/kept_memory.hpp"
#include "h5sparse/structured_chunk.hpp"

namespace h5sparse::detail {

/// A stored chunk meeting a region: its number in the grid (row-major, so that sorting
/// numbers sorts origins), stored size and address. 24 bytes a chunk: a listing of millions
/// of one-element chunks must stay small beside the elements it yields.
struct ListedChunk {
  std::uint64_t number;
  ChunkLocation at;
};

/// True when `box` holds an element of the chunk at `origin`.
bool intersects(const Box& box, const Coords& origin, const Coords& chunk_dims);

/// The part of a box in a chunk, as [lo, hi) in chunk coordinates.
struct LocalBox {
  Coords lo, hi;
};

/// The part of `box` in the chunk at `origin` (which it intersects).
LocalBox local_box(const Box& box, const Coords& origin, const Coords& chunk_dims);

/// The parts of `region`'s boxes in the chunk at `origin` (those that meet it).
std::vector<LocalBox> local_boxes(const std::vector<Box>& region, const Coords& origin, const Coords& chunk_dims);

/// The elements of a chunk inside any of `boxes` (local to it), as ascending, disjoint ranges
/// of offsets (a range per line of a box, overlapping and adjacent ones joined).
std::vector<OffsetRange> offset_ranges(const std::vector<LocalBox>& boxes, const Coords& chunk_dims);

/// Keeps the elements of `e` (values of `es` bytes each) that lie inside any of `boxes` (local
/// to the chunk) when `inside`, else those outside all of them; returns how many went.
std::size_t keep_elements(ChunkElements& e, const std::vector<LocalBox>& boxes, const Coords& chunk_dims,
                          std::size_t es, bool inside);

/// The stored chunks meeting any of `region`'s boxes, ascending by number, each once.
std::vector<ListedChunk> stored_chunks_in(ChunkStore& store, const ChunkGrid& grid, const std::vector<Box>& region);

/// The stored chunks among the chunks numbered `numbers` (ascending, each once), ascending.
std::vector<ListedChunk> stored_chunks_of(ChunkStore& store, const ChunkGrid& grid,
                                          const std::vector<std::uint64_t>& numbers);

/// The elements of `region` inside `chunks` as pieces (source 0), grouped by chunk in the
/// order of `chunks`; boxes that overlap give their common elements twice. A piece may span
/// lines of the chunk (following lines joined): for erase and get-defined, not for reads.
std::vector<ChunkPiece> region_pieces(const ChunkGrid& grid, const std::vector<ListedChunk>& chunks,
                                      const std::vector<Box>& region);

/// A listing of stored chunks shared by the scans that use it.
using Listing = std::shared_ptr<const std::vector<ListedChunk>>;

/// The listing of a coordinate scan that stopped before its end, kept for the scan that
/// resumes it (an iteration's next batch: listing a large index again for every batch made an
/// iteration quadratic in the chunks). Valid for one region and extent at one generation of
/// sparse data (engine/sparse_engine.hpp), so only for stores nobody else changes; counted as
/// memory kept between calls.
class ResumableListing final : public Keeper {
 public:
  /// The kept listing of `region` over `dims` at `generation`, or null.
  Listing find(const std::vector<Box>& region, const Coords& dims, std::uint64_t generation);
  void keep(Listing listing, const std::vector<Box>& region, const Coords& dims, std::uint64_t generation);
  void drop();

 protected:
  std::size_t held() const noexcept override;
  void free_buffers() noexcept override;

 private:
  mutable std::mutex mutex_;
  Listing listing_;
  std::vector<Box> region_;
  Coords dims_;
  std::uint64_t generation_ = 0;
};

}  // namespace h5sparse::detail
