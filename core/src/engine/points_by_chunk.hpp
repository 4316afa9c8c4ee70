// The points of a coordinate write or erase grouped by chunk (engine/coordinate_write.cpp).
// Private to core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/codecs.hpp"

namespace h5sparse::detail {

struct ChunkPoint {
  std::uint64_t chunk;   ///< linear index of its chunk in the grid
  std::uint64_t index;   ///< its position in the caller's arrays
  std::uint32_t offset;  ///< linear in its chunk
};

/// Points that `resize` leaves unwritten: every one is written before it is read (zeroing them
/// first was a tenth of grouping).
using PointVector = std::vector<ChunkPoint, UninitialisedAllocator<ChunkPoint>>;

/// Points sorted by chunk, then by offset in the chunk, a coordinate given twice in the
/// caller's order (so the last one is the last of its run).
struct PointsByChunk {
  PointVector points;
  std::vector<std::size_t> starts;  ///< each chunk's first point, then points.size()
};

/// Checks every coordinate against the extent (Error(invalid_argument) naming the first point
/// outside it) and groups the points.
PointsByChunk group_points(const ChunkGrid& grid, const std::uint64_t* coords, std::size_t n);

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
