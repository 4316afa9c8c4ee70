// Canonical BLOCK/POINT decomposition of a set of elements (see box_list.hpp).
//
// One sort puts the boxes in row-major order of their lower corners; every merge after that
// keeps the survivor's lower corner, so the order holds to the end without sorting again.
// Merging along dimension d pairs a box with the earlier one that ends just before it along d
// and agrees with it on every other dimension, found through a hash table of open boxes.
#include "box_list.hpp"

#include <algorithm>
#include <numeric>

namespace h5sparse::tool {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

}  // namespace

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

void BoxList::sort_by_lower_corner() {
  const std::size_t n = size(), width = 2 * rank_;
  const auto less = [&](std::size_t a, std::size_t b) {
    return std::lexicographical_compare(lo(a), lo(a) + rank_, lo(b), lo(b) + rank_);
  };
  bool sorted = true;  // rows often arrive in order (one chunk column, rank 1)
  for (std::size_t i = 1; i < n && sorted; ++i) sorted = !less(i, i - 1);
  if (sorted) return;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), less);
  std::vector<std::uint64_t> out(values_.size());
  for (std::size_t i = 0; i < n; ++i) std::copy(lo(order[i]), lo(order[i]) + width, out.data() + width * i);
  values_.swap(out);
}

void BoxList::merge_along(std::size_t d) {
  const std::size_t n = size(), width = 2 * rank_;
  std::uint64_t* v = values_.data();
  // Key of an open box: its extent in every dimension but d, and where along d it would continue.
  const auto key_hash = [&](const std::uint64_t* box, std::uint64_t next) {
    std::uint64_t h = next;
    for (std::size_t e = 0; e < rank_; ++e)
      if (e != d) h = mix(mix(h, box[e]), box[rank_ + e]);
    return h;
  };
  const auto same_others = [&](const std::uint64_t* a, const std::uint64_t* b) {
    for (std::size_t e = 0; e < rank_; ++e)
      if (e != d && (a[e] != b[e] || a[rank_ + e] != b[rank_ + e])) return false;
    return true;
  };
  // Open addressing (linear probing, tombstones): one flat array instead of a node per box.
  constexpr std::size_t kEmpty = ~std::size_t(0), kGone = kEmpty - 1;
  std::size_t capacity = 16;
  while (capacity < 4 * n) capacity *= 2;  // live boxes + tombstones stay under half
  std::vector<std::size_t> table(capacity, kEmpty);
  const std::size_t mask = capacity - 1;
  std::vector<bool> merged(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t* box = v + width * i;
    std::size_t slot = key_hash(box, box[d]) & mask;
    std::size_t target = kEmpty;
    for (; table[slot] != kEmpty; slot = (slot + 1) & mask) {
      const std::size_t t = table[slot];
      if (t == kGone) continue;
      const std::uint64_t* candidate = v + width * t;
      if (candidate[rank_ + d] + 1 == box[d] && same_others(candidate, box)) {
        target = t;
        table[slot] = kGone;
        break;
      }
    }
    std::size_t open = i;
    if (target != kEmpty) {  // extend the earlier box; it stays open under its new end
      std::uint64_t* t = v + width * target;
      t[rank_ + d] = box[rank_ + d];
      merged[i] = true;
      open = target;
    }
    const std::uint64_t* o = v + width * open;
    slot = key_hash(o, o[rank_ + d] + 1) & mask;
    while (table[slot] != kEmpty && table[slot] != kGone) slot = (slot + 1) & mask;
    table[slot] = open;
  }
  std::size_t out = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (merged[i]) continue;
    if (out != i) std::copy(v + width * i, v + width * (i + 1), v + width * out);
    ++out;
  }
  values_.resize(width * out);
}

void BoxList::canonicalize() {
  if (rank_ == 0) return;
  sort_by_lower_corner();
  for (std::size_t d = rank_; d-- > 0;) merge_along(d);
}

}  // namespace h5sparse::tool
