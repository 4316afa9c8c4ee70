// Reads of a sparse dataset decoded straight into the caller's buffer (SparseEngine::read):
// each destination element is written once (a chunk's value or the fill value), and the values
// of an unfiltered chunk are scattered straight from the bytes read. Two paths: small reads go
// through the decoded-chunk cache on the calling thread; the others stream chunks through the
// workers, the calling thread reading a window ahead.
#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>

#include "h5sparse/chunk_scatter.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/kept_memory.hpp"
#include "h5sparse/prefault_ahead.hpp"
#include "h5sparse/stored_chunk_read.hpp"
#include "h5sparse/stream_store.hpp"
#include "region_chunks.hpp"

namespace h5sparse {
namespace {

// Chunks read and not yet decoded in a parallel read: enough for the workers to find one ready
// while this thread reads, few enough to stay in the caches.
constexpr std::size_t kWindowChunks = 8;
// A read goes through the decoded-chunk cache when it takes at most a quarter of the elements
// of the chunks it touches, and touches at most this many: element-wise and small-slice access,
// where decoding whole chunks again and again is the cost. Larger reads decode in parallel.
constexpr std::uint64_t kCachedReadMaxChunks = 64;
constexpr std::uint64_t kCachedReadMaxShare = 4;  // elements read * 4 <= elements of the chunks

// Orders a thread's streamed stores (stream_store.hpp) when it goes: before the call returns,
// or throws.
struct StreamFence {
  bool streaming;
  ~StreamFence() {
    if (streaming) stream_fence();
  }
};

// One chunk read and waiting to be decoded (or to be read by the thread that decodes it).
struct WindowEntry {
  std::uint64_t chunk = 0;  // linear index in the chunk grid
  bool has_stored = false;  // false: nothing stored, all fill
  bool unread = false;      // stored, read by address where it is decoded
  StoredChunk stored;       // kept from read to read
};

// Buffers a thread keeps from read to read (kept_memory.hpp), settled when a read ends: a
// read that grew them past the process's budget frees them.
struct CachedReadBuffers final : Keeper {
  StoredChunk stored;
  ChunkReadScratch scratch;
  std::size_t held() const noexcept override { return stored.bytes.capacity() + scratch.held(); }
  void free_buffers() noexcept override {
    RawBytes().swap(stored.bytes);
    scratch.trim(0);
  }
};

struct DecodingReadBuffers final : Keeper {
  std::vector<WindowEntry> window;
  std::vector<ChunkReadScratch> scratch;
  std::size_t held() const noexcept override {
    std::size_t bytes = 0;
    for (const WindowEntry& e : window) bytes += e.stored.bytes.capacity();
    for (const ChunkReadScratch& s : scratch) bytes += s.held();
    return bytes;
  }
  void free_buffers() noexcept override {
    for (WindowEntry& e : window) RawBytes().swap(e.stored.bytes);
    for (ChunkReadScratch& s : scratch) s.trim(0);
  }
};

struct Settle {
  Keeper& keeper;
  ~Settle() { keeper.settle(); }
};

// The chunk's pieces of a read: the request's group, or made from the chunk's position.
struct ChunkPieces {
  const ChunkPiece* first;
  std::size_t count;
};

// Where each of the read's `count` chunks is stored (size 0: nowhere), chunk by chunk.
std::vector<ChunkLocation> chunk_locations(ChunkStore& store, const ChunkRequest& request,
                                           const std::vector<std::size_t>& starts, std::size_t count) {
  std::vector<std::uint64_t> numbers(count);
  for (std::size_t k = 0; k < count; ++k) numbers[k] = request.whole ? k : request.pieces[starts[k]].chunk;
  std::vector<std::uint64_t> sorted = numbers;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  const std::vector<detail::ListedChunk> listed = detail::stored_chunks_of(store, request.grid, sorted);
  std::vector<ChunkLocation> at(count);
  for (std::size_t k = 0; k < count; ++k) {
    const auto it = std::lower_bound(listed.begin(), listed.end(), numbers[k],
                                     [](const detail::ListedChunk& c, std::uint64_t n) { return c.number < n; });
    if (it != listed.end() && it->number == numbers[k]) at[k] = it->at;
  }
  return at;
}

}  // namespace

void SparseEngine::read(ChunkStore& store, const ChunkRequest& request, const ReadTarget& to) const {
  require_fixed_size("a read");
  const StreamFence fence{to.streaming};
  if (request.elements == 0) return;
  const std::vector<std::size_t> starts = request.whole ? std::vector<std::size_t>() : chunk_group_starts(request.pieces);
  const std::uint64_t chunks = request.whole ? request.grid.chunk_count() : starts.size() - 1;
  if (!request.whole && decoded_ && chunks <= kCachedReadMaxChunks &&
      request.elements * kCachedReadMaxShare <= chunks * params_.layout.element_count()) {
    read_through_cache(store, request, starts, to);
  } else {
    read_decoding(store, request, starts, to);
  }
}

void SparseEngine::read_through_cache(ChunkStore& store, const ChunkRequest& request,
                                      const std::vector<std::size_t>& starts, const ReadTarget& to) const {
  thread_local CachedReadBuffers kept;  // as the decoding read's window
  const Settle settle{kept};
  StoredChunk& kept_stored = kept.stored;
  ChunkReadScratch& kept_scratch = kept.scratch;
  // Taken once, before any chunk is read: no change happens during the read (the caller holds
  // the dataset for the whole call), and chunks decoded now are valid at this generation.
  const std::uint64_t generation = sparse_generation();
  std::vector<std::shared_ptr<const DecodedChunk>> dropped;
  for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
    const ChunkPiece* first = &request.pieces[starts[k]];
    const std::size_t length = starts[k + 1] - starts[k];
    std::shared_ptr<const DecodedChunk> chunk = decoded_->find(first->chunk, generation);
    if (!chunk) {
      const bool keep = decoded_->admit(first->chunk);
      const Coords origin = request.grid.chunk_origin(first->chunk);
      const bool stored = store.read(origin, kept_stored);
      try {
        if (!keep) {  // decoded as without the cache
          read_stored_chunk_pieces(stored ? kept_stored.bytes.data() : nullptr, stored ? kept_stored.bytes.size() : 0,
                                   kept_stored.filter_mask, params_.layout, first, length, to.fill, to.dest,
                                   to.streaming, kept_scratch);
          continue;
        }
        chunk = decode_for_cache(stored ? &kept_stored.bytes : nullptr, kept_stored.filter_mask, params_.layout);
      } catch (const Error&) {  // as the decoding read reports it
        rethrow_naming_chunk(store, IndexedFailure{k, std::current_exception()}, origin);
      }
      decoded_->insert(first->chunk, chunk, generation, &dropped);
    }
    read_chunk_pieces(chunk->stored ? &chunk->view : nullptr, params_.layout, first, length, to.fill, to.dest,
                      to.streaming, kept_scratch, chunk->stored ? chunk->word_ranks.data() : nullptr);
    chunk.reset();
    // The next chunk is read into a buffer an entry that left the cache no longer needs (a new
    // one per miss cost its page faults: 64 for a 256 KiB chunk, a third of a random point read).
    reuse_dropped_buffer(dropped, kept_stored.bytes);
  }
}

// Chunks stream through `threads` threads: this thread reads each stored chunk (the store) into
// one of kWindowChunks buffers (or leaves a chunk the store reads by address to the thread that
// decodes it), and the chunks read are decoded straight into the destination
// on any thread (each chunk into its own elements); this thread decodes too whenever the window
// is full. One wait for the workers per read, at its end: waits per batch cost a scheduler time
// slice each whenever a worker shares its core with another process. Serially: read, decode,
// chunk after chunk.
void SparseEngine::read_decoding(ChunkStore& store, const ChunkRequest& request, const std::vector<std::size_t>& starts,
                                 const ReadTarget& to) const {
  const std::size_t es = params_.layout.element_size;
  const bool whole = request.whole;
  const std::size_t count = whole ? std::size_t(request.grid.chunk_count()) : starts.size() - 1;
  const int threads = chunk_threads_for(count, request.elements * es);
  // Buffers are kept by the thread between reads (kept_memory.hpp): a fresh one per chunk costs
  // zeroing and page faults, which dominates small reads (single elements). Named through
  // references: a thread_local named inside a lambda that runs on a worker would be the
  // worker's own.
  thread_local DecodingReadBuffers kept;
  const Settle settle{kept};
  const std::size_t window_size = threads > 1 ? kWindowChunks : 1;
  if (kept.window.size() < window_size) kept.window.resize(window_size);
  if (kept.scratch.size() < std::size_t(threads)) kept.scratch.resize(std::size_t(threads));
  std::vector<WindowEntry>& window = kept.window;
  std::vector<ChunkReadScratch>& scratch = kept.scratch;
  // A read of several chunks finds them in one pass over the chunk index (or a lookup each
  // where the index outnumbers them) instead of a size query per chunk on this thread, whose
  // store calls pace the read; the workers read those the store reads by address.
  std::vector<ChunkLocation> at;
  if (count > 1) at = chunk_locations(store, request, starts, count);
  const bool by_workers = threads > 1 && !at.empty() && store.reads_by_address_on_any_thread();
  auto read_chunk = [&](std::size_t k) {
    WindowEntry& entry = window[k % window_size];
    entry.chunk = whole ? k : request.pieces[starts[k]].chunk;
    entry.unread = false;
    const Coords origin = request.grid.chunk_origin(entry.chunk);
    if (at.empty()) {
      entry.has_stored = store.read(origin, entry.stored);
      return;
    }
    entry.has_stored = at[k].size > 0;
    entry.unread = entry.has_stored && by_workers && at[k].address != kNoAddress;
    if (entry.has_stored && !entry.unread) store.read_listed(origin, at[k], entry.stored);
  };
  // A large destination in one run is faulted in about a band ahead of the decoders
  // (prefault_ahead.hpp): each decode asks for its chunk's span, and a worker also for the span
  // after it (this thread's time goes to the store reads that pace the others).
  std::optional<PrefaultAhead> ahead;
  if (to.streaming && to.callers_memory && threads > 1) ahead.emplace(to.dest, std::size_t(request.elements) * es);
  auto pieces_of = [&](std::size_t k, const WindowEntry& entry, ChunkReadScratch& s) {
    if (!whole) return ChunkPieces{&request.pieces[starts[k]], starts[k + 1] - starts[k]};
    s.pieces.clear();  // made here, on the decoding thread: the calling thread's reads pace the read
    request.grid.whole_chunk_pieces(entry.chunk, s.pieces);
    return ChunkPieces{s.pieces.data(), s.pieces.size()};
  };
  auto decode = [&](std::size_t k, int slot) {
    WindowEntry& entry = window[k % window_size];
    if (entry.unread) store.read_listed(request.grid.chunk_origin(entry.chunk), at[k], entry.stored);
    ChunkReadScratch& thread_scratch = scratch[std::size_t(slot)];
    const ChunkPieces p = pieces_of(k, entry, thread_scratch);
    if (ahead && p.count > 0) {
      std::uint64_t lo = p.first[0].source, hi = p.first[0].source + p.first[0].length;
      for (std::size_t i = 1; i < p.count; ++i) {
        lo = std::min(lo, p.first[i].source);
        hi = std::max(hi, p.first[i].source + p.first[i].length);
      }
      ahead->advance(hi * es, slot != 0 ? (2 * hi - lo) * es : hi * es);
    }
    const StreamFence worker_fence{to.streaming && slot != 0};  // each thread orders its own streamed stores
    const StoredChunk* stored = entry.has_stored ? &entry.stored : nullptr;
    read_stored_chunk_pieces(stored ? stored->bytes.data() : nullptr, stored ? stored->bytes.size() : 0,
                             stored ? stored->filter_mask : 0, params_.layout, p.first, p.count, to.fill, to.dest,
                             to.streaming, thread_scratch);
  };
  std::exception_ptr read_error;
  const std::optional<IndexedFailure> failure = stream_parallel(count, threads, window_size, read_chunk, decode, &read_error);
  if (failure) {
    const std::uint64_t chunk = whole ? failure->index : request.pieces[starts[failure->index]].chunk;
    rethrow_naming_chunk(store, *failure, request.grid.chunk_origin(chunk));
  }
  if (read_error) std::rethrow_exception(read_error);
}

}  // namespace h5sparse
