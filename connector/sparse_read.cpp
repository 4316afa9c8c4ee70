// H5Dread of a sparse dataset, decoded by the connector straight into the caller's buffer.
// The native path (the structured-chunk filter expanding each chunk into a dense chunk that
// HDF5 then copies out) costs two passes over every chunk whatever its density; here the
// destination elements are written once each (a chunk's values or the fill value), and the
// values of an unfiltered chunk are scattered straight from the bytes read. Calls this path does not cover (datatype conversion, data transforms, fill
// time "never") take the native path, which gives the same values.
#include <H5VLconnector_passthru.h>

#include <cstring>
#include <exception>
#include <optional>

#include "error_stack.hpp"
#include "h5sparse/chunk_scatter.hpp"
#include "h5sparse/chunk_threads.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/prefault_ahead.hpp"
#include "h5sparse/stored_chunk_read.hpp"
#include "h5sparse/stream_store.hpp"
#include "memory_selection.hpp"
#include "native_dataset.hpp"
#include "sparse_change.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::checked;
using hdf5::Handle;
using hdf5::throw_if_negative;

constexpr std::size_t kKeptStoredChunkBytes = std::size_t(16) << 20;
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

// One chunk read and waiting to be decoded.
struct WindowEntry {
  std::uint64_t chunk = 0;          // linear index in the chunk grid
  bool has_stored = false;          // false: nothing stored, all fill
  StoredChunk stored;               // kept from read to read
};

}  // namespace

std::vector<hsize_t> SparseDataset::whole_read_stored_sizes(const ChunkGrid& grid, hid_t dxpl) const {
  std::vector<hsize_t> sizes(std::size_t(grid.chunk_count()), 0);
  const std::vector<std::uint64_t>& dims = grid.dataset_dims();
  std::vector<std::uint64_t> origin(grid.rank());
  for (const IndexEntry& e : stored_chunk_index(under_, under_vol_id_, grid.rank(), dxpl)) {
    bool inside = e.origin.size() == origin.size();
    for (std::size_t d = 0; inside && d < origin.size(); ++d) {
      origin[d] = e.origin[d];
      inside = origin[d] < dims[d] && origin[d] % grid.chunk_dims()[d] == 0;
    }
    if (inside) sizes[std::size_t(grid.chunk_index(origin))] = e.size;  // others are no chunk of the extent
  }
  return sizes;
}

bool SparseDataset::read(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void* buf) const {
  if (fill_never_) return false;
  const htri_t same = H5Tequal(mem_type, file_type_.get());
  throw_if_negative(same, "cannot compare the memory and file datatypes");
  if (same == 0 || has_data_transform(dxpl)) return false;

  const Selection sel = resolve(file_space, dxpl);
  const hid_t mspace = memory_space(mem_space, sel);
  if (sel.npoints == 0) return true;
  H5SPARSE_FAIL_IF(buf == nullptr, ErrorCode::invalid_argument, "no buffer to read into");

  const std::uint64_t n = std::uint64_t(sel.npoints);
  const std::size_t es = params_.layout.element_size;
  const std::int64_t offset = contiguous_offset(mspace, es, n);
  Bytes staging;  // selection order, when the memory selection is not one run
  std::uint8_t* dest = static_cast<std::uint8_t*>(buf) + (offset < 0 ? 0 : offset);
  if (offset < 0) {
    staging.resize(std::size_t(n) * es);
    dest = staging.data();
  }
  const std::uint8_t* fill = params_.fill.empty() ? nullptr : params_.fill.data();
  // A destination larger than the caches gets streaming stores (stream_store.hpp).
  const bool streaming = std::size_t(n) * es >= kStreamingMinBytes;
  StreamFence fence{streaming};
  const ReadTarget target{dest, fill, streaming, offset >= 0};

  // Every element in row-major order: each chunk's pieces follow from its position (splitting
  // the selection into 65,536 pieces and grouping them was a fifth of a full read). Otherwise
  // the selection's pieces, grouped by chunk.
  const bool whole = selects_everything(sel.space, sel.grid, n);
  const std::vector<ChunkPiece> pieces = whole ? std::vector<ChunkPiece>() : selection_pieces(sel.space, sel.grid);
  // Chunk k's pieces: from its position (whole reads) or the k-th group of `pieces`.
  const std::vector<std::size_t> group_starts = whole ? std::vector<std::size_t>() : chunk_group_starts(pieces);
  const std::uint64_t chunks = whole ? sel.grid.chunk_count() : group_starts.size() - 1;
  if (!whole && decoded_ && chunks <= kCachedReadMaxChunks &&
      n * kCachedReadMaxShare <= chunks * params_.layout.element_count()) {
    read_through_cache(sel, pieces, group_starts, target, dxpl);
  } else {
    read_decoding(sel, whole, pieces, group_starts, target, dxpl);
  }
  fence.streaming = false;
  if (streaming) stream_fence();
  if (offset < 0) scatter_to_memory(mspace, staging.data(), es, static_cast<std::uint8_t*>(buf));
  return true;
}

void SparseDataset::read_through_cache(const Selection& sel, const std::vector<ChunkPiece>& pieces,
                                       const std::vector<std::size_t>& group_starts, const ReadTarget& to,
                                       hid_t dxpl) const {
  thread_local StoredChunk kept_stored;  // as the decoding read's window
  thread_local ChunkReadScratch kept_scratch;
  struct Trim {
    ~Trim() {
      if (kept_stored.bytes.capacity() > kKeptStoredChunkBytes) RawBytes().swap(kept_stored.bytes);
      kept_scratch.trim(kKeptStoredChunkBytes);
    }
  } trim;
  // Taken once, before any chunk is read: a change cannot happen during the read (HDF5 holds
  // its lock for the whole call), and chunks decoded now are valid at this generation.
  const std::uint64_t generation = sparse_generation();
  std::vector<std::shared_ptr<const DecodedChunk>> dropped;
  for (std::size_t k = 0; k + 1 < group_starts.size(); ++k) {
    const ChunkPiece* first = &pieces[group_starts[k]];
    const std::size_t length = group_starts[k + 1] - group_starts[k];
    std::shared_ptr<const DecodedChunk> chunk = decoded_->find(first->chunk, generation);
    if (!chunk) {
      const bool keep = decoded_->admit(first->chunk);
      const std::vector<std::uint64_t> origin = sel.grid.chunk_origin(first->chunk);
      const bool stored = read_stored_chunk_into(under_, under_vol_id_, {origin.begin(), origin.end()}, dxpl, kept_stored);
      try {
        if (!keep) {  // decoded as without the cache
          read_stored_chunk_pieces(stored ? kept_stored.bytes.data() : nullptr, stored ? kept_stored.bytes.size() : 0,
                                   kept_stored.filter_mask, params_.layout, first, length, to.fill, to.dest,
                                   to.streaming, kept_scratch);
          continue;
        }
        chunk = decode_for_cache(stored ? &kept_stored.bytes : nullptr, kept_stored.filter_mask, params_.layout);
      } catch (const Error&) {  // as the decoding read reports it
        rethrow_naming_chunk(IndexedFailure{k, std::current_exception()}, origin);
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

void SparseDataset::read_decoding(const Selection& sel, bool whole, const std::vector<ChunkPiece>& pieces,
                                  const std::vector<std::size_t>& group_starts, const ReadTarget& to,
                                  hid_t dxpl) const {
  const std::size_t es = params_.layout.element_size;
  const std::uint64_t n = std::uint64_t(sel.npoints);
  const std::size_t count = whole ? std::size_t(sel.grid.chunk_count()) : group_starts.size() - 1;
  const int threads = chunk_threads_for(count, n * es);

  // Chunks stream through `threads` threads: this thread reads each stored chunk (HDF5) into
  // one of kWindowChunks buffers, and the chunks read are decoded straight into the
  // destination on any thread (each chunk into its own elements); this thread decodes too
  // whenever the window is full. One wait for the workers per read, at its end: waits per
  // batch cost a scheduler time slice each whenever a worker shares its core with another
  // process. Serially: read, decode, chunk after chunk.
  // Buffers are kept by the thread between reads: a fresh one per chunk costs zeroing and
  // page faults, which dominates small reads (single elements).
  thread_local std::vector<WindowEntry> kept_window;
  thread_local std::vector<ChunkReadScratch> kept_scratch;
  const std::size_t window_size = threads > 1 ? kWindowChunks : 1;
  if (kept_window.size() < window_size) kept_window.resize(window_size);
  if (kept_scratch.size() < std::size_t(threads)) kept_scratch.resize(std::size_t(threads));
  // Named through references: a thread_local named inside a lambda that runs on a worker
  // would be the worker's own.
  std::vector<WindowEntry>& window = kept_window;
  std::vector<ChunkReadScratch>& scratch = kept_scratch;
  struct Trim {  // ...unless they grew large
    ~Trim() {
      for (WindowEntry& e : kept_window)
        if (e.stored.bytes.capacity() > kKeptStoredChunkBytes) RawBytes().swap(e.stored.bytes);
      for (ChunkReadScratch& s : kept_scratch) s.trim(kKeptStoredChunkBytes);
    }
  } trim;
  // A whole read takes every chunk's stored size from one pass over the chunk index instead of
  // a size query per chunk (an index probe, and an error stack saved and restored, on this
  // thread, whose HDF5 calls pace the read).
  std::vector<hsize_t> stored_sizes;
  if (whole && count > 1) stored_sizes = whole_read_stored_sizes(sel.grid, dxpl);
  auto read_chunk = [&](std::size_t k) {
    WindowEntry& entry = window[k % window_size];
    entry.chunk = whole ? k : pieces[group_starts[k]].chunk;
    const std::vector<std::uint64_t> origin = sel.grid.chunk_origin(entry.chunk);
    const std::vector<hsize_t> at(origin.begin(), origin.end());
    if (stored_sizes.empty()) {
      entry.has_stored = read_stored_chunk_into(under_, under_vol_id_, at, dxpl, entry.stored);
    } else {
      entry.has_stored = stored_sizes[k] > 0;
      if (entry.has_stored) read_stored_chunk_of_size(under_, under_vol_id_, at, stored_sizes[k], dxpl, entry.stored);
    }
  };
  // A large destination in one run is faulted in about a band ahead of the decoders
  // (prefault_ahead.hpp): each decode asks for its chunk's span, and a worker also for the
  // span after it (this thread's time goes to the HDF5 reads that pace the others).
  std::optional<PrefaultAhead> ahead;
  if (to.streaming && to.callers_memory && threads > 1) ahead.emplace(to.dest, std::size_t(n) * es);
  auto decode = [&](std::size_t k, int slot) {
    const WindowEntry& entry = window[k % window_size];
    ChunkReadScratch& thread_scratch = scratch[std::size_t(slot)];
    if (whole) {  // made here, on the decoding thread: the calling thread's HDF5 reads pace the read
      thread_scratch.pieces.clear();
      sel.grid.whole_chunk_pieces(entry.chunk, thread_scratch.pieces);
    }
    const ChunkPiece* first = whole ? thread_scratch.pieces.data() : &pieces[group_starts[k]];
    const std::size_t length = whole ? thread_scratch.pieces.size() : group_starts[k + 1] - group_starts[k];
    const StoredChunk* stored = entry.has_stored ? &entry.stored : nullptr;
    if (ahead && length > 0) {
      std::uint64_t lo = first[0].source, hi = first[0].source + first[0].length;
      for (std::size_t i = 1; i < length; ++i) {
        lo = std::min(lo, first[i].source);
        hi = std::max(hi, first[i].source + first[i].length);
      }
      ahead->advance(hi * es, slot != 0 ? (2 * hi - lo) * es : hi * es);
    }
    const StreamFence worker_fence{to.streaming && slot != 0};  // each thread orders its own streamed stores
    read_stored_chunk_pieces(stored ? stored->bytes.data() : nullptr, stored ? stored->bytes.size() : 0,
                             stored ? stored->filter_mask : 0, params_.layout, first, length, to.fill, to.dest,
                             to.streaming, thread_scratch);
  };
  std::exception_ptr read_error;
  const std::optional<IndexedFailure> failure = stream_parallel(count, threads, window_size, read_chunk, decode, &read_error);
  if (failure) {
    const std::uint64_t chunk = whole ? failure->index : pieces[group_starts[failure->index]].chunk;
    rethrow_naming_chunk(*failure, sel.grid.chunk_origin(chunk));
  }
  if (read_error) std::rethrow_exception(read_error);
}

}  // namespace h5sparse::vol
