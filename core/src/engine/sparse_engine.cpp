// The sparse engine's chunk helpers and its operations that visit chunk after chunk on the
// calling thread: erase, get-defined and the check of a failed read (sparse_engine.hpp). Writes
// and reads spread over the workers live in sparse_write.cpp and sparse_read.cpp.
#include "h5sparse/engine/sparse_engine.hpp"

#include <algorithm>
#include <atomic>
#include <exception>

#include "h5sparse/error.hpp"
#include "h5sparse/stored_chunk_read.hpp"
#include "region_chunks.hpp"

namespace h5sparse {
namespace {

std::atomic<std::uint64_t> generation{1};

// Calls f(first piece index, end) for each chunk's group of pieces, in order.
template <typename F>
void for_each_chunk_group(const std::vector<ChunkPiece>& pieces, F&& f) {
  for (std::size_t begin = 0; begin < pieces.size();) {
    std::size_t end = begin;
    while (end < pieces.size() && pieces[end].chunk == pieces[begin].chunk) ++end;
    f(begin, end);
    begin = end;
  }
}

}  // namespace

std::uint64_t sparse_generation() noexcept { return generation.load(std::memory_order_acquire); }
void note_sparse_change() noexcept { generation.fetch_add(1, std::memory_order_acq_rel); }

std::string coords_text(const Coords& c) {
  std::string s = "(";
  for (std::size_t i = 0; i < c.size(); ++i) s += (i ? ", " : "") + std::to_string(c[i]);
  return s + ")";
}

std::vector<std::size_t> chunk_group_starts(const std::vector<ChunkPiece>& pieces) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < pieces.size(); ++i)
    if (i == 0 || pieces[i].chunk != pieces[i - 1].chunk) starts.push_back(i);
  starts.push_back(pieces.size());
  return starts;
}

SparseEngine::SparseEngine(SparseParams params, std::size_t decoded_cache_bytes) : params_(std::move(params)) {
  if (decoded_cache_bytes == 0) return;  // a store others change: nothing kept between calls
  decoded_ = std::make_unique<DecodedChunkCache>(decoded_cache_bytes);
  resumable_ = std::make_unique<detail::ResumableListing>();
}

SparseEngine::~SparseEngine() = default;

void SparseEngine::rethrow_naming_chunk(const ChunkStore& store, const IndexedFailure& failure,
                                        const Coords& origin) const {
  try {
    std::rethrow_exception(failure.error);
  } catch (const Error& e) {
    throw Error(e.code(), store.name() + ", chunk at " + coords_text(origin) + ": " + e.what());
  }
}

StructuredChunk SparseEngine::decode_stored(ChunkStore& store, const Coords& origin, const StoredChunk* stored) const {
  if (stored == nullptr) return StructuredChunk::empty(params_.layout);
  try {
    return decode_stored_chunk(stored->bytes.data(), stored->bytes.size(), stored->filter_mask, params_.layout);
  } catch (const Error&) {
    rethrow_naming_chunk(store, IndexedFailure{0, std::current_exception()}, origin);
  }
}

StructuredChunk SparseEngine::read_chunk(ChunkStore& store, const Coords& origin, std::size_t* stored_size) const {
  StoredChunk stored;
  if (!store.read(origin, stored)) return StructuredChunk::empty(params_.layout);
  if (stored_size != nullptr) *stored_size = stored.bytes.size();
  return decode_stored(store, origin, &stored);
}

void SparseEngine::write_chunk(ChunkStore& store, const Coords& origin, const StructuredChunk& chunk,
                               std::size_t replaced_size) const {
  const Bytes stored = encode_chunk(chunk, params_.layout);
  write_stored(store, origin, stored, replaced_size);
}

void SparseEngine::write_stored(ChunkStore& store, const Coords& origin, ByteView stored,
                                std::size_t replaced_size) const {
  if (!store.moves_rewritten_chunks() || replaced_size == 0 || stored.size != replaced_size) {
    store.write(origin, stored);
    return;
  }
  Bytes padded(stored.data, stored.data + stored.size);
  avoid_chunk_size(padded, replaced_size, params_.layout);
  store.write(origin, padded);
}

void SparseEngine::erase(ChunkStore& store, const ChunkGrid& grid, const std::vector<ChunkPiece>& pieces) const {
  const SparseChange change;
  const std::uint64_t chunk_elements = params_.layout.element_count();
  for_each_chunk_group(pieces, [&](std::size_t begin, std::size_t end) {
    const Coords origin = grid.chunk_origin(pieces[begin].chunk);
    ChunkSelection erased(chunk_elements);
    for (std::size_t i = begin; i < end; ++i) erased.set_range(pieces[i].in_chunk_start, pieces[i].length);
    std::size_t replaced_size = 0;
    if (params_.is_var()) {
      ChunkVarElements chunk = read_var_chunk(store, origin, &replaced_size);
      if (erase_var_elements(chunk, erased, params_.layout.var) > 0)
        write_var_chunk(store, origin, chunk, replaced_size);
      return;
    }
    StructuredChunk chunk = read_chunk(store, origin, &replaced_size);
    if (chunk.defined.none()) return;
    h5sparse::erase(chunk, erased, params_.layout.element_size);
    write_chunk(store, origin, chunk, replaced_size);
  });
}

std::vector<ChunkPiece> SparseEngine::stored_region_pieces(ChunkStore& store, const ChunkGrid& grid,
                                                          const std::vector<Box>& region) const {
  return detail::region_pieces(grid, detail::stored_chunks_in(store, grid, region), region);
}

ChunkSelection SparseEngine::defined_in_chunk(ChunkStore& store, const Coords& origin) const {
  if (!params_.is_var()) return read_chunk(store, origin).defined;
  ChunkSelection defined(params_.layout.element_count());
  for (std::uint32_t offset : read_var_chunk(store, origin).offsets) defined.set(offset);
  return defined;
}

std::vector<std::uint64_t> SparseEngine::defined(ChunkStore& store, const ChunkGrid& grid,
                                                 const std::vector<ChunkPiece>& pieces) const {
  std::vector<std::uint64_t> linear;
  const Coords& dims = grid.dataset_dims();
  for_each_chunk_group(pieces, [&](std::size_t begin, std::size_t end) {
    const ChunkSelection chunk_defined = defined_in_chunk(store, grid.chunk_origin(pieces[begin].chunk));
    for (std::size_t i = begin; i < end && !chunk_defined.none(); ++i) {
      const ChunkPiece& p = pieces[i];
      const std::uint64_t end = p.in_chunk_start + p.length;
      for (std::uint64_t k = p.in_chunk_start; k < end; ++k) {
        const std::uint64_t word = chunk_defined.words()[k >> 6] >> (k & 63);
        if (word == 0) {  // a piece may span a whole stored chunk: skip empty words whole
          k |= 63;
          continue;
        }
        k += std::uint64_t(__builtin_ctzll(word));
        if (k >= end) break;
        std::uint64_t offset = 0;
        const Coords c = grid.element_coords(p.chunk, k);
        for (std::size_t d = 0; d < dims.size(); ++d) offset = offset * dims[d] + c[d];
        linear.push_back(offset);
      }
    }
  });
  std::sort(linear.begin(), linear.end());
  linear.erase(std::unique(linear.begin(), linear.end()), linear.end());
  return linear;
}

void SparseEngine::check_chunks(ChunkStore& store, const ChunkGrid& grid, const std::vector<ChunkPiece>& pieces) const {
  for_each_chunk_group(pieces, [&](std::size_t begin, std::size_t) { defined_in_chunk(store, grid.chunk_origin(pieces[begin].chunk)); });
}

}  // namespace h5sparse
