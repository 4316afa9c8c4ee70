// The two in-memory forms of a chunk's defined elements, walked alike by the selection encoders
// and filled alike by the decoders: a bitmap over the chunk (ChunkSelection: reads and writes
// of dense arrays) and an ascending offset list (coordinate I/O, whose chunks hold few elements
// of many: a bitmap costs the chunk's size, a list the elements'). One encoder per encoding
// serves both forms, so both choose the same encoding and write the same bytes.
// Private to core.
#pragma once

#include <cstdint>
#include <vector>

#include "h5sparse/selection_codec.hpp"

namespace h5sparse::detail {

// Walks call each(f) with every defined element in ascending order until f returns false, and
// every(f) with all of them (no test per element: the Rice writer's hot loop).

/// The set bits of a bitmap, ascending.
struct BitmapWalk {
  const ChunkSelection& s;

  template <typename F>
  __attribute__((always_inline)) void each(F&& f) const {
    const std::vector<std::uint64_t>& words = s.words();
    for (std::size_t wi = 0; wi < words.size(); ++wi)
      for (std::uint64_t w = words[wi]; w; w &= w - 1)
        if (!f((std::uint64_t(wi) << 6) + std::uint64_t(__builtin_ctzll(w)))) return;
  }
  template <typename F>
  __attribute__((always_inline)) void every(F&& f) const {
    const std::uint64_t* const words = s.words().data();
    const std::size_t count = s.words().size();
    std::uint64_t base = 0;
    for (std::size_t wi = 0; wi < count; ++wi, base += 64)
      for (std::uint64_t w = words[wi]; w; w &= w - 1) f(base + std::uint64_t(__builtin_ctzll(w)));
  }
  template <typename F>
  void each_run(F&& f) const {
    s.for_each_run(f);
  }
  /// The last defined element (0 when none).
  std::uint64_t last() const {
    const std::vector<std::uint64_t>& words = s.words();
    std::size_t wi = words.size();
    while (wi > 0 && words[wi - 1] == 0) --wi;
    return wi == 0 ? 0 : (std::uint64_t(wi - 1) << 6) + 63 - std::uint64_t(__builtin_clzll(words[wi - 1]));
  }
  std::uint64_t first() const {
    const std::vector<std::uint64_t>& words = s.words();
    std::size_t wi = 0;
    while (wi < words.size() && words[wi] == 0) ++wi;
    return wi == words.size() ? 0 : (std::uint64_t(wi) << 6) + std::uint64_t(__builtin_ctzll(words[wi]));
  }
};

/// An ascending list of distinct offsets.
struct ListWalk {
  const std::uint32_t* offsets;
  std::size_t n;

  template <typename F>
  __attribute__((always_inline)) void each(F&& f) const {
    for (std::size_t i = 0; i < n; ++i)
      if (!f(std::uint64_t(offsets[i]))) return;
  }
  template <typename F>
  __attribute__((always_inline)) void every(F&& f) const {
    for (std::size_t i = 0; i < n; ++i) f(std::uint64_t(offsets[i]));
  }
  template <typename F>
  void each_run(F&& f) const {
    for (std::size_t i = 0; i < n;) {
      std::size_t j = i + 1;
      while (j < n && offsets[j] == offsets[j - 1] + 1) ++j;
      f(std::uint64_t(offsets[i]), std::uint64_t(j - i));
      i = j;
    }
  }
  std::uint64_t last() const { return n ? offsets[n - 1] : 0; }
  std::uint64_t first() const { return n ? offsets[0] : 0; }
  std::uint64_t runs() const {
    std::uint64_t r = 0;
    for (std::size_t i = 0; i < n; ++i) r += i == 0 || offsets[i] != offsets[i - 1] + 1;
    return r;
  }
};

/// Where decoders put defined elements: a bitmap, set bit by bit.
struct BitmapSink {
  ChunkSelection& s;
  void add(std::uint64_t i) { s.word_data()[i >> 6] |= std::uint64_t(1) << (i & 63); }
  void add_range(std::uint64_t first, std::uint64_t length) { s.set_range(first, length); }
};

/// Where decoders put defined elements: appended to an offset list (ascending, as every
/// encoding but overlapping blocks gives them).
struct ListSink {
  std::vector<std::uint32_t>& out;
  void add(std::uint64_t i) { out.push_back(std::uint32_t(i)); }
  void add_range(std::uint64_t first, std::uint64_t length) {
    for (std::uint64_t i = first; i < first + length; ++i) out.push_back(std::uint32_t(i));
  }
};

}  // namespace h5sparse::detail
