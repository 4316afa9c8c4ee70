#include "h5sparse/decoded_chunk_cache.hpp"

#include "h5sparse/chunk_scatter.hpp"
#include "h5sparse/stored_chunk_read.hpp"

namespace h5sparse {

std::shared_ptr<const DecodedChunk> decode_for_cache(RawBytes* buffer, unsigned filter_mask,
                                                     const ChunkLayout& layout) {
  auto decoded = std::make_shared<DecodedChunk>();
  if (buffer == nullptr) return decoded;
  decoded->stored = true;
  decoded->stored_bytes = std::move(*buffer);
  decoded->view = decode_stored_view(decoded->stored_bytes.data(), decoded->stored_bytes.size(), filter_mask, layout);
  if (decoded->view.values_size == 0 || decoded->view.values == decoded->view.owned.data())
    *buffer = std::move(decoded->stored_bytes);
  decoded->word_ranks = defined_before_words(decoded->view.defined);
  return decoded;
}

void reuse_dropped_buffer(std::vector<std::shared_ptr<const DecodedChunk>>& dropped, RawBytes& buffer) {
  for (std::shared_ptr<const DecodedChunk>& entry : dropped) {
    // Entries are made non-const (decode_for_cache); one held by nobody else can give its bytes.
    if (buffer.capacity() == 0 && entry.use_count() == 1)
      buffer = std::move(const_cast<DecodedChunk&>(*entry).stored_bytes);
    entry.reset();
  }
  dropped.clear();
}

std::size_t DecodedChunk::bytes() const noexcept {
  // The buffers as allocated (a reused read buffer may be larger than the chunk in it), and a
  // fixed cost so that cached empty chunks count too.
  return sizeof(DecodedChunk) + std::size_t((view.defined.element_count() + 63) / 64) * 8 + view.owned.capacity() +
         stored_bytes.capacity() + word_ranks.capacity() * sizeof(std::uint32_t);
}

void DecodedChunkCache::forget_if_stale(std::uint64_t generation, Dropped* dropped) {
  if (generation == generation_) return;
  if (dropped)
    for (Entry& e : lru_) dropped->push_back(std::move(e.chunk));
  lru_.clear();
  index_.clear();
  bytes_ = 0;
  generation_ = generation;
}

void DecodedChunkCache::evict_to(std::size_t limit, Dropped* dropped) {
  while (bytes_ > limit && !lru_.empty()) {
    bytes_ -= lru_.back().chunk->bytes();
    index_.erase(lru_.back().key);
    if (dropped) dropped->push_back(std::move(lru_.back().chunk));
    lru_.pop_back();
  }
}

std::shared_ptr<const DecodedChunk> DecodedChunkCache::find(std::uint64_t key, std::uint64_t generation) {
  std::lock_guard<std::mutex> lock(mutex_);
  forget_if_stale(generation);
  const auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->chunk;
}

bool DecodedChunkCache::admit(std::uint64_t key) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (budget_ == 0) return false;
  for (std::uint64_t& k : recent_misses_)
    if (k == key + 1) {
      k = 0;
      return true;
    }
  recent_misses_[next_miss_] = key + 1;
  next_miss_ = (next_miss_ + 1) % kRecentMisses;
  return false;
}

void DecodedChunkCache::insert(std::uint64_t key, std::shared_ptr<const DecodedChunk> chunk,
                               std::uint64_t generation, Dropped* dropped) {
  if (!chunk) return;
  const std::size_t size = chunk->bytes();
  std::lock_guard<std::mutex> lock(mutex_);
  forget_if_stale(generation, dropped);
  if (const auto it = index_.find(key); it != index_.end()) {
    bytes_ -= it->second->chunk->bytes();
    if (dropped) dropped->push_back(std::move(it->second->chunk));
    lru_.erase(it->second);
    index_.erase(it);
  }
  if (size > budget_) {
    if (dropped) dropped->push_back(std::move(chunk));
    return;
  }
  evict_to(budget_ - size, dropped);
  lru_.push_front(Entry{key, std::move(chunk)});
  index_.emplace(key, lru_.begin());
  bytes_ += size;
}

std::size_t DecodedChunkCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

std::size_t DecodedChunkCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lru_.size();
}

}  // namespace h5sparse
