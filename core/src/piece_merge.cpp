// See piece_merge.hpp.
#include "h5sparse/piece_merge.hpp"

#include <cstring>

namespace h5sparse {
namespace {

// Appends the elements of a run that differ from the fill value and marks them written.
// W: the element width when fixed at compile time (0: `width`).
template <std::size_t W>
std::uint8_t* keep_non_fill(const std::uint8_t* src, std::uint64_t length, std::uint64_t start,
                            const std::uint8_t* fill, ChunkSelection& written, std::uint8_t* out,
                            std::size_t width = W) {
  const std::size_t es = W ? W : width;
  for (std::uint64_t k = 0; k < length; ++k, src += es) {
    if (std::memcmp(src, fill, W ? W : es) == 0) continue;
    std::memcpy(out, src, W ? W : es);
    out += es;
    written.set(start + k);
  }
  return out;
}

}  // namespace

PieceMerger::PieceMerger(const ChunkLayout& layout, const std::uint8_t* fill, bool fill_is_undefined)
    : chunk_elements_(layout.element_count()),
      element_size_(layout.element_size),
      fill_(fill ? Bytes(fill, fill + layout.element_size) : Bytes(layout.element_size, 0)),
      skip_fill_(fill_is_undefined) {}

void PieceMerger::write(StructuredChunk& chunk, const ChunkPiece* first, const ChunkPiece* last,
                        const std::uint8_t* source) {
  const std::size_t es = element_size_;
  if (packed_.size() < chunk_elements_ * es) packed_.resize(chunk_elements_ * es);
  bool ordered = true;  // pieces ascending and disjoint inside the chunk: read them in place
  std::uint64_t next = 0;
  ChunkSelection covered(chunk_elements_);
  for (const ChunkPiece* p = first; p != last; ++p) {
    ordered = ordered && p->in_chunk_start >= next;
    next = p->in_chunk_start + p->length;
    covered.set_range(p->in_chunk_start, p->length);
  }
  ChunkSelection written(chunk_elements_);
  std::uint8_t* out = packed_.data();
  // Appends the run's elements (those that differ from the fill value, with the option) in
  // chunk order and marks them written.
  auto take = [&](const std::uint8_t* src, std::uint64_t length, std::uint64_t start) {
    if (!skip_fill_) {
      std::memcpy(out, src, length * es);
      out += length * es;
      written.set_range(start, length);
      return;
    }
    switch (es) {  // a fixed-size comparison the compiler inlines, for the common widths
      case 4: out = keep_non_fill<4>(src, length, start, fill_.data(), written, out); break;
      case 8: out = keep_non_fill<8>(src, length, start, fill_.data(), written, out); break;
      default: out = keep_non_fill<0>(src, length, start, fill_.data(), written, out, es);
    }
  };
  if (ordered) {
    for (const ChunkPiece* p = first; p != last; ++p) take(source + p->source * es, p->length, p->in_chunk_start);
  } else {  // unordered or repeated elements: the last write of an element wins
    if (staging_.size() < chunk_elements_ * es) staging_.resize(chunk_elements_ * es);
    for (const ChunkPiece* p = first; p != last; ++p)
      std::memcpy(&staging_[p->in_chunk_start * es], source + p->source * es, p->length * es);
    covered.for_each_run([&](std::uint64_t start, std::uint64_t length) { take(&staging_[start * es], length, start); });
  }
  ChunkSelection undefined = covered;  // written fill values, with the fill-is-undefined option
  undefined.subtract(written);
  merge_write(chunk, written, packed_.data(), es);
  if (!undefined.none()) h5sparse::erase(chunk, undefined, es);
}

void PieceMerger::erase(StructuredChunk& chunk, const ChunkPiece* first, const ChunkPiece* last) const {
  if (chunk.defined.none()) return;
  ChunkSelection erased(chunk_elements_);
  for (const ChunkPiece* p = first; p != last; ++p) erased.set_range(p->in_chunk_start, p->length);
  h5sparse::erase(chunk, erased, element_size_);
}

}  // namespace h5sparse
