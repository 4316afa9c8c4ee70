// A ChunkStore in memory for the engine's unit tests: chunks in a map by origin, with switches
// for an SWMR writer's rule, for reads by address on any thread and for a write or a read that
// fails; the tests' dataset parameters; and the pieces of the selections they write and read.
#pragma once

#include <atomic>
#include <cstring>
#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/engine/chunk_store.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/sparse_layout.hpp"

class MemoryChunkStore final : public h5sparse::ChunkStore {
 public:
  bool read(const h5sparse::Coords& origin, h5sparse::StoredChunk& into) override {
    const auto it = chunks.find(origin);
    if (it == chunks.end()) return false;
    into.bytes.assign(it->second.begin(), it->second.end());
    into.filter_mask = 0;
    return true;
  }
  // On any thread when any_thread is set (the map is not changed while a read runs).
  void read_listed(const h5sparse::Coords& origin, const h5sparse::ChunkLocation& at,
                   h5sparse::StoredChunk& into) override {
    ++listed_reads;
    if (at.address != h5sparse::kNoAddress) ++address_reads;
    std::size_t left = listed_reads_left.load();
    do {
      if (left == 0) throw h5sparse::Error(h5sparse::ErrorCode::invalid_argument, "the store refused a read");
    } while (!listed_reads_left.compare_exchange_weak(left, left - 1));
    if (!read(origin, into) || into.bytes.size() != at.size) throw std::logic_error("read_listed: wrong size");
  }
  bool reads_by_address_on_any_thread() override { return any_thread; }
  void write(const h5sparse::Coords& origin, h5sparse::ByteView bytes) override {
    if (writes_left == 0) throw h5sparse::Error(h5sparse::ErrorCode::invalid_argument, "the store refused a write");
    --writes_left;
    if (moves && chunks.count(origin) && chunks[origin].size() == bytes.size)
      throw std::logic_error("a chunk was rewritten in place");
    chunks[origin] = h5sparse::Bytes(bytes.data, bytes.data + bytes.size);
  }
  bool list(const std::function<void(const h5sparse::Coords&, const h5sparse::ChunkLocation&)>& f,
            std::size_t limit) override {
    ++listings;
    const auto copy = chunks;
    std::size_t listed = 0;
    for (const auto& [origin, bytes] : copy) {
      if (listed++ == limit) return false;
      f(origin, h5sparse::ChunkLocation{bytes.size(), any_thread ? listed : h5sparse::kNoAddress});
    }
    return true;
  }
  std::uint64_t stored_size(const h5sparse::Coords& origin) override {
    ++lookups;
    const auto it = chunks.find(origin);
    return it == chunks.end() ? 0 : it->second.size();
  }
  bool moves_rewritten_chunks() const override { return moves; }
  /// As HDF5 changes an extent: chunks wholly outside the new extent are dropped.
  void change_extent(const h5sparse::Coords& dims) {
    for (auto it = chunks.begin(); it != chunks.end();) {
      bool inside = true;
      for (std::size_t d = 0; d < dims.size(); ++d) inside = inside && it->first[d] < dims[d];
      it = inside ? std::next(it) : chunks.erase(it);
    }
  }
  std::string name() const override { return "store 'memory'"; }

  std::map<h5sparse::Coords, h5sparse::Bytes> chunks;
  bool moves = false;                 // as an SWMR writer: a rewritten chunk must change size
  std::size_t writes_left = SIZE_MAX;  // writes before the store starts refusing them
  bool any_thread = false;  // listed chunks have addresses, read on any thread
  std::atomic<std::size_t> listed_reads_left{SIZE_MAX};  // read_listed() calls before it starts refusing them
  std::size_t listings = 0, lookups = 0;                // calls of list(), stored_size()
  std::atomic<std::size_t> listed_reads{0}, address_reads{0};  // calls of read_listed(), those by address
};

/// The engine tests' datasets: uint32 elements with fill value 7.
using TestValue = std::uint32_t;
constexpr TestValue kTestFill = 7;

inline h5sparse::SparseParams test_params(const h5sparse::Coords& chunk_dims, bool fill_is_undefined = false) {
  h5sparse::SparseParams p;
  p.options = fill_is_undefined ? unsigned(h5sparse::kOptionFillIsUndefined) : 0u;
  p.layout.dims = chunk_dims;
  p.layout.element_size = sizeof(TestValue);
  p.fill.resize(sizeof(TestValue));
  std::memcpy(p.fill.data(), &kTestFill, sizeof(TestValue));
  return p;
}

// Every element of the extent, as the connector makes the pieces of a whole-dataset selection.
inline std::vector<h5sparse::ChunkPiece> every_element(const h5sparse::ChunkGrid& grid) {
  std::uint64_t total = 1;
  for (std::uint64_t d : grid.dataset_dims()) total *= d;
  std::vector<h5sparse::ChunkPiece> pieces;
  grid.split(0, total, 0, pieces);
  h5sparse::group_by_chunk(pieces);
  return pieces;
}

// Random runs of linear offsets (in random order, overlapping) as the connector makes pieces of
// a point or hyperslab selection: split by the grid, grouped by chunk.
inline std::vector<h5sparse::ChunkPiece> random_pieces(const h5sparse::ChunkGrid& grid, std::uint64_t total,
                                                       std::mt19937& rng, std::vector<std::uint64_t>& offsets) {
  std::vector<h5sparse::ChunkPiece> pieces;
  offsets.clear();
  const int runs = 1 + int(rng() % 6);
  for (int r = 0; r < runs; ++r) {
    const std::uint64_t start = rng() % total;
    const std::uint64_t length = 1 + rng() % std::min<std::uint64_t>(total - start, rng() % 2 ? 5 : 200);
    grid.split(start, length, offsets.size(), pieces);
    for (std::uint64_t k = 0; k < length; ++k) offsets.push_back(start + k);
  }
  h5sparse::group_by_chunk(pieces);
  return pieces;
}
