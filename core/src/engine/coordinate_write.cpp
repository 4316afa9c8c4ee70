// Coordinate writes and erases (SparseEngine::write_coordinates, erase_coordinates): the points
// grouped by chunk (points_by_chunk.hpp), then each touched chunk read, updated as a list of
// elements (offsets and values: no bitmap of the chunk) and stored again. Chunks go in batches:
// the calling thread reads a batch's stored chunks and stores the previous batch while the
// workers update this one (HDF5 calls stay on the calling thread).
#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <optional>
#include <utility>

#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/stored_chunk_read.hpp"
#include "offset_merge.hpp"
#include "points_by_chunk.hpp"
#include "region_chunks.hpp"

namespace h5sparse {
namespace {

using detail::ChunkPoint;
using detail::PointsByChunk;

constexpr std::size_t kBatchChunks = 64;

// The elements of `base` and `written` (offsets ascending in both), written's values where
// both have an element.
ChunkElements merged(const ChunkElements& base, const ChunkElements& written, std::size_t es) {
  ChunkElements out;
  out.offsets.reserve(base.offsets.size() + written.offsets.size());
  out.values.resize((base.offsets.size() + written.offsets.size()) * es);
  std::size_t k = 0;
  detail::merge_offsets(base.offsets, written.offsets, [&](bool from_written, std::size_t at) {
    const ChunkElements& from = from_written ? written : base;
    out.offsets.push_back(from.offsets[at]);
    std::memcpy(&out.values[k++ * es], &from.values[at * es], es);
  });
  out.values.resize(k * es);
  return out;
}

// Gives the elements of `chunk` that `written` holds written's values, in place, when
// `chunk` holds every one of them (else false, `chunk` unchanged): an update of values
// copies only them. Each is found by bisection from the previous one.
bool overwrite_held(ChunkElements& chunk, const ChunkElements& written, std::size_t es) {
  std::vector<std::uint32_t> at(written.offsets.size());
  auto from = chunk.offsets.begin();
  for (std::size_t j = 0; j < written.offsets.size(); ++j) {
    from = std::lower_bound(from, chunk.offsets.end(), written.offsets[j]);
    if (from == chunk.offsets.end() || *from != written.offsets[j]) return false;
    at[j] = std::uint32_t(from - chunk.offsets.begin());
  }
  for (std::size_t j = 0; j < at.size(); ++j) std::memcpy(&chunk.values[at[j] * es], &written.values[j * es], es);
  return true;
}

// Removes the elements at `offsets` (ascending) from `chunk`; returns how many it held.
std::size_t remove(ChunkElements& chunk, const std::vector<std::uint32_t>& offsets, std::size_t es) {
  std::size_t keep = 0, j = 0;
  for (std::size_t i = 0; i < chunk.offsets.size(); ++i) {
    while (j < offsets.size() && offsets[j] < chunk.offsets[i]) ++j;
    if (j < offsets.size() && offsets[j] == chunk.offsets[i]) continue;
    chunk.offsets[keep] = chunk.offsets[i];
    if (keep != i) std::memcpy(&chunk.values[keep * es], &chunk.values[i * es], es);
    ++keep;
  }
  const std::size_t removed = chunk.offsets.size() - keep;
  chunk.offsets.resize(keep);
  chunk.values.resize(keep * es);
  return removed;
}

// One touched chunk: its points, what was stored, and what to store.
struct ChunkUpdate {
  std::size_t group = 0;  // its group of points
  StoredChunk stored;
  bool had_stored = false;
  Bytes result;
  bool store = false;
  std::exception_ptr failure;
};

class CoordinateUpdate {
 public:
  CoordinateUpdate(const SparseEngine& engine, ChunkStore& store, const ChunkGrid& grid, PointsByChunk points,
                   const std::uint8_t* values)
      : engine_(engine), params_(engine.params()), store_(store), grid_(grid), points_(std::move(points)),
        values_(values), es_(params_.layout.element_size) {
    fill_ = params_.fill.empty() ? Bytes(es_, 0) : params_.fill;
    threads_ = chunk_threads_for(groups(), points_.points.size() * (es_ + 8));
  }

  void run() {
    std::array<std::vector<ChunkUpdate>, 2> batches;
    std::vector<ChunkUpdate>* current = &batches[0];
    std::vector<ChunkUpdate>* previous = nullptr;  // updated, not yet stored
    std::optional<IndexedFailure> previous_failed;
    for (std::size_t next = 0; next < groups();) {
      next = form(*current, next);
      std::exception_ptr store_error;
      std::optional<IndexedFailure> failed = parallel_for(
          current->size(), threads_, [&](std::size_t i, int) { update((*current)[i]); },
          [&] { if (previous) store(*previous, previous_failed); }, &store_error);
      if (store_error) std::rethrow_exception(store_error);
      previous = current;
      previous_failed = failed;
      current = current == &batches[0] ? &batches[1] : &batches[0];
    }
    if (previous) store(*previous, previous_failed);
  }

 private:
  std::size_t groups() const { return points_.groups(); }
  Coords origin_of(const ChunkUpdate& u) const { return grid_.chunk_origin(points_.chunks[u.group]); }

  // The next batch of chunks from group `first` on, their stored chunks read; returns the
  // group after the batch.
  std::size_t form(std::vector<ChunkUpdate>& batch, std::size_t first) {
    const std::size_t count = std::min(kBatchChunks, groups() - first);
    batch.resize(count);
    for (std::size_t b = 0; b < count; ++b) {
      ChunkUpdate& u = batch[b];
      u.group = first + b;
      u.result.clear();
      u.store = false;
      u.failure = nullptr;
      u.had_stored = store_.read(origin_of(u), u.stored);
    }
    return first + count;
  }

  // The chunk's new elements and stored form (core work only: runs on any thread).
  void update(ChunkUpdate& u) const {
    try {
      ChunkElements chunk = u.had_stored ? decode_stored_elements(u.stored.bytes.data(), u.stored.bytes.size(),
                                                                  u.stored.filter_mask, params_.layout)
                                         : ChunkElements{};
      const Change change = apply(chunk, u.group);
      if (change == Change::none) return;
      const bool structured = u.had_stored && (u.stored.filter_mask & 1) == 0;
      u.result = change == Change::values && structured
                     ? replace_chunk_values(u.stored.bytes.data(), u.stored.bytes.size(), chunk.values, params_.layout)
                     : encode_chunk(chunk, params_.layout);
      u.store = true;
    } catch (...) {
      u.failure = std::current_exception();
    }
  }

  // What applying a chunk's points changed: nothing, values of elements it held, or the set
  // of elements (which needs a new selection).
  enum class Change { none, values, elements };

  // Applies the chunk's points.
  Change apply(ChunkElements& chunk, std::size_t group) const {
    const ChunkPoint* first = &points_.points[points_.starts[group]];
    const ChunkPoint* last = &points_.points[points_.starts[group + 1]];
    ChunkElements written;
    std::vector<std::uint32_t> erased;
    if (values_) {
      written.offsets.resize(std::size_t(last - first));
      written.values.resize(std::size_t(last - first) * es_);
    }
    std::size_t k = 0;
    for (const ChunkPoint* p = first; p != last; ++p) {
      if (p + 1 != last && p[1].offset == p->offset) continue;  // a later point of the element wins
      const std::uint8_t* value = values_ ? values_ + p->index * es_ : nullptr;
      if (!values_ || (params_.fill_is_undefined() && std::memcmp(value, fill_.data(), es_) == 0)) {
        erased.push_back(p->offset);
        continue;
      }
      written.offsets[k] = p->offset;
      detail::copy_element(&written.values[k++ * es_], value, es_);
    }
    written.offsets.resize(k);
    written.values.resize(k * es_);
    const bool removed = !erased.empty() && remove(chunk, erased, es_) > 0;
    if (written.offsets.empty()) return removed ? Change::elements : Change::none;
    if (overwrite_held(chunk, written, es_)) return removed ? Change::elements : Change::values;
    chunk = chunk.offsets.empty() ? std::move(written) : merged(chunk, written, es_);
    return Change::elements;
  }

  // Stores a batch in chunk order up to the first failure, as a serial loop would.
  void store(const std::vector<ChunkUpdate>& batch, const std::optional<IndexedFailure>& failed) const {
    const std::size_t stop = failed ? failed->index : batch.size();
    for (std::size_t b = 0; b < stop; ++b) {
      const ChunkUpdate& u = batch[b];
      if (u.failure) engine_.rethrow_naming_chunk(store_, IndexedFailure{b, u.failure}, origin_of(u));
      if (u.store) engine_.write_stored(store_, origin_of(u), u.result, u.had_stored ? u.stored.bytes.size() : 0);
    }
    if (failed) engine_.rethrow_naming_chunk(store_, *failed, origin_of(batch[stop]));
  }

  const SparseEngine& engine_;
  const SparseParams& params_;
  ChunkStore& store_;
  const ChunkGrid& grid_;
  const PointsByChunk points_;
  const std::uint8_t* values_;  // null: an erase
  std::size_t es_;
  Bytes fill_;
  int threads_ = 1;
};

// Grouped points as pieces of one element each (indices from `first`), for the operations of
// variable-length datasets (which take pieces); a coordinate given twice keeps its order, so
// the last wins.
std::vector<ChunkPiece> point_pieces(const PointsByChunk& points, std::size_t first) {
  std::vector<ChunkPiece> pieces;
  pieces.reserve(points.points.size());
  for (std::size_t g = 0; g < points.groups(); ++g)
    for (std::size_t i = points.starts[g]; i < points.starts[g + 1]; ++i)
      pieces.push_back(ChunkPiece{points.chunks[g], points.points[i].offset, 1, first + points.points[i].index});
  return pieces;
}

}  // namespace

void SparseEngine::write_coordinates(ChunkStore& store, const ChunkGrid& grid, const std::uint64_t* coords,
                                     std::size_t n, const std::uint8_t* values) const {
  require_fixed_size("a coordinate write");
  H5SPARSE_FAIL_IF(n > 0 && values == nullptr, ErrorCode::invalid_argument, "no values to write");
  const SparseChange change;
  detail::for_each_part(grid, coords, n, [&](PointsByChunk points, std::size_t first) {
    CoordinateUpdate(*this, store, grid, std::move(points), values + first * params_.layout.element_size).run();
  });
}

void SparseEngine::erase_coordinates(ChunkStore& store, const ChunkGrid& grid, const std::uint64_t* coords,
                                     std::size_t n) const {
  const SparseChange change;
  detail::for_each_part(grid, coords, n, [&](PointsByChunk points, std::size_t first) {
    if (params_.is_var()) return erase(store, grid, point_pieces(points, first));
    CoordinateUpdate(*this, store, grid, std::move(points), nullptr).run();
  });
}

void SparseEngine::write_var_coordinates(ChunkStore& store, const ChunkGrid& grid, const std::uint64_t* coords,
                                         std::size_t n, const VarValues& values) const {
  detail::for_each_part(grid, coords, n, [&](const PointsByChunk& points, std::size_t first) {
    write_var(store, grid, point_pieces(points, first), values);
  });
}

// A fixed-size region chunk by chunk: each stored chunk it meets decoded into its elements
// (no bitmap of the chunk), those inside the region dropped, the chunk stored again when it
// lost any.
void SparseEngine::erase_region(ChunkStore& store, const ChunkGrid& grid, const std::vector<Box>& region) const {
  if (params_.is_var()) return erase(store, grid, stored_region_pieces(store, grid, region));
  const SparseChange change;
  const std::size_t es = params_.layout.element_size;
  StoredChunk stored;
  for (const detail::ListedChunk& listed : detail::stored_chunks_in(store, grid, region)) {
    const Coords origin = grid.chunk_origin(listed.number);
    const std::vector<detail::LocalBox> boxes = detail::local_boxes(region, origin, grid.chunk_dims());
    store.read_listed(origin, listed.at, stored);
    ChunkElements elements;
    try {
      elements = decode_stored_elements(stored.bytes.data(), stored.bytes.size(), stored.filter_mask, params_.layout);
    } catch (const Error&) {
      rethrow_naming_chunk(store, IndexedFailure{0, std::current_exception()}, origin);
    }
    if (detail::keep_elements(elements, boxes, grid.chunk_dims(), es, false) == 0) continue;
    write_stored(store, origin, encode_chunk(elements, params_.layout), stored.bytes.size());
  }
}

}  // namespace h5sparse
