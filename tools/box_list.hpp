// The defined elements of a dataset as h5dump's region notation: rectangular BLOCKs
// (inclusive corners) and single POINTs, as the Tools RFC prints them for --sparse-locations.
// Plain C++ (no HDF5): the reader feeds rows of defined elements, the writer reads boxes back.
//
// The decomposition is canonical, not minimal: runs along the last dimension are merged where
// they touch (also across chunk borders), then boxes identical in every other dimension are
// merged along dimension rank-2, then rank-3, ... down to 0. The same defined set always gives
// the same boxes, so outputs can be diffed; a rectangle of any size is always one BLOCK.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace h5sparse::tool {

/// A set of disjoint boxes of one rank, stored flat: box i is lo[0..r) then hi[0..r) at
/// data()[2*r*i], hi inclusive.
class BoxList {
 public:
  explicit BoxList(std::size_t rank) : rank_(rank) {}

  std::size_t rank() const noexcept { return rank_; }
  std::size_t size() const noexcept { return rank_ == 0 ? 0 : values_.size() / (2 * rank_); }
  const std::uint64_t* lo(std::size_t i) const noexcept { return values_.data() + 2 * rank_ * i; }
  const std::uint64_t* hi(std::size_t i) const noexcept { return lo(i) + rank_; }
  /// Elements in box i.
  std::uint64_t volume(std::size_t i) const noexcept;
  /// Elements in all boxes (they are disjoint).
  std::uint64_t element_count() const noexcept;

  void add(const std::uint64_t* lo, const std::uint64_t* hi);
  /// Adds elements [first, first + length) of the last dimension in the row whose other
  /// coordinates are `row` (rank - 1 values).
  void add_run(const std::uint64_t* row, std::uint64_t first, std::uint64_t length);

  /// Merges touching boxes into the canonical decomposition (see the file comment) and sorts
  /// the result by lower corner, row-major. Boxes must be disjoint.
  void canonicalize();

 private:
  /// Merges boxes that agree on every dimension but `d` and touch along `d`.
  void merge_along(std::size_t d);
  void sort_by_lower_corner();

  std::size_t rank_;
  std::vector<std::uint64_t> values_;
};

}  // namespace h5sparse::tool
