// Encoders and the validating decoder of section 0 (docs/FORMAT.md, "Encoded selection").
#include "h5sparse/selection_codec.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

void put_varint(Bytes& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(std::uint8_t(v | 0x80));
    v >>= 7;
  }
  out.push_back(std::uint8_t(v));
}

// Reads LEB128 varints with bounds and overflow checks.
class VarintReader {
 public:
  VarintReader(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}
  std::uint64_t next() {
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      H5SPARSE_FAIL_IF(p_ == end_, ErrorCode::corrupt_data, "encoded selection is truncated");
      const std::uint8_t byte = *p_++;
      H5SPARSE_FAIL_IF(shift == 63 && byte > 1, ErrorCode::corrupt_data, "encoded selection: varint overflows 64 bits");
      v |= std::uint64_t(byte & 0x7F) << shift;
      if (!(byte & 0x80)) return v;
    }
    throw Error(ErrorCode::corrupt_data, "encoded selection: varint longer than 10 bytes");
  }
  bool done() const { return p_ == end_; }

 private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

std::uint64_t element_count_of(const std::vector<std::uint64_t>& dims) {
  H5SPARSE_FAIL_IF(dims.empty() || dims.size() > 32, ErrorCode::invalid_argument, "chunk rank must be 1-32");
  std::uint64_t n = 1;
  for (std::uint64_t d : dims) {
    H5SPARSE_FAIL_IF(d == 0 || n > UINT64_MAX / d, ErrorCode::invalid_argument, "chunk dimensions are zero or too large");
    n *= d;
  }
  return n;
}

using Run = std::pair<std::uint64_t, std::uint64_t>;  // first element, length

// The maximal runs of a selection, in order: listed once for every candidate encoding that
// walks them (each walk of the bitmap cost as much as encoding a one-row chunk's values).
std::vector<Run> runs_of(const ChunkSelection& s) {
  std::vector<Run> runs;
  s.for_each_run([&](std::uint64_t first, std::uint64_t length) { runs.emplace_back(first, length); });
  return runs;
}

Bytes encode_runs(const std::vector<Run>& runs) {
  Bytes out{std::uint8_t(SelectionEncoding::runs)};
  put_varint(out, runs.size());
  std::uint64_t next = 0;  // gap = start - end of previous run
  for (const auto& [first, length] : runs) {
    put_varint(out, first - next);
    put_varint(out, length - 1);
    next = first + length;
  }
  return out;
}

// The selection (its runs) as one rectangle (start, extent per dimension) when it is exactly one.
std::optional<std::vector<std::pair<std::uint64_t, std::uint64_t>>> as_single_block(
    const std::vector<Run>& runs, const std::vector<std::uint64_t>& dims) {
  if (runs.empty() || dims.empty()) return std::nullopt;
  const std::size_t rank = dims.size();
  std::vector<std::uint64_t> lo(rank, UINT64_MAX), hi(rank, 0);
  std::uint64_t defined = 0;
  for (const auto& [first, length] : runs) {
    defined += length;
    for (std::uint64_t linear : {first, first + length - 1}) {
      std::uint64_t rest = linear;
      for (std::size_t d = rank; d-- > 0;) {
        const std::uint64_t c = rest % dims[d];
        rest /= dims[d];
        lo[d] = std::min(lo[d], c);
        hi[d] = std::max(hi[d], c);
      }
    }
  }
  if (defined == 0) return std::nullopt;
  std::uint64_t volume = 1;
  for (std::size_t d = 0; d < rank; ++d) volume *= hi[d] - lo[d] + 1;
  // Run endpoints bound every defined element along the last dimension only when runs do
  // not wrap rows; the volume check below rejects any other shape.
  if (volume != defined) return std::nullopt;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> block(rank);
  for (std::size_t d = 0; d < rank; ++d) block[d] = {lo[d], hi[d] - lo[d] + 1};
  // Verify: every defined element lies inside the box (with equal counts, the box is exactly
  // the selection). Checked per row segment of each run (a run may wrap rows), not per
  // element: per element it cost more than the rest of a one-row write together.
  const std::uint64_t row = dims[rank - 1];
  bool inside = true;
  for (const auto& [first, length] : runs) {
    for (std::uint64_t pos = first, end = first + length; inside && pos < end;) {
      const std::uint64_t column = pos % row;
      const std::uint64_t segment = std::min(end - pos, row - column);
      if (column < lo[rank - 1] || column + segment - 1 > hi[rank - 1]) inside = false;
      std::uint64_t rest = pos / row;
      for (std::size_t d = rank - 1; d-- > 0;) {
        const std::uint64_t c = rest % dims[d];
        rest /= dims[d];
        if (c < lo[d] || c > hi[d]) inside = false;
      }
      pos += segment;
    }
  }
  if (!inside) return std::nullopt;
  return block;
}

void put_block(Bytes& out, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& block) {
  put_varint(out, 1);
  for (const auto& [start, extent] : block) {
    put_varint(out, start);
    put_varint(out, extent - 1);
  }
}

void fill_block(ChunkSelection& s, const std::vector<std::uint64_t>& dims,
                const std::vector<std::pair<std::uint64_t, std::uint64_t>>& block) {
  const std::size_t rank = dims.size();
  std::vector<std::uint64_t> index(rank, 0);  // position within the block, last dim excluded
  while (true) {
    std::uint64_t linear = 0;
    for (std::size_t d = 0; d < rank; ++d)
      linear = linear * dims[d] + block[d].first + (d + 1 < rank ? index[d] : 0);
    s.set_range(linear, block[rank - 1].second);
    std::size_t d = rank - 1;
    while (d-- > 0) {
      if (++index[d] < block[d].second) break;
      index[d] = 0;
    }
    if (d == std::size_t(-1)) return;
  }
}

}  // namespace

void ChunkSelection::set_range(std::uint64_t first, std::uint64_t length) noexcept {
  for (std::uint64_t i = first; i < first + length;) {
    if ((i & 63) == 0 && i + 64 <= first + length) {
      words_[i >> 6] = ~std::uint64_t(0);
      i += 64;
    } else {
      set(i++);
    }
  }
}

std::uint64_t ChunkSelection::defined_count() const noexcept {
  // Empty and full words without a popcount: the portable x86-64 build calls libgcc's
  // software popcount, which was a tenth of a one-row write.
  std::uint64_t n = 0;
  for (std::uint64_t w : words_) n += w == 0 ? 0 : w == ~std::uint64_t(0) ? 64 : std::uint64_t(__builtin_popcountll(w));
  return n;
}

ChunkSelection& ChunkSelection::operator|=(const ChunkSelection& other) noexcept {
  for (std::size_t i = 0; i < words_.size() && i < other.words_.size(); ++i) words_[i] |= other.words_[i];
  return *this;
}

ChunkSelection& ChunkSelection::subtract(const ChunkSelection& other) noexcept {
  for (std::size_t i = 0; i < words_.size() && i < other.words_.size(); ++i) words_[i] &= ~other.words_[i];
  return *this;
}

Bytes encode_selection_as(SelectionEncoding encoding, const ChunkSelection& s,
                          const std::vector<std::uint64_t>& dims) {
  H5SPARSE_FAIL_IF(element_count_of(dims) != s.element_count(), ErrorCode::invalid_argument,
          "selection size does not match the chunk dimensions");
  Bytes out{std::uint8_t(encoding)};
  switch (encoding) {
    case SelectionEncoding::empty:
      H5SPARSE_FAIL_IF(!s.none(), ErrorCode::invalid_argument, "selection is not empty");
      break;
    case SelectionEncoding::all:
      H5SPARSE_FAIL_IF(!s.all(), ErrorCode::invalid_argument, "selection is not complete");
      break;
    case SelectionEncoding::bitmap: {
      const std::size_t bytes = std::size_t((s.element_count() + 7) / 8);
      out.resize(1 + bytes);
      for (std::size_t i = 0; i < bytes; ++i) out[1 + i] = std::uint8_t(s.words()[i / 8] >> (8 * (i % 8)));
      break;
    }
    case SelectionEncoding::offsets: {
      put_varint(out, s.defined_count());
      std::uint64_t next = 0;  // gap = offset - (previous offset + 1)
      s.for_each_run([&](std::uint64_t first, std::uint64_t length) {
        put_varint(out, first - next);
        for (std::uint64_t k = 1; k < length; ++k) out.push_back(0);
        next = first + length;
      });
      break;
    }
    case SelectionEncoding::runs:
      return encode_runs(runs_of(s));
    case SelectionEncoding::blocks: {
      const auto block = as_single_block(runs_of(s), dims);
      H5SPARSE_FAIL_IF(!block, ErrorCode::invalid_argument, "selection is not one block");
      put_block(out, *block);
      break;
    }
    default:
      throw Error(ErrorCode::invalid_argument, "unknown selection encoding");
  }
  return out;
}

Bytes encode_selection(const ChunkSelection& s, const std::vector<std::uint64_t>& dims) {
  const std::uint64_t defined = s.defined_count();  // counted once: each count is a walk
  if (defined == 0) return encode_selection_as(SelectionEncoding::empty, s, dims);
  if (defined == s.element_count()) return encode_selection_as(SelectionEncoding::all, s, dims);
  // Candidates in tag order, a later one must be strictly smaller. The bitmap's size is known
  // without building it (building it for a chunk it loses in cost a third of a one-row write).
  const std::size_t bitmap_size = std::size_t(1 + (s.element_count() + 7) / 8);
  Bytes best;  // empty: the bitmap is the best so far
  const auto best_size = [&] { return best.empty() ? bitmap_size : best.size(); };
  std::uint64_t runs = 0, carry = 0;  // run starts: set bits whose predecessor is clear
  for (std::uint64_t w : s.words()) {
    const std::uint64_t starts = w & ~((w << 1) | carry);
    if (starts) runs += std::uint64_t(__builtin_popcountll(starts));
    carry = w >> 63;
  }
  // Lower bounds (tag + count + one byte per offset, two per run) skip hopeless candidates.
  if (2 + defined < best_size()) {
    Bytes candidate = encode_selection_as(SelectionEncoding::offsets, s, dims);
    if (candidate.size() < best_size()) best.swap(candidate);
  }
  std::vector<Run> listed;  // the runs, listed by the first candidate that walks them
  const auto run_list = [&]() -> const std::vector<Run>& {
    if (listed.empty()) listed = runs_of(s);
    return listed;
  };
  if (2 + 2 * runs < best_size()) {
    Bytes candidate = encode_runs(run_list());
    if (candidate.size() < best_size()) best.swap(candidate);
  }
  std::uint64_t rows = 1;  // a single block has at most one run per row of the chunk
  for (std::size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
  if (runs <= rows) {
    if (const auto block = as_single_block(run_list(), dims)) {
      Bytes candidate{std::uint8_t(SelectionEncoding::blocks)};
      put_block(candidate, *block);
      if (candidate.size() < best_size()) best.swap(candidate);
    }
  }
  return best.empty() ? encode_selection_as(SelectionEncoding::bitmap, s, dims) : best;
}

ChunkSelection decode_selection(const std::uint8_t* data, std::size_t size,
                                const std::vector<std::uint64_t>& dims) {
  const std::uint64_t n = element_count_of(dims);
  H5SPARSE_FAIL_IF(size == 0, ErrorCode::corrupt_data, "encoded selection is empty (no encoding tag)");
  ChunkSelection s(n);
  VarintReader in(data + 1, size - 1);
  switch (SelectionEncoding(data[0])) {
    case SelectionEncoding::empty:
      break;
    case SelectionEncoding::all:
      s.set_range(0, n);
      break;
    case SelectionEncoding::bitmap: {
      H5SPARSE_FAIL_IF(size - 1 != (n + 7) / 8, ErrorCode::corrupt_data,
              "encoded selection: bitmap of " + std::to_string(size - 1) + " bytes for " + std::to_string(n) +
                  " elements");
      // The bitmap's byte order is the little-endian byte order of the in-memory words.
      for (std::uint64_t w = 0; w * 8 < size - 1; ++w) {
        std::uint64_t word = 0;
        const std::size_t bytes = std::min<std::size_t>(8, size - 1 - w * 8);
        for (std::size_t b = 0; b < bytes; ++b) word |= std::uint64_t(data[1 + w * 8 + b]) << (8 * b);
        s.set_word(w, word);
      }
      H5SPARSE_FAIL_IF(n % 8 != 0 && (data[size - 1] >> (n % 8)) != 0, ErrorCode::corrupt_data,
              "encoded selection: bitmap has bits past the last element");
      return s;
    }
    case SelectionEncoding::offsets: {
      const std::uint64_t count = in.next();
      H5SPARSE_FAIL_IF(count > n, ErrorCode::corrupt_data, "encoded selection: more offsets than elements");
      std::uint64_t next = 0;
      for (std::uint64_t k = 0; k < count; ++k) {
        const std::uint64_t gap = in.next();
        H5SPARSE_FAIL_IF(next >= n || gap >= n - next, ErrorCode::corrupt_data, "encoded selection: offset outside the chunk");
        next += gap;
        s.set(next++);
      }
      break;
    }
    case SelectionEncoding::runs: {
      const std::uint64_t count = in.next();
      H5SPARSE_FAIL_IF(count > n, ErrorCode::corrupt_data, "encoded selection: more runs than elements");
      std::uint64_t next = 0;
      for (std::uint64_t k = 0; k < count; ++k) {
        const std::uint64_t gap = in.next();
        const std::uint64_t length = in.next() + 1;
        H5SPARSE_FAIL_IF(length == 0 || gap > n - next || length > n - next - gap, ErrorCode::corrupt_data,
                "encoded selection: run outside the chunk");
        s.set_range(next + gap, length);
        next += gap + length;
      }
      break;
    }
    case SelectionEncoding::blocks: {
      const std::uint64_t count = in.next();
      H5SPARSE_FAIL_IF(count > n, ErrorCode::corrupt_data, "encoded selection: more blocks than elements");
      for (std::uint64_t k = 0; k < count; ++k) {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> block(dims.size());
        for (std::size_t d = 0; d < dims.size(); ++d) {
          const std::uint64_t start = in.next();
          const std::uint64_t extent = in.next() + 1;
          H5SPARSE_FAIL_IF(extent == 0 || start >= dims[d] || extent > dims[d] - start, ErrorCode::corrupt_data,
                  "encoded selection: block outside the chunk");
          block[d] = {start, extent};
        }
        fill_block(s, dims, block);
      }
      break;
    }
    default:
      throw Error(ErrorCode::corrupt_data, "encoded selection: unknown encoding tag " + std::to_string(data[0]));
  }
  H5SPARSE_FAIL_IF(!in.done(), ErrorCode::corrupt_data, "encoded selection has trailing bytes");
  return s;
}

}  // namespace h5sparse
