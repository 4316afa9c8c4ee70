// The stored chunks a region meets and its pieces in them (region_chunks.hpp).
#include "region_chunks.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace h5sparse::detail {
namespace {

// Index entries a region's listing takes per chunk place of the region before it looks the
// places up instead: a lookup costs about what listing 6-7 entries does in HDF5's B-tree and
// extensible-array indexes of 2x10^4 chunks (bench/coo/chunk_cost.py), about 14 in a version-1
// B-tree of 2x10^5 (a look-up of an empty place fails and its error records are cleared), so a
// region the index outnumbers fourfold costs at most about 1.6-3.5 times a listing.
constexpr std::size_t kListedPerPlace = 4;

// Chunk places the region's boxes cover (boxes may share places), saturating at 2^64 - 1.
std::uint64_t region_places(const ChunkGrid& grid, const std::vector<Box>& region) {
  std::uint64_t total = 0;
  for (const Box& box : region) {
    std::uint64_t n = 1;
    for (std::size_t d = 0; d < grid.rank() && n; ++d) {
      const std::uint64_t c = grid.chunk_dims()[d];
      const std::uint64_t span = box.count[d] ? (box.start[d] + box.count[d] - 1) / c - box.start[d] / c + 1 : 0;
      n = span && n > UINT64_MAX / span ? UINT64_MAX : n * span;
    }
    total = n > UINT64_MAX - total ? UINT64_MAX : total + n;
  }
  return total;
}

// The region's stored chunks, by looking up each chunk place of its boxes in row-major order.
std::vector<ListedChunk> probe_places(ChunkStore& store, const ChunkGrid& grid, const std::vector<Box>& region) {
  std::vector<ListedChunk> found;
  const std::size_t rank = grid.rank();
  const Coords& chunk = grid.chunk_dims();
  for (const Box& box : region) {
    if (std::find(box.count.begin(), box.count.end(), 0) != box.count.end()) continue;
    Coords first(rank), last(rank);
    for (std::size_t d = 0; d < rank; ++d) {
      first[d] = box.start[d] / chunk[d] * chunk[d];
      last[d] = (box.start[d] + box.count[d] - 1) / chunk[d] * chunk[d];
    }
    Coords origin = first;
    for (bool more = true; more;) {  // last dimension fastest
      if (const std::uint64_t size = store.stored_size(origin))
        found.push_back(ListedChunk{grid.chunk_index(origin), ChunkLocation{size}});
      more = false;
      for (std::size_t d = rank; d-- > 0;) {
        if (origin[d] < last[d]) {
          origin[d] += chunk[d];
          more = true;
          break;
        }
        origin[d] = first[d];
      }
    }
  }
  return found;
}

// Appends the pieces of `box` in the chunk `number` at `origin`: one per line of the box in the
// chunk, lines that follow each other in the chunk joined into one piece.
void append_box_pieces(const ChunkGrid& grid, std::uint64_t number, const Coords& origin, const Box& box,
                       std::vector<ChunkPiece>& out) {
  const std::size_t rank = grid.rank();
  const Coords& chunk = grid.chunk_dims();
  const auto [lo, hi] = local_box(box, origin, chunk);
  const std::size_t first_piece = out.size();
  Coords at = lo;
  while (true) {
    std::uint64_t start = 0;
    for (std::size_t d = 0; d < rank; ++d) start = start * chunk[d] + at[d];
    const std::uint64_t length = hi[rank - 1] - lo[rank - 1];
    ChunkPiece* last = out.size() > first_piece ? &out.back() : nullptr;
    if (last && last->in_chunk_start + last->length == start)
      last->length += length;
    else
      out.push_back(ChunkPiece{number, start, length, 0});
    std::size_t d = rank - 1;  // the next line: dimensions before the last, like an odometer
    while (d > 0 && ++at[d - 1] == hi[d - 1]) at[d - 1] = lo[d - 1], --d;
    if (d == 0) return;
  }
}

}  // namespace

bool intersects(const Box& box, const Coords& origin, const Coords& chunk_dims) {
  for (std::size_t d = 0; d < origin.size(); ++d)
    if (box.count[d] == 0 || box.start[d] >= origin[d] + chunk_dims[d] || origin[d] >= box.start[d] + box.count[d])
      return false;
  return true;
}

LocalBox local_box(const Box& box, const Coords& origin, const Coords& chunk_dims) {
  LocalBox b{Coords(origin.size()), Coords(origin.size())};
  for (std::size_t d = 0; d < origin.size(); ++d) {
    b.lo[d] = box.start[d] > origin[d] ? box.start[d] - origin[d] : 0;
    b.hi[d] = std::min(chunk_dims[d], box.start[d] + box.count[d] - origin[d]);
  }
  return b;
}

std::vector<LocalBox> local_boxes(const std::vector<Box>& region, const Coords& origin, const Coords& chunk_dims) {
  std::vector<LocalBox> boxes;
  for (const Box& box : region)
    if (intersects(box, origin, chunk_dims)) boxes.push_back(local_box(box, origin, chunk_dims));
  return boxes;
}

namespace {

// Appends a range per line of a (non-empty) local box, ascending.
void add_line_ranges(const LocalBox& b, const Coords& chunk_dims, std::vector<OffsetRange>& ranges) {
  const std::size_t rank = chunk_dims.size();
  Coords at = b.lo;  // the box's lines, odometer order over every dimension but the last
  while (true) {
    std::uint64_t line = 0;
    for (std::size_t d = 0; d + 1 < rank; ++d) line = line * chunk_dims[d] + at[d];
    ranges.push_back({line * chunk_dims[rank - 1] + b.lo[rank - 1], line * chunk_dims[rank - 1] + b.hi[rank - 1]});
    std::size_t d = rank - 1;
    while (d > 0 && ++at[d - 1] == b.hi[d - 1]) at[d - 1] = b.lo[d - 1], --d;
    if (d == 0) break;
  }
}

bool is_empty(const LocalBox& b) {
  for (std::size_t d = 0; d < b.lo.size(); ++d)
    if (b.lo[d] >= b.hi[d]) return true;
  return false;
}

// Appends [first, end) to ascending ranges, joined to the last one when they touch.
void append_range(std::vector<OffsetRange>& ranges, std::uint64_t first, std::uint64_t end) {
  if (!ranges.empty() && first <= ranges.back().end)
    ranges.back().end = std::max(ranges.back().end, end);
  else
    ranges.push_back({first, end});
}

// Matrices: the rows swept once, top to bottom. The boxes holding a row change only at their
// first and end rows, so the column intervals of a stretch of rows between two such edges are
// merged once, then written for each of its rows, already in order: a list of genes gives a
// chunk thousands of ranges from a few boxes, and sorting them cost more than reading them.
std::vector<OffsetRange> matrix_ranges(const std::vector<LocalBox>& boxes, std::uint64_t width) {
  std::vector<const LocalBox*> by_first_row;
  std::vector<std::uint64_t> edges;
  for (const LocalBox& b : boxes)
    if (!is_empty(b)) {
      by_first_row.push_back(&b);
      edges.push_back(b.lo[0]);
      edges.push_back(b.hi[0]);
    }
  std::sort(by_first_row.begin(), by_first_row.end(),
            [](const LocalBox* a, const LocalBox* b) { return a->lo[0] < b->lo[0]; });
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::vector<OffsetRange> ranges;
  std::vector<const LocalBox*> holding;                        // the boxes holding the stretch's rows
  std::vector<std::pair<std::uint64_t, std::uint64_t>> columns;  // their column intervals, merged
  std::size_t next = 0;
  for (std::size_t e = 0; e + 1 < edges.size(); ++e) {
    const std::uint64_t top = edges[e], bottom = edges[e + 1];
    holding.erase(std::remove_if(holding.begin(), holding.end(), [&](const LocalBox* b) { return b->hi[0] <= top; }),
                  holding.end());
    for (; next < by_first_row.size() && by_first_row[next]->lo[0] <= top; ++next) holding.push_back(by_first_row[next]);
    columns.clear();
    for (const LocalBox* b : holding) columns.emplace_back(b->lo[1], b->hi[1]);
    std::sort(columns.begin(), columns.end());
    for (std::uint64_t row = top; row < bottom && !columns.empty(); ++row)
      for (const auto& [lo, hi] : columns) append_range(ranges, row * width + lo, row * width + hi);
  }
  return ranges;
}

}  // namespace

std::vector<OffsetRange> offset_ranges(const std::vector<LocalBox>& boxes, const Coords& chunk_dims) {
  const std::size_t rank = chunk_dims.size();
  if (rank == 2) return matrix_ranges(boxes, chunk_dims[1]);
  std::vector<OffsetRange> ranges;
  std::vector<std::size_t> box_ends;  // where each box's ranges end
  for (const LocalBox& b : boxes) {
    if (!is_empty(b)) add_line_ranges(b, chunk_dims, ranges);
    box_ends.push_back(ranges.size());
  }
  // Each box's ranges ascend: merged box by box, not sorted.
  const auto before = [](const OffsetRange& a, const OffsetRange& b) { return a.first < b.first; };
  for (std::size_t k = 1; k < box_ends.size(); ++k)
    std::inplace_merge(ranges.begin(), ranges.begin() + std::ptrdiff_t(box_ends[k - 1]),
                       ranges.begin() + std::ptrdiff_t(box_ends[k]), before);
  std::vector<OffsetRange> joined;
  joined.reserve(ranges.size());
  for (const OffsetRange& r : ranges) append_range(joined, r.first, r.end);
  return joined;
}

// Line by line: the boxes holding a line are found once per line (offsets ascend, so a line
// ends at a known offset: no division per element), then each element is tested against
// their column ranges.
std::size_t keep_elements(ChunkElements& e, const std::vector<LocalBox>& boxes, const Coords& chunk_dims,
                          std::size_t es, bool inside) {
  const std::size_t rank = chunk_dims.size();
  const std::uint64_t row = chunk_dims[rank - 1];
  std::size_t keep = 0;
  std::uint64_t line_start = 0, line_end = 0;  // of the current line: [start, end)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> columns;  // of the boxes holding the line
  Coords at(rank);
  for (std::size_t i = 0; i < e.offsets.size(); ++i) {
    if (e.offsets[i] >= line_end || i == 0) {
      const std::uint64_t line = e.offsets[i] / row;
      line_start = line * row;
      line_end = line_start + row;
      for (std::size_t d = rank - 1, rest = line; d-- > 0; rest /= chunk_dims[d]) at[d] = rest % chunk_dims[d];
      columns.clear();
      for (const LocalBox& b : boxes) {
        bool holds = true;
        for (std::size_t d = 0; d + 1 < rank && holds; ++d) holds = at[d] >= b.lo[d] && at[d] < b.hi[d];
        if (holds) columns.emplace_back(b.lo[rank - 1], b.hi[rank - 1]);
      }
    }
    const std::uint64_t column = e.offsets[i] - line_start;
    bool in = false;
    for (const auto& [lo, hi] : columns) in = in || (column >= lo && column < hi);
    if (in != inside) continue;
    e.offsets[keep] = e.offsets[i];
    if (es && keep != i) std::memcpy(&e.values[keep * es], &e.values[i * es], es);
    ++keep;
  }
  const std::size_t gone = e.offsets.size() - keep;
  e.offsets.resize(keep);
  e.values.resize(keep * es);
  return gone;
}

namespace {

// HDF5 lists an index only whole, so few chunk places in a large index are looked up one by
// one instead: the listing stops after kListedPerPlace entries per place, and `probe()` gives
// the places' stored chunks. Listed chunks are kept where `wanted(origin)`.
template <typename Wanted, typename Probe>
std::vector<ListedChunk> list_or_probe(ChunkStore& store, const ChunkGrid& grid, std::uint64_t places,
                                       Wanted&& wanted, Probe&& probe) {
  const std::size_t limit = places < kEveryChunk / kListedPerPlace ? std::size_t(places * kListedPerPlace)
                                                                    : kEveryChunk;
  std::vector<ListedChunk> found;
  const bool whole = store.list([&](const Coords& origin, const ChunkLocation& at) {
    if (wanted(origin)) found.push_back(ListedChunk{grid.chunk_index(origin), at});
  }, limit);
  if (!whole) found = probe();
  const auto by_number = [](const ListedChunk& a, const ListedChunk& b) { return a.number < b.number; };
  const auto same_number = [](const ListedChunk& a, const ListedChunk& b) { return a.number == b.number; };
  // A B-tree index lists in row-major order already: the check costs a pass, a sort n log n.
  if (!std::is_sorted(found.begin(), found.end(), by_number)) std::sort(found.begin(), found.end(), by_number);
  found.erase(std::unique(found.begin(), found.end(), same_number), found.end());
  return found;
}

}  // namespace

std::vector<ListedChunk> stored_chunks_in(ChunkStore& store, const ChunkGrid& grid, const std::vector<Box>& region) {
  const auto meets_region = [&](const Coords& origin) {
    for (const Box& box : region)
      if (intersects(box, origin, grid.chunk_dims())) return true;
    return false;
  };
  return list_or_probe(store, grid, region_places(grid, region), meets_region,
                       [&] { return probe_places(store, grid, region); });
}

// A listed origin outside the extent (left by a shrink) has no number of the grid: it would
// alias another chunk's.
std::vector<ListedChunk> stored_chunks_of(ChunkStore& store, const ChunkGrid& grid,
                                          const std::vector<std::uint64_t>& numbers) {
  const auto among = [&](const Coords& origin) {
    if (origin.size() != grid.rank()) return false;
    for (std::size_t d = 0; d < grid.rank(); ++d)
      if (origin[d] >= grid.dataset_dims()[d] || origin[d] % grid.chunk_dims()[d]) return false;
    return std::binary_search(numbers.begin(), numbers.end(), grid.chunk_index(origin));
  };
  const auto probe = [&] {
    std::vector<ListedChunk> found;
    for (const std::uint64_t number : numbers)
      if (const std::uint64_t size = store.stored_size(grid.chunk_origin(number)))
        found.push_back(ListedChunk{number, ChunkLocation{size}});
    return found;
  };
  return list_or_probe(store, grid, numbers.size(), among, probe);
}

namespace {

bool same_region(const std::vector<Box>& a, const std::vector<Box>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].start != b[i].start || a[i].count != b[i].count) return false;
  return true;
}

}  // namespace

Listing ResumableListing::find(const std::vector<Box>& region, const Coords& dims, std::uint64_t generation) {
  settle();
  const std::lock_guard<std::mutex> lock(mutex_);
  const bool valid = listing_ && generation_ == generation && dims_ == dims && same_region(region_, region);
  return valid ? listing_ : nullptr;
}

void ResumableListing::keep(Listing listing, const std::vector<Box>& region, const Coords& dims,
                            std::uint64_t generation) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    listing_ = std::move(listing);
    region_ = region;
    dims_ = dims;
    generation_ = generation;
  }
  settle();  // counted now; freed at once when the process keeps more than its budget
}

void ResumableListing::drop() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    listing_.reset();
  }
  settle();
}

std::size_t ResumableListing::held() const noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  return listing_ ? listing_->capacity() * sizeof(ListedChunk) : 0;
}

void ResumableListing::free_buffers() noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  listing_.reset();
}

std::vector<ChunkPiece> region_pieces(const ChunkGrid& grid, const std::vector<ListedChunk>& chunks,
                                      const std::vector<Box>& region) {
  std::vector<ChunkPiece> pieces;
  for (const ListedChunk& listed : chunks) {
    const Coords origin = grid.chunk_origin(listed.number);
    for (const Box& box : region)
      if (intersects(box, origin, grid.chunk_dims())) append_box_pieces(grid, listed.number, origin, box, pieces);
  }
  return pieces;
}

}  // namespace h5sparse::detail
