// The sparse engine over variable-length chunks (format version 3, var_chunk.hpp): define-by-
// write and reads of a selection, and the stored chunk's reading and writing that erase,
// get-defined and extent changes share with fixed-size datasets (sparse_engine.cpp). Writes and
// reads go in batches of chunks: the calling thread reads a batch's stored chunks, workers
// decode (and merge and encode), the calling thread stores or collects them in chunk order. A
// chunk's payloads are moved whole (VarValues), never expanded.
#include <algorithm>
#include <optional>

#include "h5sparse/chunk_threads.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/stored_chunk_read.hpp"

namespace h5sparse {
namespace {

constexpr std::size_t kBatchChunks = 64;

ChunkVarElements var_elements_of(const StoredChunk& stored, const ChunkLayout& layout) {
  return decode_stored_var_elements(stored.bytes.data(), stored.bytes.size(), stored.filter_mask, layout);
}

// A chunk's stored form; an SWMR writer's rewrite (`moves`) gets another size than the chunk it
// replaces (`replaced_size`, 0: none) by one byte of padding.
Bytes encode_for_store(const ChunkVarElements& chunk, const ChunkLayout& layout, bool moves, std::size_t replaced_size) {
  Bytes stored = encode_var_chunk(chunk, layout);
  if (moves && replaced_size != 0 && stored.size() == replaced_size) stored = encode_var_chunk(chunk, layout, 1);
  return stored;
}

// One chunk of a batch: which group of pieces, its stored chunk, and what the workers made.
struct BatchChunk {
  std::size_t group = 0;
  Coords origin;
  StoredChunk stored;
  bool had_stored = false;
  ChunkVarElements elements;
  Bytes encoded;
};

// For each chunk group of `pieces` (starts: chunk_group_starts), in batches: the stored chunk
// read on the calling thread, work(chunk) on the workers, then done(chunk) on the calling
// thread in chunk order up to the first failure, which is rethrown naming its chunk.
template <typename Work, typename Done>
void in_batches(const SparseEngine& engine, ChunkStore& store, const ChunkGrid& grid,
                const std::vector<ChunkPiece>& pieces, const std::vector<std::size_t>& starts, Work&& work,
                Done&& done) {
  const std::size_t groups = starts.size() - 1;
  std::vector<BatchChunk> batch;
  for (std::size_t first = 0; first < groups; first += kBatchChunks) {
    batch.resize(std::min(kBatchChunks, groups - first));
    std::uint64_t bytes = 0;
    for (std::size_t k = 0; k < batch.size(); ++k) {
      BatchChunk& c = batch[k];
      c.group = first + k;
      c.origin = grid.chunk_origin(pieces[starts[c.group]].chunk);
      c.had_stored = store.read(c.origin, c.stored);
      bytes += c.had_stored ? c.stored.bytes.size() : 0;
    }
    const std::optional<IndexedFailure> failed = parallel_for(
        batch.size(), chunk_threads_for(batch.size(), bytes), [&](std::size_t k, int) { work(batch[k]); }, [] {},
        nullptr);
    for (std::size_t k = 0; k < (failed ? failed->index : batch.size()); ++k) {
      try {
        done(batch[k]);
      } catch (const Error&) {
        engine.rethrow_naming_chunk(store, IndexedFailure{k, std::current_exception()}, batch[k].origin);
      }
    }
    if (failed) engine.rethrow_naming_chunk(store, *failed, batch[failed->index].origin);
  }
}

// Element `e`'s slots all NULL: what a NULL written value is for fill-is-undefined.
bool all_null(const VarValues& v, std::size_t e, std::size_t slots) {
  for (std::size_t m = 0; m < slots; ++m)
    if (!v.null[e * slots + m]) return false;
  return true;
}

// The written elements of one chunk's pieces [begin, end): ascending offsets, the last value
// written to an offset winning; `nulls` gets the offsets written NULL (fill-is-undefined).
ChunkVarElements written_elements(const std::vector<ChunkPiece>& pieces, std::size_t begin, std::size_t end,
                                  const VarValues& values, const SparseParams& params,
                                  std::vector<std::uint32_t>& nulls) {
  struct Written {
    std::uint32_t offset;
    std::uint64_t source;
  };
  std::vector<Written> all;
  for (std::size_t i = begin; i < end; ++i)
    for (std::uint64_t k = 0; k < pieces[i].length; ++k)
      all.push_back({std::uint32_t(pieces[i].in_chunk_start + k), pieces[i].source + k});
  // Stable: of equal offsets the last written stays last. A write of whole lines in order (the
  // common case) is sorted already.
  const auto by_offset = [](const Written& a, const Written& b) { return a.offset < b.offset; };
  if (!std::is_sorted(all.begin(), all.end(), by_offset)) std::stable_sort(all.begin(), all.end(), by_offset);
  const VarType& type = params.layout.var;
  ChunkVarElements chunk;
  chunk.offsets.reserve(all.size());
  std::size_t run_first = 0, run_count = 0;  // values are copied a run of consecutive sources at a time
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i + 1 < all.size() && all[i + 1].offset == all[i].offset) continue;
    const std::size_t source = std::size_t(all[i].source);
    if (params.fill_is_undefined() && all_null(values, source, type.slots())) {
      nulls.push_back(all[i].offset);
      continue;
    }
    chunk.offsets.push_back(all[i].offset);
    if (run_count && source == run_first + run_count) {
      ++run_count;
      continue;
    }
    chunk.values.append_elements(values, run_first, run_count, type);
    run_first = source;
    run_count = 1;
  }
  chunk.values.append_elements(values, run_first, run_count, type);
  return chunk;
}

}  // namespace

void SparseEngine::require_fixed_size(const char* operation) const {
  H5SPARSE_FAIL_IF(params_.is_var(), ErrorCode::unsupported,
                   std::string(operation) + " of fixed-size values: the dataset holds variable-length values");
}

ChunkVarElements SparseEngine::read_var_chunk(ChunkStore& store, const Coords& origin, std::size_t* stored_size) const {
  StoredChunk stored;
  if (!store.read(origin, stored)) return ChunkVarElements{};
  if (stored_size != nullptr) *stored_size = stored.bytes.size();
  return decode_var_stored(store, origin, &stored);
}

ChunkVarElements SparseEngine::decode_var_stored(ChunkStore& store, const Coords& origin,
                                                 const StoredChunk* stored) const {
  if (stored == nullptr) return ChunkVarElements{};
  try {
    return var_elements_of(*stored, params_.layout);
  } catch (const Error&) {
    rethrow_naming_chunk(store, IndexedFailure{0, std::current_exception()}, origin);
  }
}

void SparseEngine::write_var_chunk(ChunkStore& store, const Coords& origin, const ChunkVarElements& chunk,
                                   std::size_t replaced_size) const {
  store.write(origin, encode_for_store(chunk, params_.layout, store.moves_rewritten_chunks(), replaced_size));
}

void SparseEngine::write_var(ChunkStore& store, const ChunkGrid& grid, const std::vector<ChunkPiece>& pieces,
                             const VarValues& values) const {
  H5SPARSE_FAIL_IF(!params_.is_var(), ErrorCode::invalid_argument, "variable-length values for a fixed-size dataset");
  std::uint64_t elements = 0;
  for (const ChunkPiece& p : pieces) elements = std::max(elements, p.source + p.length);
  check_var_values(values, std::size_t(elements), params_.layout.var);
  const SparseChange change;
  const std::vector<std::size_t> starts = chunk_group_starts(pieces);
  const bool moves = store.moves_rewritten_chunks();
  const VarType& type = params_.layout.var;
  auto merge = [&](BatchChunk& c) {
    std::vector<std::uint32_t> nulls;
    ChunkVarElements written = written_elements(pieces, starts[c.group], starts[c.group + 1], values, params_, nulls);
    ChunkVarElements merged =
        c.had_stored ? merge_var_elements(var_elements_of(c.stored, params_.layout), written, type) : std::move(written);
    if (!nulls.empty()) erase_var_elements(merged, nulls, type);
    c.encoded = encode_for_store(merged, params_.layout, moves, c.had_stored ? c.stored.bytes.size() : 0);
  };
  in_batches(*this, store, grid, pieces, starts, merge, [&](BatchChunk& c) { store.write(c.origin, c.encoded); });
}

VarValues SparseEngine::read_var(ChunkStore& store, const ChunkRequest& request) const {
  H5SPARSE_FAIL_IF(!params_.is_var(), ErrorCode::invalid_argument, "a variable-length read of a fixed-size dataset");
  const VarType& type = params_.layout.var;
  // Where each element of the selection is: its chunk's index in `chunks` and its index there.
  constexpr std::size_t kUndefined = SIZE_MAX;
  std::vector<std::pair<std::size_t, std::size_t>> where(std::size_t(request.elements), {kUndefined, 0});
  std::vector<ChunkVarElements> chunks;
  std::vector<ChunkPiece> whole_pieces;
  const std::vector<ChunkPiece>* pieces = &request.pieces;
  if (request.whole) {
    for (std::uint64_t c = 0; c < request.grid.chunk_count(); ++c) request.grid.whole_chunk_pieces(c, whole_pieces);
    pieces = &whole_pieces;
  }
  const std::vector<std::size_t> starts = chunk_group_starts(*pieces);
  auto decode = [&](BatchChunk& c) {
    c.elements = c.had_stored ? var_elements_of(c.stored, params_.layout) : ChunkVarElements{};
  };
  in_batches(*this, store, request.grid, *pieces, starts, decode, [&](BatchChunk& c) {
    const ChunkVarElements& chunk = c.elements;
    if (chunk.offsets.empty()) return;
    for (std::size_t i = starts[c.group]; i < starts[c.group + 1]; ++i) {
      const ChunkPiece& p = (*pieces)[i];
      auto at = std::lower_bound(chunk.offsets.begin(), chunk.offsets.end(), p.in_chunk_start);
      for (; at != chunk.offsets.end() && *at < p.in_chunk_start + p.length; ++at)
        where[std::size_t(p.source + (*at - p.in_chunk_start))] = {chunks.size(), std::size_t(at - chunk.offsets.begin())};
    }
    chunks.push_back(std::move(c.elements));
  });
  VarValues out;
  const Bytes zero_fixed(type.fixed_size, 0);
  const std::vector<VarPayload> null_slots(type.slots(), VarPayload{nullptr, 0, true});
  // Runs of consecutive elements of one chunk (a whole read is one run per chunk) are copied
  // at once.
  for (std::size_t i = 0; i < where.size();) {
    const auto [c, e] = where[i];
    std::size_t run = 1;
    if (c == kUndefined) {
      out.append(type, zero_fixed.data(), null_slots.data());
    } else {
      while (i + run < where.size() && where[i + run].first == c && where[i + run].second == e + run) ++run;
      out.append_elements(chunks[c].values, e, run, type);
    }
    i += run;
  }
  return out;
}

}  // namespace h5sparse
