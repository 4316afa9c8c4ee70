// Chunk grid arithmetic (row-major everywhere, as HDF5).
#include "h5sparse/chunk_grid.hpp"

#include <algorithm>

#include "h5sparse/error.hpp"

namespace h5sparse {

ChunkGrid::ChunkGrid(std::vector<std::uint64_t> dataset_dims, std::vector<std::uint64_t> chunk_dims)
    : dims_(std::move(dataset_dims)), chunk_(std::move(chunk_dims)) {
  H5SPARSE_FAIL_IF(dims_.size() != chunk_.size() || dims_.empty(), ErrorCode::invalid_argument,
          "dataset and chunk ranks differ");
  for (std::size_t d = 0; d < dims_.size(); ++d) {
    H5SPARSE_FAIL_IF(chunk_[d] == 0, ErrorCode::invalid_argument, "chunk dimension is zero");
    grid_.push_back((dims_[d] + chunk_[d] - 1) / chunk_[d]);
  }
}

std::uint64_t ChunkGrid::chunk_count() const {
  std::uint64_t n = 1;
  for (std::uint64_t g : grid_) n *= g;
  return n;
}

std::vector<std::uint64_t> ChunkGrid::chunk_origin(std::uint64_t chunk) const {
  std::vector<std::uint64_t> origin(rank());
  for (std::size_t d = rank(); d-- > 0;) {
    origin[d] = (chunk % grid_[d]) * chunk_[d];
    chunk /= grid_[d];
  }
  return origin;
}

std::uint64_t ChunkGrid::chunk_index(const std::vector<std::uint64_t>& origin) const {
  std::uint64_t index = 0;
  for (std::size_t d = 0; d < rank(); ++d) index = index * grid_[d] + origin[d] / chunk_[d];
  return index;
}

std::vector<std::uint64_t> ChunkGrid::element_coords(std::uint64_t chunk, std::uint64_t in_chunk) const {
  std::vector<std::uint64_t> coords = chunk_origin(chunk);
  for (std::size_t d = rank(); d-- > 0;) {
    coords[d] += in_chunk % chunk_[d];
    in_chunk /= chunk_[d];
  }
  return coords;
}

bool ChunkGrid::inside_extent(std::uint64_t chunk, std::uint64_t in_chunk) const {
  const std::vector<std::uint64_t> c = element_coords(chunk, in_chunk);
  for (std::size_t d = 0; d < rank(); ++d)
    if (c[d] >= dims_[d]) return false;
  return true;
}

void ChunkGrid::split(std::uint64_t offset, std::uint64_t length, std::uint64_t source,
                      std::vector<ChunkPiece>& out) const {
  const std::size_t r = rank();
  std::vector<std::uint64_t> coords(r);
  while (length > 0) {
    std::uint64_t rest = offset;
    for (std::size_t d = r; d-- > 0;) {
      coords[d] = rest % dims_[d];
      rest /= dims_[d];
    }
    H5SPARSE_FAIL_IF(rest != 0, ErrorCode::invalid_argument, "selection lies outside the dataset extent");
    // The piece ends at the chunk boundary or the end of the row, whichever comes first.
    const std::uint64_t last = coords[r - 1];
    const std::uint64_t to_chunk_end = chunk_[r - 1] - last % chunk_[r - 1];
    const std::uint64_t to_row_end = dims_[r - 1] - last;
    const std::uint64_t n = std::min({length, to_chunk_end, to_row_end});
    std::uint64_t chunk = 0, in_chunk = 0;
    for (std::size_t d = 0; d < r; ++d) {
      chunk = chunk * grid_[d] + coords[d] / chunk_[d];
      in_chunk = in_chunk * chunk_[d] + coords[d] % chunk_[d];
    }
    out.push_back({chunk, in_chunk, n, source});
    offset += n;
    source += n;
    length -= n;
  }
}

void group_by_chunk(std::vector<ChunkPiece>& pieces) {
  if (pieces.size() < 2) return;
  std::uint64_t lo = pieces[0].chunk, hi = pieces[0].chunk;
  bool sorted = true;
  for (std::size_t i = 1; i < pieces.size(); ++i) {
    const std::uint64_t c = pieces[i].chunk;
    sorted = sorted && c >= pieces[i - 1].chunk;
    lo = std::min(lo, c);
    hi = std::max(hi, c);
  }
  if (sorted) return;
  const std::uint64_t range = hi - lo + 1;
  if (range > 4 * std::uint64_t(pieces.size()) + 1024) {
    std::stable_sort(pieces.begin(), pieces.end(),
                     [](const ChunkPiece& a, const ChunkPiece& b) { return a.chunk < b.chunk; });
    return;
  }
  std::vector<std::size_t> next(std::size_t(range) + 1, 0);  // first slot of each chunk
  for (const ChunkPiece& p : pieces) ++next[std::size_t(p.chunk - lo) + 1];
  for (std::size_t c = 1; c <= range; ++c) next[c] += next[c - 1];
  std::vector<ChunkPiece> grouped(pieces.size());
  for (const ChunkPiece& p : pieces) grouped[next[std::size_t(p.chunk - lo)]++] = p;
  pieces.swap(grouped);
}

}  // namespace h5sparse
