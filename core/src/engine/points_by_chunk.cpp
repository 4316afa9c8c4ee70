// Grouping a coordinate write's points by chunk. The sort is a least-significant-digit radix
// sort (Knuth, TAOCP vol. 3, 5.2.5), 8 bits a pass, offset digits first and chunk digits last:
// stable, so a coordinate given twice keeps the caller's order, and linear in the points (a
// comparison sort of 2 million points took several times longer). Passes whose digit is the
// same for every point are skipped, and input already in chunk order is not sorted at all.
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

std::vector<ChunkPoint> locate(const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n) {
  const std::size_t rank = grid.rank();
  std::vector<Divider> by_chunk;
  std::vector<std::uint64_t> grid_dims;
  for (std::size_t d = 0; d < rank; ++d) {
    by_chunk.emplace_back(grid.chunk_dims()[d]);
    grid_dims.push_back((grid.dataset_dims()[d] + grid.chunk_dims()[d] - 1) / grid.chunk_dims()[d]);
  }
  std::vector<ChunkPoint> points(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t* c = coords + i * rank;
    std::uint64_t chunk = 0, offset = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      if (c[d] >= grid.dataset_dims()[d]) outside_extent(grid, c, i);
      chunk = chunk * grid_dims[d] + by_chunk[d].quotient(c[d]);
      offset = offset * by_chunk[d].d + by_chunk[d].remainder(c[d]);
    }
    points[i] = ChunkPoint{chunk, i, std::uint32_t(offset)};
  }
  return points;
}

bool in_chunk_order(const std::vector<ChunkPoint>& points) {
  for (std::size_t i = 1; i < points.size(); ++i) {
    const ChunkPoint &a = points[i - 1], &b = points[i];
    if (a.chunk > b.chunk || (a.chunk == b.chunk && a.offset > b.offset)) return false;
  }
  return true;
}

// One stable pass per 8-bit digit of key(point) below `bits`.
template <typename Key>
void radix_sort(std::vector<ChunkPoint>& points, std::vector<ChunkPoint>& spare, unsigned bits, Key key) {
  for (unsigned shift = 0; shift < bits; shift += 8) {
    std::array<std::size_t, 256> count{};
    for (const ChunkPoint& p : points) ++count[(key(p) >> shift) & 255];
    if (*std::max_element(count.begin(), count.end()) == points.size()) continue;
    std::size_t at = 0;
    for (std::size_t& c : count) at += std::exchange(c, at);
    spare.resize(points.size());
    for (const ChunkPoint& p : points) spare[count[(key(p) >> shift) & 255]++] = p;
    points.swap(spare);
  }
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
  if (!in_chunk_order(out.points)) {
    std::vector<ChunkPoint> spare;
    radix_sort(out.points, spare, bits_of(chunk_elements - 1), [](const ChunkPoint& p) { return std::uint64_t(p.offset); });
    radix_sort(out.points, spare, bits_of(chunks - 1), [](const ChunkPoint& p) { return p.chunk; });
  }
  for (std::size_t i = 0; i < out.points.size(); ++i)
    if (i == 0 || out.points[i].chunk != out.points[i - 1].chunk) out.starts.push_back(i);
  out.starts.push_back(out.points.size());
  return out;
}

}  // namespace h5sparse::detail
