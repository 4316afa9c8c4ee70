// Canonical BLOCK/POINT decomposition of a set of elements (see box_list.hpp).
#include "box_list.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

namespace h5sparse::tool {

std::uint64_t BoxList::volume(std::size_t i) const noexcept {
  std::uint64_t n = 1;
  for (std::size_t d = 0; d < rank_; ++d) n *= hi(i)[d] - lo(i)[d] + 1;
  return n;
}

std::uint64_t BoxList::element_count() const noexcept {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < size(); ++i) n += volume(i);
  return n;
}

void BoxList::add(const std::uint64_t* lo, const std::uint64_t* hi) {
  values_.insert(values_.end(), lo, lo + rank_);
  values_.insert(values_.end(), hi, hi + rank_);
}

void BoxList::add_run(const std::uint64_t* row, std::uint64_t first, std::uint64_t length) {
  if (length == 0) return;
  values_.insert(values_.end(), row, row + rank_ - 1);
  values_.push_back(first);
  values_.insert(values_.end(), row, row + rank_ - 1);
  values_.push_back(first + length - 1);
}

void BoxList::sort_boxes(const std::function<bool(std::size_t, std::size_t)>& less) {
  std::vector<std::size_t> order(size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), less);
  std::vector<std::uint64_t> sorted;
  sorted.reserve(values_.size());
  for (std::size_t i : order) sorted.insert(sorted.end(), lo(i), lo(i) + 2 * rank_);
  values_.swap(sorted);
}

void BoxList::merge_along(std::size_t d) {
  std::vector<std::size_t> key;
  for (std::size_t e = 0; e < rank_; ++e)
    if (e != d) key.push_back(e);
  // Boxes that may merge become neighbours: same extent in every other dimension, then by
  // their start along d.
  sort_boxes([&](std::size_t a, std::size_t b) {
    for (std::size_t e : key) {
      if (lo(a)[e] != lo(b)[e]) return lo(a)[e] < lo(b)[e];
      if (hi(a)[e] != hi(b)[e]) return hi(a)[e] < hi(b)[e];
    }
    return lo(a)[d] < lo(b)[d];
  });
  const std::size_t width = 2 * rank_;
  std::size_t out = 0;  // boxes kept so far, merged in place
  for (std::size_t i = 0; i < size(); ++i) {
    std::uint64_t* cur = values_.data() + width * i;
    if (out > 0) {
      std::uint64_t* last = values_.data() + width * (out - 1);
      bool same = true;
      for (std::size_t e : key) same = same && last[e] == cur[e] && last[rank_ + e] == cur[rank_ + e];
      if (same && last[rank_ + d] + 1 == cur[d]) {
        last[rank_ + d] = cur[rank_ + d];
        continue;
      }
    }
    if (out != i) std::copy(cur, cur + width, values_.data() + width * out);
    ++out;
  }
  values_.resize(width * out);
}

void BoxList::canonicalize() {
  if (rank_ == 0) return;
  merge_along(rank_ - 1);
  for (std::size_t d = rank_ - 1; d-- > 0;) merge_along(d);
  sort_boxes([&](std::size_t a, std::size_t b) {
    return std::lexicographical_compare(lo(a), lo(a) + 2 * rank_, lo(b), lo(b) + 2 * rank_);
  });
}

}  // namespace h5sparse::tool
