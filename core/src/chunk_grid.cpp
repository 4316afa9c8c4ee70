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
  if (length == 0) return;
  const std::size_t r = rank();
  // The first element's coordinates, as chunk coordinate and position in the chunk per
  // dimension; later pieces advance them like an odometer (a full read is 65,536 pieces of
  // one sequence: a few divisions per piece were most of its cost).
  std::uint64_t small[2][4];
  std::vector<std::uint64_t> large(r > 4 ? 2 * r : 0);
  std::uint64_t* grid_at = r > 4 ? large.data() : small[0];
  std::uint64_t* in_at = r > 4 ? large.data() + r : small[1];
  std::uint64_t rest = offset;
  for (std::size_t d = r; d-- > 0;) {
    const std::uint64_t c = rest % dims_[d];
    rest /= dims_[d];
    grid_at[d] = c / chunk_[d];
    in_at[d] = c % chunk_[d];
  }
  H5SPARSE_FAIL_IF(rest != 0, ErrorCode::invalid_argument, "selection lies outside the dataset extent");
  const std::uint64_t row_chunk = chunk_[r - 1], row = dims_[r - 1];
  while (true) {
    // The piece ends at the chunk boundary or the end of the row, whichever comes first.
    const std::uint64_t last = grid_at[r - 1] * row_chunk + in_at[r - 1];
    const std::uint64_t n = std::min({length, row_chunk - in_at[r - 1], row - last});
    std::uint64_t chunk = 0, in_chunk = 0;
    for (std::size_t d = 0; d < r; ++d) {
      chunk = chunk * grid_[d] + grid_at[d];
      in_chunk = in_chunk * chunk_[d] + in_at[d];
    }
    out.push_back({chunk, in_chunk, n, source});
    source += n;
    length -= n;
    if (length == 0) return;
    // Advance by n in the last dimension (never past a chunk or row end), carrying at row ends.
    in_at[r - 1] += n;
    for (std::size_t d = r - 1;; --d) {
      if (in_at[d] == chunk_[d]) {
        in_at[d] = 0;
        ++grid_at[d];
      }
      if (grid_at[d] * chunk_[d] + in_at[d] < dims_[d]) break;
      H5SPARSE_FAIL_IF(d == 0, ErrorCode::invalid_argument, "selection lies outside the dataset extent");
      grid_at[d] = in_at[d] = 0;  // past the end of this dimension: carry into the one before
      ++in_at[d - 1];
    }
  }
}

void ChunkGrid::whole_chunk_pieces(std::uint64_t chunk, std::vector<ChunkPiece>& out) const {
  const std::size_t r = rank();
  const std::vector<std::uint64_t> origin = chunk_origin(chunk);
  std::vector<std::uint64_t> extent(r), at(r, 0);  // at: the row's position in the chunk
  for (std::size_t d = 0; d < r; ++d) extent[d] = std::min(chunk_[d], dims_[d] - origin[d]);
  while (true) {
    std::uint64_t in_chunk = 0, source = 0;
    for (std::size_t d = 0; d < r; ++d) {
      in_chunk = in_chunk * chunk_[d] + at[d];
      source = source * dims_[d] + origin[d] + at[d];
    }
    out.push_back({chunk, in_chunk, extent[r - 1], source});
    std::size_t d = r - 1;  // the next row: dimensions before the last, like an odometer
    while (d > 0 && ++at[d - 1] == extent[d - 1]) at[--d] = 0;
    if (d == 0) return;
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
