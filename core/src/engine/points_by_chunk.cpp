// Grouping a coordinate write's points by chunk, in 8 bytes a point. The points are dealt to
// buckets of consecutive chunks by distribution counting (Knuth, TAOCP vol. 3, 5.2): stable,
// so a coordinate given twice keeps the caller's order, and linear in the points. A point's
// chunk is not kept: each pass computes it again from the coordinates, which costs less than
// the memory it would take. When the points' chunks span at most max(2^16, n) chunks (the
// usual case), a bucket is one chunk. Beyond, a bucket spans 2^shift chunks and its points are
// sorted by chunk by a least-significant-digit radix sort (TAOCP 5.2.5), 8 bits a pass, passes
// whose digit is the same for every point skipped. Inside a chunk, only points out of order
// get sorted by offset: by radix too, or by insertion when few.
#include "points_by_chunk.hpp"

#include <array>
#include <string>
#include <utility>

#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse::detail {
namespace {

// x / d and x % d, by a shift and a mask when d is a power of two (chunk dimensions usually
// are; a division per coordinate was a third of grouping).
struct Divider {
  explicit Divider(std::uint64_t d) : d(d), shift(d && (d & (d - 1)) == 0 ? unsigned(__builtin_ctzll(d)) : 64) {}
  std::uint64_t quotient(std::uint64_t x) const { return shift < 64 ? x >> shift : x / d; }
  std::uint64_t remainder(std::uint64_t x) const { return shift < 64 ? x & (d - 1) : x % d; }
  std::uint64_t d;
  unsigned shift;
};

unsigned bits_of(std::uint64_t max) { return max == 0 ? 0 : 64 - unsigned(__builtin_clzll(max)); }

[[noreturn]] void outside_extent(const ChunkGrid& grid, const std::uint64_t* point, std::size_t index) {
  const Coords coords(point, point + grid.rank());
  throw Error(ErrorCode::invalid_argument, "coordinate " + coords_text(coords) + " (point " + std::to_string(index) +
                                               ") is outside the extent " + coords_text(grid.dataset_dims()));
}

// The grid in the terms of a loop over coordinates.
struct Geometry {
  explicit Geometry(const ChunkGrid& grid)
      : grid(grid), rank(grid.rank()), dims(grid.dataset_dims().data()), grid_dims(grid.grid_dims().data()) {
    for (std::uint64_t c : grid.chunk_dims()) div.emplace_back(c);
  }
  const ChunkGrid& grid;
  std::size_t rank;
  const std::uint64_t* dims;
  const std::uint64_t* grid_dims;
  std::vector<Divider> div;
};

// Calls visit(i, chunk, offset) for the points point(0) ... point(n - 1); throws at the first
// outside the extent. RANK > 0: the rank known when compiling (the usual 1-4), so the loop
// over dimensions unrolls; 0: any rank.
template <std::size_t RANK, typename Point, typename Visit>
void visit_rank(const Geometry& g, std::size_t n, Point& point, Visit& visit) {
  const std::size_t rank = RANK ? RANK : g.rank;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t* c = point(i);
    std::uint64_t chunk = 0, offset = 0;
    bool outside = false;
    for (std::size_t d = 0; d < rank; ++d) {
      outside |= c[d] >= g.dims[d];
      chunk = chunk * g.grid_dims[d] + g.div[d].quotient(c[d]);
      offset = offset * g.div[d].d + g.div[d].remainder(c[d]);
    }
    if (outside) outside_extent(g.grid, c, i);
    visit(i, chunk, std::uint32_t(offset));
  }
}

template <typename Point, typename Visit>
void visit_points(const Geometry& g, std::size_t n, Point&& point, Visit&& visit) {
  switch (g.rank) {
    case 1: return visit_rank<1>(g, n, point, visit);
    case 2: return visit_rank<2>(g, n, point, visit);
    case 3: return visit_rank<3>(g, n, point, visit);
    case 4: return visit_rank<4>(g, n, point, visit);
    default: return visit_rank<0>(g, n, point, visit);
  }
}

// The caller's points in their order.
struct InOrder {
  const std::uint64_t* operator()(std::size_t i) const { return coords + i * rank; }
  const std::uint64_t* coords;
  std::size_t rank;
};

// Buckets of 2^shift consecutive chunks from chunk `first`.
struct Buckets {
  std::uint64_t first = 0;
  unsigned shift = 0;
  std::size_t count = 0;
  std::size_t of(std::uint64_t chunk) const { return std::size_t((chunk - first) >> shift); }
};

// One bucket a chunk when the grid has few enough chunks; else buckets over the chunks the
// points span, at most max(2^16, n) of them (so counting takes at most 8 bytes a point).
Buckets choose_buckets(const Geometry& g, const InOrder& points, std::size_t n, std::uint64_t chunks) {
  const std::uint64_t most = std::max<std::uint64_t>(std::uint64_t(1) << 16, n);
  if (chunks <= most) return Buckets{0, 0, std::size_t(chunks)};
  std::uint64_t low = UINT64_MAX, high = 0;
  visit_points(g, n, points, [&](std::size_t, std::uint64_t chunk, std::uint32_t) {
    low = std::min(low, chunk);
    high = std::max(high, chunk);
  });
  unsigned shift = 0;
  while (((high - low) >> shift) >= most) ++shift;
  return Buckets{low, shift, std::size_t(((high - low) >> shift) + 1)};
}

// The points in bucket order, the caller's order inside a bucket; `ends` gets each bucket's
// end (its first point is the previous bucket's end).
PointVector deal(const Geometry& g, const InOrder& in_order, std::size_t n, const Buckets& buckets,
                 std::vector<std::size_t>& ends) {
  // next[b]: where bucket b's next point goes; once all are dealt, bucket b's end.
  std::vector<std::size_t> next(buckets.count + 1, 0);
  visit_points(g, n, in_order, [&](std::size_t, std::uint64_t chunk, std::uint32_t) { ++next[buckets.of(chunk) + 1]; });
  for (std::size_t b = 1; b <= buckets.count; ++b) next[b] += next[b - 1];
  PointVector points(n);
  visit_points(g, n, in_order, [&](std::size_t i, std::uint64_t chunk, std::uint32_t offset) {
    points[next[buckets.of(chunk)]++] = ChunkPoint{offset, std::uint32_t(i)};
  });
  next.pop_back();
  ends = std::move(next);
  return points;
}

// One stable pass per 8-bit digit of key(element) below `bits`, over [first, last); `spare`
// is the passes' other buffer.
template <typename T, typename Key>
void radix_sort(T* first, T* last, std::vector<T, UninitialisedAllocator<T>>& spare, unsigned bits, Key key) {
  const std::size_t n = std::size_t(last - first);
  if (spare.size() < n) spare.resize(n);
  T *from = first, *to = spare.data();
  for (unsigned shift = 0; shift < bits; shift += 8) {
    std::array<std::size_t, 256> count{};
    for (const T* p = from; p != from + n; ++p) ++count[(key(*p) >> shift) & 255];
    if (*std::max_element(count.begin(), count.end()) == n) continue;
    std::size_t at = 0;
    for (std::size_t& c : count) at += std::exchange(c, at);
    for (const T* p = from; p != from + n; ++p) to[count[(key(*p) >> shift) & 255]++] = *p;
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + n, first);
}

// A point with its chunk (counted from its bucket's first), while a bucket is sorted by chunk.
struct KeyedPoint {
  std::uint64_t chunk;
  ChunkPoint point;
};

class Grouping {
 public:
  Grouping(const Geometry& g, const std::uint64_t* coords, std::uint64_t chunk_elements, PointsByChunk& out)
      : g_(g), coords_(coords), offset_bits_(bits_of(chunk_elements - 1)), out_(out) {}

  // Points [begin, end) of one chunk; sorts them by offset unless they are already.
  void add_chunk(std::uint64_t chunk, std::size_t begin, std::size_t end) {
    out_.chunks.push_back(chunk);
    out_.starts.push_back(begin);
    ChunkPoint *first = &out_.points[begin], *last = &out_.points[end];
    if (std::is_sorted(first, last, by_offset)) return;
    if (last - first < 64) return std::stable_sort(first, last, by_offset);
    // A comparison sort was 200 instructions a point for 6,500 points a chunk, radix passes
    // over a group that stays in cache about 25.
    radix_sort(first, last, point_spare_, offset_bits_, [](const ChunkPoint& p) { return std::uint64_t(p.offset); });
  }

  // Points [begin, end) of the chunks from `base` on, `bits` wide: sorted by chunk, each
  // chunk's added.
  void add_bucket(std::uint64_t base, unsigned bits, std::size_t begin, std::size_t end) {
    keyed_.resize(end - begin);
    const InOrder in_order{coords_, g_.rank};
    const auto indexed = [&](std::size_t k) { return in_order(out_.points[begin + k].index); };
    visit_points(g_, end - begin, indexed, [&](std::size_t k, std::uint64_t chunk, std::uint32_t) {
      keyed_[k] = KeyedPoint{chunk - base, out_.points[begin + k]};
    });
    const auto by_chunk = [](const KeyedPoint& a, const KeyedPoint& b) { return a.chunk < b.chunk; };
    if (!std::is_sorted(keyed_.begin(), keyed_.end(), by_chunk))
      radix_sort(keyed_.data(), keyed_.data() + keyed_.size(), keyed_spare_, bits,
                 [](const KeyedPoint& p) { return p.chunk; });
    for (std::size_t k = 0; k < keyed_.size(); ++k) out_.points[begin + k] = keyed_[k].point;
    for (std::size_t k = 0, run_end; k < keyed_.size(); k = run_end) {
      for (run_end = k + 1; run_end < keyed_.size() && keyed_[run_end].chunk == keyed_[k].chunk;) ++run_end;
      add_chunk(base + keyed_[k].chunk, begin + k, begin + run_end);
    }
  }

 private:
  static bool by_offset(const ChunkPoint& a, const ChunkPoint& b) { return a.offset < b.offset; }

  const Geometry& g_;
  const std::uint64_t* coords_;
  unsigned offset_bits_;
  PointsByChunk& out_;
  PointVector point_spare_;
  std::vector<KeyedPoint, UninitialisedAllocator<KeyedPoint>> keyed_, keyed_spare_;
};

}  // namespace

std::uint64_t chunk_count_checked(const ChunkGrid& grid) {
  std::uint64_t n = 1;
  for (std::uint64_t g : grid.grid_dims()) {
    H5SPARSE_FAIL_IF(g != 0 && n > UINT64_MAX / g, ErrorCode::unsupported,
                     "the dataset has more than 2^64 chunks: coordinate I/O cannot number them");
    n *= g;
  }
  return n;
}

void check_inside_extent(const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n) {
  const Geometry g(grid);
  visit_points(g, n, InOrder{coords, g.rank}, [](std::size_t, std::uint64_t, std::uint32_t) {});
}

PointsByChunk group_points(const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n) {
  H5SPARSE_FAIL_IF(n > kPartPoints, ErrorCode::internal_error, "more points than a part holds");
  const std::uint64_t chunks = chunk_count_checked(grid);
  std::uint64_t chunk_elements = 1;
  for (std::uint64_t c : grid.chunk_dims()) chunk_elements *= c;
  H5SPARSE_FAIL_IF(chunk_elements > (std::uint64_t(1) << 32), ErrorCode::unsupported,
                   "coordinate I/O needs chunks of at most 2^32 elements");
  PointsByChunk out;
  const Geometry g(grid);
  const InOrder in_order{coords, g.rank};
  const Buckets buckets = n ? choose_buckets(g, in_order, n, chunks) : Buckets{};
  std::vector<std::size_t> ends;
  out.points = deal(g, in_order, n, buckets, ends);
  Grouping grouping(g, coords, chunk_elements, out);
  for (std::size_t b = 0, begin = 0; b < buckets.count; begin = ends[b++]) {
    if (begin == ends[b]) continue;
    const std::uint64_t base = buckets.first + (std::uint64_t(b) << buckets.shift);
    if (buckets.shift == 0)
      grouping.add_chunk(base, begin, ends[b]);
    else
      grouping.add_bucket(base, buckets.shift, begin, ends[b]);
  }
  out.starts.push_back(n);
  return out;
}

}  // namespace h5sparse::detail
