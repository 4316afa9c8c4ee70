// Decoded structured chunks kept between reads, so that reading a chunk element by element
// (a loop of `dset[i, j]`, a row at a time) decodes it once, as HDF5's chunk cache does for a
// dense chunk. An LRU of whole chunks bounded in bytes; entries are immutable and shared, so a
// reader keeps using one that is evicted meanwhile.
//
// Coherence is by generation, not by tracking what a change touched: the caller passes the
// generation of the data it may see (a counter every change of any sparse dataset advances,
// engine/sparse_engine.hpp), and a cache that filled at another generation forgets everything first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "h5sparse/structured_chunk.hpp"

namespace h5sparse {

/// One chunk as a read needs it: its structured chunk, or nothing stored (all fill).
struct DecodedChunk {
  bool stored = false;
  ChunkView view;                         ///< when stored; values in view.owned or stored_bytes
  RawBytes stored_bytes;                  ///< the stored chunk, kept when the values lie in it
  std::vector<std::uint32_t> word_ranks;  ///< defined_before_words(view.defined) (chunk_scatter.hpp)
  /// What the entry counts against the cache's budget: bitmap, values (or the stored chunk
  /// holding them) and ranks.
  std::size_t bytes() const noexcept;
};

/// The entry of a chunk read into `buffer` (stored bytes with their filter mask; null: nothing
/// stored). An unfiltered values section is used where it lies: the buffer moves into the
/// entry, and stays with the caller when a filter put the values elsewhere. Throws as
/// decode_stored_chunk.
std::shared_ptr<const DecodedChunk> decode_for_cache(RawBytes* buffer, unsigned filter_mask, const ChunkLayout& layout);

/// Gives `buffer`, when it has none, the stored bytes of an entry in `dropped` that nobody else
/// holds, so the next chunk is read into memory already paged in; empties `dropped`.
void reuse_dropped_buffer(std::vector<std::shared_ptr<const DecodedChunk>>& dropped, RawBytes& buffer);

class DecodedChunkCache {
 public:
  /// `budget`: the bytes of decoded chunks kept at most (0: nothing is kept).
  explicit DecodedChunkCache(std::size_t budget) noexcept : budget_(budget) {}

  /// The chunk with this key cached at `generation`, or null.
  std::shared_ptr<const DecodedChunk> find(std::uint64_t key, std::uint64_t generation);
  /// Whether a chunk just missed should be kept: only one missed recently too (the last
  /// kRecentMisses misses). Reads scattered over more chunks than the cache holds then decode
  /// as without it instead of cycling every chunk through it; a loop over one chunk's elements
  /// decodes it twice, not once.
  bool admit(std::uint64_t key);
  static constexpr std::size_t kRecentMisses = 16;
  /// Keeps `chunk` (decoded at `generation`) as the most recently used, evicting the least
  /// recently used beyond the budget; a chunk larger than the budget is not kept. With
  /// `dropped`, the entries that left the cache are appended to it (their buffers can be
  /// reused once nobody else holds them).
  void insert(std::uint64_t key, std::shared_ptr<const DecodedChunk> chunk, std::uint64_t generation,
              std::vector<std::shared_ptr<const DecodedChunk>>* dropped = nullptr);

  std::size_t budget() const noexcept { return budget_; }
  std::size_t bytes() const;
  std::size_t size() const;

 private:
  struct Entry {
    std::uint64_t key;
    std::shared_ptr<const DecodedChunk> chunk;
  };
  using Dropped = std::vector<std::shared_ptr<const DecodedChunk>>;
  void forget_if_stale(std::uint64_t generation, Dropped* dropped = nullptr);  // under mutex_
  void evict_to(std::size_t limit, Dropped* dropped);                         // under mutex_

  const std::size_t budget_;
  mutable std::mutex mutex_;
  std::uint64_t generation_ = 0;
  std::size_t bytes_ = 0;
  std::list<Entry> lru_;  // most recently used first
  std::uint64_t recent_misses_[kRecentMisses] = {};  // keys + 1 (0: none), a ring
  std::size_t next_miss_ = 0;
  std::unordered_map<std::uint64_t, std::list<Entry>::iterator> index_;
};

}  // namespace h5sparse
