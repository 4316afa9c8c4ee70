// Mapping between a dataset's linear element order and its chunks: turns the sequences a
// selection iterator yields (linear offset, length, in selection order) into per-chunk pieces.
// Plain C++: the connector feeds it from H5Ssel_iter_get_seq_list.
#pragma once

#include <cstdint>
#include <vector>

namespace h5sparse {

/// One contiguous stretch of a selection inside one chunk row.
struct ChunkPiece {
  std::uint64_t chunk;           ///< linear index of the chunk in the chunk grid
  std::uint64_t in_chunk_start;  ///< first element, linear in the chunk (row-major, full chunk dims)
  std::uint64_t length;          ///< elements (contiguous in the chunk's last dimension)
  std::uint64_t source;          ///< index of the first element in selection order
};

/// Orders pieces by chunk, keeping their order inside a chunk (a stable sort by chunk). A
/// counting sort when the chunks touched span a range not much larger than the pieces (the
/// usual case: a hyperslab's rows visit the same few chunks over and over), else a merge sort.
void group_by_chunk(std::vector<ChunkPiece>& pieces);

class ChunkGrid {
 public:
  ChunkGrid(std::vector<std::uint64_t> dataset_dims, std::vector<std::uint64_t> chunk_dims);

  std::size_t rank() const { return dims_.size(); }
  const std::vector<std::uint64_t>& dataset_dims() const { return dims_; }
  const std::vector<std::uint64_t>& chunk_dims() const { return chunk_; }
  /// Chunks along each dimension (edge chunks counted).
  const std::vector<std::uint64_t>& grid_dims() const { return grid_; }
  std::uint64_t chunk_count() const;
  /// Element coordinates of a chunk's first element, by the chunk's linear index.
  std::vector<std::uint64_t> chunk_origin(std::uint64_t chunk) const;
  /// Linear chunk index of the chunk whose origin is `origin` (must be on the grid).
  std::uint64_t chunk_index(const std::vector<std::uint64_t>& origin) const;
  /// Dataset coordinates of an element given by its chunk and linear in-chunk index.
  std::vector<std::uint64_t> element_coords(std::uint64_t chunk, std::uint64_t in_chunk) const;
  /// True when that element lies inside the dataset extent (edge chunks overhang it).
  bool inside_extent(std::uint64_t chunk, std::uint64_t in_chunk) const;

  /// Splits the sequence [offset, offset+length) of linear dataset elements, whose first
  /// element is number `source` in selection order, into pieces appended to `out`.
  void split(std::uint64_t offset, std::uint64_t length, std::uint64_t source, std::vector<ChunkPiece>& out) const;
  /// Appends the pieces of chunk `chunk` (its rows inside the extent, ascending) of the
  /// selection of every dataset element in row-major order: what split gives for that chunk.
  void whole_chunk_pieces(std::uint64_t chunk, std::vector<ChunkPiece>& out) const;

 private:
  std::vector<std::uint64_t> dims_, chunk_, grid_;
};

}  // namespace h5sparse
