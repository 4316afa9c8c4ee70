// Geometry of an extent change (see extent_change.hpp).
#include "h5sparse/extent_change.hpp"

#include <algorithm>

#include "h5sparse/error.hpp"

namespace h5sparse {

ExtentChange::ExtentChange(std::vector<std::uint64_t> old_dims, std::vector<std::uint64_t> new_dims,
                           std::vector<std::uint64_t> chunk_dims)
    : old_(std::move(old_dims)), new_(std::move(new_dims)), chunk_(std::move(chunk_dims)) {
  H5SPARSE_FAIL_IF(chunk_.empty() || old_.size() != chunk_.size() || new_.size() != chunk_.size(),
                   ErrorCode::invalid_argument, "extent change: the old, new and chunk ranks differ");
  for (std::size_t d = 0; d < chunk_.size(); ++d) {
    H5SPARSE_FAIL_IF(chunk_[d] == 0, ErrorCode::invalid_argument, "extent change: chunk dimension is zero");
    kept_.push_back(std::min(old_[d], new_[d]));
  }
}

std::int64_t ExtentChange::plane(std::size_t d) const {
  // A chunk straddles the kept box in d when kept lies strictly inside it; only a changed
  // dimension moves the box's face through chunks that exist on both sides.
  if (old_[d] == new_[d] || kept_[d] % chunk_[d] == 0) return -1;
  return std::int64_t(kept_[d] / chunk_[d]);
}

std::uint64_t ExtentChange::boundary_bound() const {
  std::uint64_t total = 0;
  for (std::size_t d = 0; d < rank(); ++d) {
    if (plane(d) < 0) continue;
    std::uint64_t n = 1;
    for (std::size_t e = 0; e < rank(); ++e)
      if (e != d) n *= (kept_[e] + chunk_[e] - 1) / chunk_[e];
    total += n;
  }
  return total;
}

bool ExtentChange::is_boundary(const std::vector<std::uint64_t>& origin) const {
  bool straddles = false;
  for (std::size_t d = 0; d < rank(); ++d) {
    if (origin[d] >= kept_[d]) return false;  // cut away, or did not exist before
    const std::int64_t p = plane(d);
    straddles = straddles || (p >= 0 && origin[d] / chunk_[d] == std::uint64_t(p));
  }
  return straddles;
}

bool ExtentChange::rewritten_by_hdf5(const std::vector<std::uint64_t>& origin) const {
  if (!is_boundary(origin)) return false;
  for (std::size_t d = 0; d < rank(); ++d)
    if (new_[d] < old_[d] && origin[d] < new_[d] && origin[d] + chunk_[d] > new_[d]) return true;
  return false;
}

ChunkSelection ExtentChange::outside_kept(const std::vector<std::uint64_t>& origin) const {
  const std::size_t r = rank();
  std::uint64_t count = 1;
  for (std::uint64_t c : chunk_) count *= c;
  ChunkSelection out(count);
  // Elements inside the kept box, per dimension: [0, inside[d]) of the chunk.
  std::vector<std::uint64_t> inside(r);
  for (std::size_t d = 0; d < r; ++d)
    inside[d] = kept_[d] > origin[d] ? std::min(chunk_[d], kept_[d] - origin[d]) : 0;
  // Row by row along the last dimension: a row is wholly outside when one of its leading
  // coordinates is, else its tail past inside[r-1] is.
  const std::uint64_t row = chunk_[r - 1];
  std::vector<std::uint64_t> coords(r, 0);
  for (std::uint64_t start = 0; start < count; start += row) {
    bool row_outside = false;
    for (std::size_t d = 0; d + 1 < r; ++d) row_outside = row_outside || coords[d] >= inside[d];
    if (row_outside)
      out.set_range(start, row);
    else if (inside[r - 1] < row)
      out.set_range(start + inside[r - 1], row - inside[r - 1]);
    for (std::size_t d = r - 1; d-- > 0;) {
      if (++coords[d] < chunk_[d]) break;
      coords[d] = 0;
    }
  }
  return out;
}

}  // namespace h5sparse
