// Grouping a coordinate write's points by chunk. The sort by chunk is a least-significant-digit
// radix sort (Knuth, TAOCP vol. 3, 5.2.5), 8 bits a pass: stable, so a coordinate given twice
// keeps the caller's order, and linear in the points. Passes whose digit is the same for every
// point are skipped, and input already in chunk order is not sorted at all. Inside a chunk,
// only points out of order get sorted by offset: by radix too, or by insertion when few.
#include "points_by_chunk.hpp"

#include <algorithm>
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

}  // namespace

std::uint64_t chunk_count_checked(const ChunkGrid& grid) {
  std::uint64_t n = 1;
  for (std::size_t d = 0; d < grid.rank(); ++d) {
    const std::uint64_t g = (grid.dataset_dims()[d] + grid.chunk_dims()[d] - 1) / grid.chunk_dims()[d];
    H5SPARSE_FAIL_IF(g != 0 && n > UINT64_MAX / g, ErrorCode::unsupported,
                     "the dataset has more than 2^64 chunks: coordinate I/O cannot number them");
    n *= g;
  }
  return n;
}

namespace {

// Each point's chunk and offset. RANK > 0: the rank known when compiling (the usual 1-4), so
// the loop over dimensions unrolls; 0: any rank.
template <std::size_t RANK>
void locate_points(const ChunkGrid& grid, const Divider* div, const std::uint64_t* gdims, const std::uint64_t* coords,
                   std::size_t n, ChunkPoint* out) {
  const std::size_t rank = RANK ? RANK : grid.rank();
  const std::uint64_t* dims = grid.dataset_dims().data();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t* c = coords + i * rank;
    std::uint64_t chunk = 0, offset = 0;
    bool outside = false;
    for (std::size_t d = 0; d < rank; ++d) {
      outside |= c[d] >= dims[d];
      chunk = chunk * gdims[d] + div[d].quotient(c[d]);
      offset = offset * div[d].d + div[d].remainder(c[d]);
    }
    if (outside) outside_extent(grid, c, i);
    out[i] = ChunkPoint{chunk, i, std::uint32_t(offset)};
  }
}

PointVector locate(const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n) {
  const std::size_t rank = grid.rank();
  std::vector<Divider> div;
  std::vector<std::uint64_t> gdims;
  for (std::size_t d = 0; d < rank; ++d) {
    div.emplace_back(grid.chunk_dims()[d]);
    gdims.push_back((grid.dataset_dims()[d] + grid.chunk_dims()[d] - 1) / grid.chunk_dims()[d]);
  }
  PointVector points(n);
  const auto run = [&](auto locate_rank) { locate_rank(grid, div.data(), gdims.data(), coords, n, points.data()); };
  switch (rank) {
    case 1: run(locate_points<1>); break;
    case 2: run(locate_points<2>); break;
    case 3: run(locate_points<3>); break;
    case 4: run(locate_points<4>); break;
    default: run(locate_points<0>);
  }
  return points;
}

bool in_chunk_order(const PointVector& points) {
  for (std::size_t i = 1; i < points.size(); ++i) {
    const ChunkPoint &a = points[i - 1], &b = points[i];
    if (a.chunk > b.chunk || (a.chunk == b.chunk && a.offset > b.offset)) return false;
  }
  return true;
}

// Calls f(begin, end) for each run of points of one chunk.
template <typename F>
void for_each_group(const PointVector& points, F&& f) {
  for (std::size_t begin = 0, end; begin < points.size(); begin = end) {
    for (end = begin + 1; end < points.size() && points[end].chunk == points[begin].chunk;) ++end;
    f(begin, end);
  }
}

bool offsets_ascending(const PointVector& points, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin + 1; i < end; ++i)
    if (points[i].offset < points[i - 1].offset) return false;
  return true;
}

// One stable pass per 8-bit digit of key(point) below `bits`, over [first, last); `spare`
// is the passes' other buffer.
template <typename Key>
void radix_sort(ChunkPoint* first, ChunkPoint* last, PointVector& spare, unsigned bits, Key key) {
  const std::size_t n = std::size_t(last - first);
  if (spare.size() < n) spare.resize(n);
  ChunkPoint *from = first, *to = spare.data();
  for (unsigned shift = 0; shift < bits; shift += 8) {
    std::array<std::size_t, 256> count{};
    for (const ChunkPoint* p = from; p != from + n; ++p) ++count[(key(*p) >> shift) & 255];
    if (*std::max_element(count.begin(), count.end()) == n) continue;
    std::size_t at = 0;
    for (std::size_t& c : count) at += std::exchange(c, at);
    for (const ChunkPoint* p = from; p != from + n; ++p) to[count[(key(*p) >> shift) & 255]++] = *p;
    std::swap(from, to);
  }
  if (from != first) std::copy(from, from + n, first);
}

// Sorts a chunk's points by offset, stably. Small groups by insertion (inside stable_sort);
// larger ones by radix: a comparison sort was 200 instructions a point for 6,500 points a
// chunk, the radix passes over a group that stays in cache about 25.
void sort_by_offset(ChunkPoint* first, ChunkPoint* last, PointVector& spare, unsigned offset_bits) {
  if (last - first < 64) {
    std::stable_sort(first, last, [](const ChunkPoint& a, const ChunkPoint& b) { return a.offset < b.offset; });
    return;
  }
  radix_sort(first, last, spare, offset_bits, [](const ChunkPoint& p) { return std::uint64_t(p.offset); });
}

}  // namespace

PointsByChunk group_points(const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n) {
  H5SPARSE_FAIL_IF(grid.chunk_dims().size() != grid.rank(), ErrorCode::internal_error, "chunk rank");
  const std::uint64_t chunks = chunk_count_checked(grid);
  std::uint64_t chunk_elements = 1;
  for (std::uint64_t c : grid.chunk_dims()) chunk_elements *= c;
  H5SPARSE_FAIL_IF(chunk_elements > (std::uint64_t(1) << 32), ErrorCode::unsupported,
                   "coordinate I/O needs chunks of at most 2^32 elements");
  PointsByChunk out;
  out.points = locate(grid, coords, n);
  PointVector& points = out.points;
  // By chunk first: points in row-major order (the usual input) are then in order inside each
  // chunk already, and only the chunks whose points are not get sorted by offset.
  const bool sorted = in_chunk_order(points);
  PointVector spare;
  if (!sorted)
    radix_sort(points.data(), points.data() + points.size(), spare, bits_of(chunks - 1),
               [](const ChunkPoint& p) { return p.chunk; });
  const unsigned offset_bits = bits_of(chunk_elements - 1);
  for_each_group(points, [&](std::size_t begin, std::size_t end) {
    out.starts.push_back(begin);
    if (!sorted && !offsets_ascending(points, begin, end))
      sort_by_offset(&points[begin], &points[end], spare, offset_bits);
  });
  out.starts.push_back(points.size());
  return out;
}

}  // namespace h5sparse::detail
