// Which chunks a change of a dataset's extent (H5Dset_extent) touches, and which of their
// elements lose their meaning. Plain C++: the connector uses it to keep the defined set of a
// sparse dataset equal to the RFC's model across any sequence of grows and shrinks
// (docs/DESIGN.md, "Extent changes").
//
// The "kept box" is [0, min(old, new)) in every dimension: the elements that lie inside the
// extent both before and after the change. Only they keep their values and definedness; an
// element outside it was either cut by a shrink or is newly exposed by a grow, and must read as
// undefined. "Boundary chunks" are the chunks that exist on both sides of the change and
// straddle the kept box in a dimension that changed: the only stored chunks whose content can
// disagree with the model afterwards.
#pragma once

#include <cstdint>
#include <vector>

#include "h5sparse/selection_codec.hpp"

namespace h5sparse {

class ExtentChange {
 public:
  /// All three have the same rank (>= 1); chunk dimensions are > 0.
  ExtentChange(std::vector<std::uint64_t> old_dims, std::vector<std::uint64_t> new_dims,
               std::vector<std::uint64_t> chunk_dims);

  std::size_t rank() const { return chunk_.size(); }
  const std::vector<std::uint64_t>& kept() const { return kept_; }
  bool changed() const { return old_ != new_; }

  /// Upper bound of the number of boundary chunks (the sum of the boundary planes' sizes).
  std::uint64_t boundary_bound() const;
  /// Calls f(origin) once for every boundary chunk, origin in element coordinates.
  template <typename F>
  void for_each_boundary_chunk(F&& f) const;
  /// Whether the chunk whose first element is at `origin` is a boundary chunk.
  bool is_boundary(const std::vector<std::uint64_t>& origin) const;
  /// Whether HDF5 itself rewrites this chunk through the filter pipeline while changing the
  /// extent: it straddles the new extent of a dimension that shrinks (HDF5 overwrites the cut
  /// part with the fill value).
  bool rewritten_by_hdf5(const std::vector<std::uint64_t>& origin) const;
  /// The elements of the chunk at `origin` (row-major, full chunk dimensions) that lie outside
  /// the kept box.
  ChunkSelection outside_kept(const std::vector<std::uint64_t>& origin) const;

 private:
  /// The boundary plane's chunk coordinate in dimension d, or -1 when d has no plane.
  std::int64_t plane(std::size_t d) const;
  std::vector<std::uint64_t> old_, new_, chunk_, kept_;
};

template <typename F>
void ExtentChange::for_each_boundary_chunk(F&& f) const {
  const std::size_t r = rank();
  for (std::size_t d = 0; d < r; ++d) {
    const std::int64_t p = plane(d);
    if (p < 0) continue;
    // Chunk coordinates of the plane: dimension d fixed, the others over the kept grid.
    // Chunks also on an earlier dimension's plane were visited there.
    std::vector<std::uint64_t> grid(r), scaled(r, 0);
    bool empty = false;
    for (std::size_t e = 0; e < r; ++e) {
      grid[e] = e == d ? 1 : (kept_[e] + chunk_[e] - 1) / chunk_[e];
      empty = empty || grid[e] == 0;
    }
    if (empty) continue;
    std::vector<std::uint64_t> origin(r);
    while (true) {
      bool seen = false;
      for (std::size_t e = 0; e < r; ++e) {
        const std::uint64_t s = e == d ? std::uint64_t(p) : scaled[e];
        origin[e] = s * chunk_[e];
        if (e < d && plane(e) >= 0 && s == std::uint64_t(plane(e))) seen = true;
      }
      if (!seen) f(static_cast<const std::vector<std::uint64_t>&>(origin));
      std::size_t e = r;
      while (e-- > 0) {
        if (++scaled[e] < grid[e]) break;
        scaled[e] = 0;
      }
      if (e == std::size_t(-1)) break;
    }
  }
}

}  // namespace h5sparse
