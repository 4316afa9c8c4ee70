// decoded_chunk_cache.hpp: an LRU of decoded chunks bounded in bytes, forgetting everything
// when asked at another generation; entries handed out stay valid after eviction.
#include "h5sparse/decoded_chunk_cache.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using namespace h5sparse;

namespace {

// A chunk of `elements` elements with `defined` of them defined, 4-byte values.
std::shared_ptr<const DecodedChunk> chunk_of(std::uint64_t elements, std::uint64_t defined) {
  auto d = std::make_shared<DecodedChunk>();
  d->stored = defined > 0;
  d->view.defined = ChunkSelection(elements);
  for (std::uint64_t i = 0; i < defined; ++i) d->view.defined.set(i);
  d->view.owned.assign(std::size_t(defined) * 4, std::uint8_t(defined));
  d->view.values = d->view.owned.data();
  d->view.values_size = d->view.owned.size();
  return d;
}

}  // namespace

TEST(DecodedChunkCache, BytesCountValuesAndBitmap) {
  const auto a = chunk_of(640, 100), b = chunk_of(640, 0);
  EXPECT_EQ(a->bytes() - b->bytes(), 400u);               // the values
  EXPECT_EQ(b->bytes(), sizeof(DecodedChunk) + 10 * 8);  // an empty chunk still counts
  DecodedChunk reused;  // a read buffer reused for a smaller chunk counts as allocated
  reused.stored_bytes.reserve(4096);
  reused.stored_bytes.resize(10);
  EXPECT_EQ(reused.bytes() - DecodedChunk().bytes(), 4096u);
}

TEST(DecodedChunkCache, FindsWhatWasInsertedAtTheSameGeneration) {
  DecodedChunkCache cache(1 << 20);
  const auto a = chunk_of(64, 10);
  cache.insert(3, a, 1);
  EXPECT_EQ(cache.find(3, 1), a);
  EXPECT_EQ(cache.find(4, 1), nullptr);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), a->bytes());
}

TEST(DecodedChunkCache, AnotherGenerationForgetsEverything) {
  DecodedChunkCache cache(1 << 20);
  cache.insert(1, chunk_of(64, 1), 5);
  cache.insert(2, chunk_of(64, 2), 5);
  EXPECT_EQ(cache.find(1, 6), nullptr);  // a change happened since
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(cache.bytes(), 0u);
  cache.insert(1, chunk_of(64, 3), 6);
  EXPECT_NE(cache.find(1, 6), nullptr);
  // Inserting something decoded at an older generation also starts over (the caller's
  // generation is what it saw when it started; never mixed with newer entries).
  cache.insert(2, chunk_of(64, 4), 5);
  EXPECT_EQ(cache.find(1, 5), nullptr);
  EXPECT_NE(cache.find(2, 5), nullptr);
}

TEST(DecodedChunkCache, EvictsTheLeastRecentlyUsedBeyondTheBudget) {
  const auto a = chunk_of(64, 16), b = chunk_of(64, 16), c = chunk_of(64, 16);
  DecodedChunkCache cache(2 * a->bytes() + 1);
  cache.insert(1, a, 1);
  cache.insert(2, b, 1);
  EXPECT_EQ(cache.find(1, 1), a);  // 1 is now the most recently used
  cache.insert(3, c, 1);           // evicts 2
  EXPECT_EQ(cache.find(2, 1), nullptr);
  EXPECT_EQ(cache.find(1, 1), a);
  EXPECT_EQ(cache.find(3, 1), c);
  EXPECT_LE(cache.bytes(), cache.budget());
}

TEST(DecodedChunkCache, KeepsNothingLargerThanTheBudgetNorAnythingWithABudgetOfZero) {
  const auto big = chunk_of(1024, 1024);
  DecodedChunkCache small(big->bytes() - 1);
  small.insert(1, chunk_of(64, 1), 1);
  small.insert(2, big, 1);
  EXPECT_EQ(small.find(2, 1), nullptr);
  EXPECT_NE(small.find(1, 1), nullptr);  // the others stay
  DecodedChunkCache none(0);
  none.insert(1, chunk_of(64, 0), 1);
  EXPECT_EQ(none.find(1, 1), nullptr);
  EXPECT_EQ(none.bytes(), 0u);
}

TEST(DecodedChunkCache, ReplacingAKeyCountsOnlyTheNewEntry) {
  DecodedChunkCache cache(1 << 20);
  const auto a = chunk_of(64, 10), b = chunk_of(64, 20);
  cache.insert(7, a, 1);
  cache.insert(7, b, 1);
  EXPECT_EQ(cache.find(7, 1), b);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), b->bytes());
}

TEST(DecodedChunkCache, AnEntryHandedOutOutlivesItsEviction) {
  const auto a = chunk_of(256, 200);
  DecodedChunkCache cache(a->bytes());
  cache.insert(1, a, 1);
  std::shared_ptr<const DecodedChunk> held = cache.find(1, 1);
  cache.insert(2, chunk_of(256, 200), 1);  // evicts 1
  EXPECT_EQ(cache.find(1, 1), nullptr);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->view.values_size, 800u);
  EXPECT_EQ(held->view.values[0], 200);
}

TEST(DecodedChunkCache, HandsBackEveryEntryThatLeaves) {
  const auto a = chunk_of(64, 16), b = chunk_of(64, 16), c = chunk_of(64, 16);
  DecodedChunkCache cache(2 * a->bytes());
  std::vector<std::shared_ptr<const DecodedChunk>> dropped;
  cache.insert(1, a, 1, &dropped);
  cache.insert(2, b, 1, &dropped);
  EXPECT_TRUE(dropped.empty());
  cache.insert(3, c, 1, &dropped);  // evicts 1
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0], a);
  dropped.clear();
  const auto c2 = chunk_of(64, 16);
  cache.insert(3, c2, 1, &dropped);  // replaces 3
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0], c);
  dropped.clear();
  const auto big = chunk_of(1024, 1024);
  cache.insert(4, big, 1, &dropped);  // not kept: handed back at once
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0], big);
  dropped.clear();
  cache.insert(5, chunk_of(64, 1), 2, &dropped);  // a change happened: 2 and 3 go
  EXPECT_EQ(dropped.size(), 2u);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(DecodedChunkCache, AdmitsAChunkMissedTwiceWithinTheLastMisses) {
  DecodedChunkCache cache(1 << 20);
  EXPECT_FALSE(cache.admit(7));  // first miss: remembered only
  EXPECT_TRUE(cache.admit(7));   // again: keep it
  EXPECT_FALSE(cache.admit(7));  // admitting forgot it
  EXPECT_FALSE(cache.admit(1));
  for (std::uint64_t k = 100; k < 100 + DecodedChunkCache::kRecentMisses; ++k) EXPECT_FALSE(cache.admit(k));
  EXPECT_FALSE(cache.admit(1));  // pushed out of the ring by as many other misses
  EXPECT_FALSE(cache.admit(0));
  EXPECT_TRUE(cache.admit(0));   // key 0 is a key like any other
  DecodedChunkCache none(0);
  EXPECT_FALSE(none.admit(3));
  EXPECT_FALSE(none.admit(3));
}
