// H5Dread of a dense Blosc dataset, chunks decoded on several threads: this thread reads each
// stored chunk (H5Dread_chunk, which first writes back a chunk HDF5 holds modified in its
// cache) into a window of buffers, while the workers decode the chunks read (one thread per
// chunk, no Blosc-internal threads) and copy the selected elements into the caller's buffer.
// Unallocated chunks read as the fill value, as native reads give it.
#include <algorithm>
#include <cstring>
#include <exception>
#include <optional>
#include <tuple>

#include "dense_blosc_dataset.hpp"
#include "error_stack.hpp"
#include "h5sparse/chunk_scatter.hpp"
#include "h5sparse/chunk_threads.hpp"
#include "h5sparse/dense_chunk.hpp"
#include "h5sparse/error.hpp"
#include "memory_selection.hpp"
#include "native_dataset.hpp"

namespace h5sparse::vol {
namespace {

// Chunks read and not yet decoded: enough for the workers to find one ready while this thread
// reads, few enough to stay in the caches (fewer for chunks so large that 8 would hold more
// than kWindowBytes, at least 2).
constexpr std::size_t kWindowChunks = 8;
constexpr std::size_t kWindowBytes = std::size_t(32) << 20;
constexpr std::size_t kKeptBytes = std::size_t(16) << 20;

struct WindowEntry {
  std::uint64_t chunk = 0;          // linear index in the chunk grid
  std::vector<ChunkPiece> pieces;  // whole reads: its pieces
  const ChunkPiece* first = nullptr;  // its pieces (in `pieces` or the transfer's)
  std::size_t length = 0;
  bool has_stored = false;          // false: unallocated, all fill
  StoredChunk stored;
};

}  // namespace

bool DenseBloscDataset::read(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void* buf) const {
  if (buf == nullptr) return false;
  const std::unique_ptr<Transfer> t = plan(mem_type, mem_space, file_space, dxpl, false);
  if (!t) return false;
  const std::size_t es = element_size_;
  const std::int64_t offset = contiguous_offset(t->mem_space, es, t->npoints);
  Bytes staging;  // selection order, when the memory selection is not one run
  std::uint8_t* dest = static_cast<std::uint8_t*>(buf) + (offset < 0 ? 0 : offset);
  if (offset < 0) {
    staging.resize(std::size_t(t->npoints) * es);
    dest = staging.data();
  }
  const std::uint8_t* fill = fill_.empty() ? nullptr : fill_.data();

  // Buffers kept by the thread between reads (a fresh one per call costs page faults).
  thread_local std::vector<WindowEntry> kept_window;
  thread_local std::vector<Bytes> kept_chunks;
  const std::size_t window_size = std::max<std::size_t>(2, std::min(kWindowChunks, kWindowBytes / chunk_bytes_));
  if (kept_window.size() < window_size) kept_window.resize(window_size);
  if (kept_chunks.size() < std::size_t(t->threads)) kept_chunks.resize(std::size_t(t->threads));
  std::vector<WindowEntry>& window = kept_window;  // a thread_local named on a worker is the worker's
  std::vector<Bytes>& chunks = kept_chunks;
  struct Trim {
    ~Trim() {
      for (WindowEntry& e : kept_window)
        if (e.stored.bytes.capacity() > kKeptBytes) RawBytes().swap(e.stored.bytes);
      for (Bytes& b : kept_chunks)
        if (b.capacity() > kKeptBytes) Bytes().swap(b);
    }
  } trim;

  const std::size_t count = std::size_t(t->chunks);
  auto read_chunk = [&](std::size_t k) {
    WindowEntry& entry = window[k % window_size];
    entry.chunk = t->chunk_index(k);
    std::tie(entry.first, entry.length) = t->chunk_pieces(k, entry.pieces);
    const std::vector<std::uint64_t> origin = t->grid.chunk_origin(entry.chunk);
    entry.has_stored =
        read_stored_chunk_into(under_, under_vol_id_, std::vector<hsize_t>(origin.begin(), origin.end()), dxpl,
                               entry.stored);
  };
  auto decode = [&](std::size_t k, int slot) {
    const WindowEntry& entry = window[k % window_size];
    const ChunkPiece* first = entry.first;
    const std::size_t length = entry.length;
    if (!entry.has_stored) {
      for (std::size_t i = 0; i < length; ++i) fill_elements(dest + first[i].source * es, first[i].length, fill, es);
      return;
    }
    const StoredChunk& s = entry.stored;
    if (length == 1 && first->length * es == chunk_bytes_) {  // the whole chunk, one run: decode in place
      decode_dense_chunk(s.bytes.data(), s.bytes.size(), s.filter_mask, chunk_bytes_, dest + first->source * es);
      return;
    }
    Bytes& chunk = chunks[std::size_t(slot)];
    if (chunk.size() < chunk_bytes_) chunk.resize(chunk_bytes_);
    decode_dense_chunk(s.bytes.data(), s.bytes.size(), s.filter_mask, chunk_bytes_, chunk.data());
    copy_pieces_out(chunk.data(), first, length, es, dest);
  };
  std::exception_ptr read_error;
  const std::optional<IndexedFailure> failure =
      stream_parallel(count, t->threads, window_size, read_chunk, decode, &read_error);
  if (failure) {
    const std::uint64_t chunk = t->chunk_index(failure->index);
    try {
      std::rethrow_exception(failure->error);
    } catch (const Error& e) {
      throw Error(e.code(), where(t->grid.chunk_origin(chunk)) + ": " + e.what());
    }
  }
  if (read_error) std::rethrow_exception(read_error);
  if (offset < 0) scatter_to_memory(t->mem_space, staging.data(), es, static_cast<std::uint8_t*>(buf));
  return true;
}

}  // namespace h5sparse::vol
