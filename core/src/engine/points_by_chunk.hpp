// The points of a coordinate write or erase grouped by chunk (engine/coordinate_write.cpp).
// Private to core.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/codecs.hpp"

namespace h5sparse::detail {

/// A point in 8 bytes: its chunk is its group's, and its index counts from its part's first
/// point (for_each_part). 8 bytes a point is all a write holds besides the caller's arrays.
struct ChunkPoint {
  std::uint32_t offset;  ///< linear in its chunk
  std::uint32_t index;   ///< its position in the caller's arrays, from the part's first point
};

/// Points that `resize` leaves unwritten: every one is written before it is read.
using PointVector = std::vector<ChunkPoint, UninitialisedAllocator<ChunkPoint>>;

/// Points sorted by chunk, then by offset in the chunk, a coordinate given twice in the
/// caller's order (so the last one is the last of its run).
struct PointsByChunk {
  PointVector points;
  std::vector<std::uint64_t> chunks;  ///< each group's chunk, linear in the grid
  std::vector<std::size_t> starts;    ///< each group's first point, then points.size()
  std::size_t groups() const { return chunks.size(); }
};

/// Checks every coordinate against the extent (Error(invalid_argument) naming the first point
/// outside it) and groups the points; n < 2^32 (for_each_part splits larger calls).
PointsByChunk group_points(const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n);

/// Throws as group_points does when a coordinate lies outside the extent.
void check_inside_extent(const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n);

/// The most points in one part: a point's index fits in 32 bits.
constexpr std::size_t kPartPoints = std::size_t(1) << 32;

/// Calls f(points of the part, index of its first point) for consecutive parts of at most
/// `part_points` points, in order (at least once), so a later part's points win as later
/// points do. With more than one part every coordinate is checked first: a point outside the
/// extent then changes nothing, as in one part.
template <typename F>
void for_each_part(const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n, F&& f,
                   std::size_t part_points = kPartPoints) {
  if (n > part_points) check_inside_extent(grid, coords, n);
  std::size_t first = 0;
  do {
    const std::size_t count = std::min(part_points, n - first);
    f(group_points(grid, coords + first * grid.rank(), count), first);
    first += count;
  } while (first < n);
}

/// The grid's chunk count; Error(unsupported) when chunks cannot be numbered in 64 bits.
std::uint64_t chunk_count_checked(const ChunkGrid& grid);

/// One element's `size` bytes: inline for the common sizes (a memcpy call per element cost
/// more than the rest of a coordinate loop).
inline void copy_element(std::uint8_t* to, const std::uint8_t* from, std::size_t size) {
  switch (size) {
    case 4: std::memcpy(to, from, 4); break;
    case 8: std::memcpy(to, from, 8); break;
    default: std::memcpy(to, from, size);
  }
}

}  // namespace h5sparse::detail
