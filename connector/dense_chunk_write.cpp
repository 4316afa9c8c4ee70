// H5Dwrite of whole chunks of a dense Blosc dataset, encoded on several threads: batches of
// chunks are gathered from the caller's buffer and encoded by the workers (one thread per
// chunk, no Blosc-internal threads) while this thread stores the previous batch with
// H5Dwrite_chunk (which drops any copy HDF5 caches). A chunk whose compression does not pay is
// stored raw with filter-mask bit 0 set, as HDF5 stores it when the optional filter returns 0.
// An edge chunk's part outside the extent is what HDF5 would leave there: the stored chunk's
// bytes when one exists, else the fill value. Writes of partial chunks take the native path.
#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
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

// One chunk of a batch: where it goes, what is stored there now (edge chunks), its encoding.
struct Encoded {
  std::uint64_t chunk = 0;
  std::vector<ChunkPiece> pieces;  // whole writes: its pieces
  const ChunkPiece* first = nullptr;  // its pieces (in `pieces` or the transfer's)
  std::size_t length = 0;
  bool edge = false;               // overhangs the extent
  bool has_old = false;            // edge chunk already stored: `old` holds it
  StoredChunk old;
  std::unique_ptr<std::uint8_t[]> bytes;  // chunk_bytes capacity
  std::size_t size = 0;
  unsigned filter_mask = 0;
};

std::uint64_t elements_in_extent(const ChunkGrid& grid, const std::vector<std::uint64_t>& origin, bool* edge) {
  std::uint64_t n = 1;
  *edge = false;
  for (std::size_t d = 0; d < grid.rank(); ++d) {
    const std::uint64_t inside = std::min(grid.chunk_dims()[d], grid.dataset_dims()[d] - origin[d]);
    *edge = *edge || inside != grid.chunk_dims()[d];
    n *= inside;
  }
  return n;
}

}  // namespace

bool DenseBloscDataset::write(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, const void* buf) const {
  // A mandatory filter that does not pay fails the write: the native path reports that.
  if (!optional_ || buf == nullptr) return false;
  const std::unique_ptr<Transfer> t = plan(mem_type, mem_space, file_space, dxpl, true);
  if (!t) return false;
  const std::size_t es = element_size_;
  if (!t->whole) {
    // Only whole chunks (a hyperslab selects an element once, so a count is coverage).
    std::vector<ChunkPiece> unused;
    for (std::size_t k = 0; k < t->chunks; ++k) {
      const auto [first, length] = t->chunk_pieces(k, unused);
      std::uint64_t selected = 0;
      for (std::size_t i = 0; i < length; ++i) selected += first[i].length;
      bool edge = false;
      if (selected != elements_in_extent(t->grid, t->grid.chunk_origin(t->chunk_index(k)), &edge)) return false;
    }
  }
  // Read-only files (HDF5 reports "no write intent"; a direct chunk write would get as far as
  // the file) and SWMR writers (whose chunk writes HDF5 orders itself) take HDF5's path.
  const unsigned intent = file_intent(under_, under_vol_id_, dxpl);
  if ((intent & H5F_ACC_RDWR) == 0 || (intent & H5F_ACC_SWMR_WRITE) != 0) return false;

  const std::int64_t offset = contiguous_offset(t->mem_space, es, t->npoints);
  Bytes staging;  // selection order, when the memory selection is not one run
  const std::uint8_t* source = static_cast<const std::uint8_t*>(buf) + (offset < 0 ? 0 : offset);
  if (offset < 0) {
    staging.resize(std::size_t(t->npoints) * es);
    gather_from_memory(t->mem_space, static_cast<const std::uint8_t*>(buf), es, staging.data());
    source = staging.data();
  }
  const std::uint8_t* fill = fill_.empty() ? nullptr : fill_.data();
  const std::uint64_t chunk_elements = chunk_bytes_ / es;

  const std::size_t count = std::size_t(t->chunks);
  // Chunks encoded per batch: 2 per thread, at least 8, unless that holds more than kBatchBytes
  // (huge chunks): then one per thread. Two batches are held at a time.
  constexpr std::size_t kBatchBytes = std::size_t(32) << 20;
  const std::size_t threads = std::size_t(t->threads);
  const std::size_t batch = std::max(threads, std::min(std::max<std::size_t>(kParallelMinChunks, 2 * threads),
                                                       kBatchBytes / chunk_bytes_));
  std::vector<Encoded> slots(std::min(count, 2 * batch));  // this batch's and the previous one's
  std::vector<std::unique_ptr<std::uint8_t[]>> dense(std::size_t(t->threads));  // per thread: the chunk gathered
  auto origin_of = [&](std::size_t k) { return t->grid.chunk_origin(slots[k % slots.size()].chunk); };
  auto store = [&](std::size_t k) {
    const Encoded& e = slots[k % slots.size()];
    const std::vector<std::uint64_t> origin = origin_of(k);
    write_stored_chunk(under_, under_vol_id_, std::vector<hsize_t>(origin.begin(), origin.end()),
                       ByteView(e.bytes.get(), e.size), dxpl, e.filter_mask);
  };
  auto encode = [&](std::size_t k, int slot) {
    Encoded& e = slots[k % slots.size()];
    const ChunkPiece* first = e.first;
    const std::size_t length = e.length;
    std::unique_ptr<std::uint8_t[]>& chunk = dense[std::size_t(slot)];
    if (!chunk) chunk.reset(new std::uint8_t[chunk_bytes_]);
    if (e.has_old)
      decode_dense_chunk(e.old.bytes.data(), e.old.bytes.size(), e.old.filter_mask, chunk_bytes_, chunk.get());
    else if (e.edge)
      fill_elements(chunk.get(), chunk_elements, fill, es);
    copy_pieces_in(source, first, length, es, chunk.get());
    if (!e.bytes) e.bytes.reset(new std::uint8_t[chunk_bytes_]);
    e.size = encode_dense_chunk(e.bytes.get(), chunk.get(), chunk_bytes_, params_);
    e.filter_mask = 0;
    if (e.size == 0) {  // does not pay: stored raw, the filter skipped
      std::memcpy(e.bytes.get(), chunk.get(), chunk_bytes_);
      e.size = chunk_bytes_;
      e.filter_mask = 1;
    }
  };
  auto rethrow_naming = [&](const IndexedFailure& failure) {
    try {
      std::rethrow_exception(failure.error);
    } catch (const Error& e) {
      throw Error(e.code(), where(origin_of(failure.index)) + ": " + e.what());
    }
  };

  // Chunks [begin, end) into their slots, with the stored bytes of the edge chunks among them.
  auto prepare_batch = [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      Encoded& e = slots[k % slots.size()];
      e.chunk = t->chunk_index(k);
      std::tie(e.first, e.length) = t->chunk_pieces(k, e.pieces);
      const std::vector<std::uint64_t> origin = t->grid.chunk_origin(e.chunk);
      elements_in_extent(t->grid, origin, &e.edge);
      e.has_old = e.edge && read_stored_chunk_into(under_, under_vol_id_,
                                                   std::vector<hsize_t>(origin.begin(), origin.end()), dxpl, e.old);
    }
  };

  // Batch b is encoded while batch b-1 is stored; a batch's edge chunks are read first.
  std::size_t stored_up_to = 0;  // chunks below are stored
  for (std::size_t begin = 0; begin < count; begin += batch) {
    const std::size_t end = std::min(count, begin + batch);
    try {
      prepare_batch(begin, end);
    } catch (...) {  // an edge chunk that cannot be read: the batch before is stored first
      for (; stored_up_to < begin; ++stored_up_to) store(stored_up_to);
      throw;
    }
    const std::size_t store_end = begin;
    std::exception_ptr store_error;
    const std::optional<IndexedFailure> failure = parallel_for(
        end - begin, t->threads, [&](std::size_t i, int slot) { encode(begin + i, slot); },
        [&] {
          for (; stored_up_to < store_end; ++stored_up_to) store(stored_up_to);
        },
        &store_error);
    if (store_error) std::rethrow_exception(store_error);
    if (failure) {  // what was encoded below the failed chunk is stored, as a serial write would
      const IndexedFailure at{begin + failure->index, failure->error};
      for (; stored_up_to < at.index; ++stored_up_to) store(stored_up_to);
      rethrow_naming(at);
    }
  }
  for (; stored_up_to < count; ++stored_up_to) store(stored_up_to);
  return true;
}

}  // namespace h5sparse::vol
