// The parallel write's owner merge without MPI: ranks simulated in one process route their
// pieces, owners gather and merge them, and the chunks equal what the serial engine stores when
// the ranks' writes and erases run one after another in rank order. Rounds and the image copy
// into a round's memory box are checked on their own.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "h5sparse/engine/owner_merge.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "memory_chunk_store.hpp"

using namespace h5sparse;

namespace {

using Value = std::uint32_t;

SparseParams params_for(const Coords& chunk_dims, bool fill_is_undefined) {
  SparseParams p;
  p.options = fill_is_undefined ? unsigned(kOptionFillIsUndefined) : 0u;
  p.layout.dims = chunk_dims;
  p.layout.element_size = sizeof(Value);
  return p;
}

struct RankCall {
  std::vector<ChunkPiece> pieces;
  std::vector<Value> values;
};

RankCall random_call(const ChunkGrid& grid, std::uint64_t total, std::mt19937& rng) {
  RankCall call;
  for (int r = 0, runs = 1 + int(rng() % 5); r < runs; ++r) {
    const std::uint64_t start = rng() % total, length = 1 + rng() % std::min<std::uint64_t>(total - start, 40);
    grid.split(start, length, call.values.size(), call.pieces);
    for (std::uint64_t k = 0; k < length; ++k) call.values.push_back(rng() % 4 == 0 ? 0 : Value(rng() % 1000 + 1));
  }
  group_by_chunk(call.pieces);
  return call;
}

// One collective call of `ranks` ranks through the owner steps, stored into `store`.
void owner_steps(const SparseEngine& engine, MemoryChunkStore& store, const ChunkGrid& grid,
                 const std::vector<RankCall>& calls, OwnerOp op) {
  const std::size_t ranks = calls.size();
  const SparseParams& params = engine.params();
  std::vector<RoutedPieces> routed;
  for (std::size_t r = 0; r < ranks; ++r)
    routed.push_back(route_to_owners(calls[r].pieces, op == OwnerOp::write ? reinterpret_cast<const std::uint8_t*>(calls[r].values.data()) : nullptr,
                                     sizeof(Value), grid.chunk_count(), ranks, r));
  for (std::size_t owner = 0; owner < ranks; ++owner) {
    std::vector<ByteView> received;
    for (std::size_t r = 0; r < ranks; ++r) received.emplace_back(routed[r].messages[owner]);
    auto work = gather_contributions(received, routed[owner].own, owner, grid.chunk_count(), sizeof(Value), op);
    PieceMerger merger(params.layout, nullptr, params.fill_is_undefined());
    for (auto& [index, contributions] : work) {
      ASSERT_EQ(chunk_owner(index, grid.chunk_count(), ranks), owner);
      const Coords origin = grid.chunk_origin(index);
      const bool stored = store.chunks.count(origin) > 0;
      auto o = merge_contributions(params, grid, index, engine.read_chunk(store, origin), stored, contributions, op,
                                   false, merger);
      if (o) store.write(origin, o->encoded);
    }
  }
}

void expect_same_chunks(const SparseEngine& engine, MemoryChunkStore& a, MemoryChunkStore& b, const ChunkGrid& grid,
                        const std::string& when) {
  for (std::uint64_t c = 0; c < grid.chunk_count(); ++c) {
    const Coords origin = grid.chunk_origin(c);
    const StructuredChunk x = engine.read_chunk(a, origin), y = engine.read_chunk(b, origin);
    ASSERT_EQ(x.defined.defined_count(), y.defined.defined_count()) << when << ", chunk " << coords_text(origin);
    for (std::uint64_t k = 0; k < engine.params().layout.element_count(); ++k)
      ASSERT_EQ(x.defined.test(k), y.defined.test(k)) << when << ", chunk " << coords_text(origin) << " element " << k;
    ASSERT_EQ(x.values, y.values) << when << ", chunk " << coords_text(origin);
  }
}

void run_ranks(std::size_t ranks, bool fill_is_undefined, unsigned seed) {
  const Coords dims{30, 41}, chunk_dims{8, 8};
  const SparseEngine engine(params_for(chunk_dims, fill_is_undefined), 0);
  const ChunkGrid grid(dims, chunk_dims);
  MemoryChunkStore parallel, serial;
  std::mt19937 rng(seed);
  for (int step = 0; step < 25; ++step) {
    const OwnerOp op = rng() % 4 == 0 ? OwnerOp::erase : OwnerOp::write;
    std::vector<RankCall> calls;
    for (std::size_t r = 0; r < ranks; ++r) calls.push_back(random_call(grid, 30 * 41, rng));
    owner_steps(engine, parallel, grid, calls, op);
    for (const RankCall& c : calls) {  // the serial meaning: rank after rank
      if (op == OwnerOp::write) engine.write(serial, grid, c.pieces, reinterpret_cast<const std::uint8_t*>(c.values.data()));
      else engine.erase(serial, grid, c.pieces);
    }
    expect_same_chunks(engine, parallel, serial, grid, "step " + std::to_string(step));
  }
}

}  // namespace

TEST(OwnerMerge, OneRankIsTheSerialWrite) { run_ranks(1, false, 1); }
TEST(OwnerMerge, ThreeRanksEqualTheirWritesInRankOrder) { run_ranks(3, false, 2); }
TEST(OwnerMerge, FiveRanksFillIsUndefined) { run_ranks(5, true, 3); }

TEST(OwnerMerge, OwnersAreContiguousRunsOfTheChunkOrder) {
  for (std::size_t ranks : {1, 2, 3, 7}) {
    std::size_t last = 0;
    for (std::uint64_t c = 0; c < 20; ++c) {
      const std::size_t o = chunk_owner(c, 20, ranks);
      ASSERT_LT(o, ranks);
      ASSERT_GE(o, last);
      last = o;
    }
    EXPECT_EQ(chunk_owner(0, 20, ranks), 0u);
    EXPECT_EQ(chunk_owner(19, 20, ranks), ranks - 1);
  }
  EXPECT_EQ(chunk_owner((std::uint64_t(1) << 42) - 1, std::uint64_t(1) << 42, 4), 3u);  // no overflow
}

TEST(OwnerMerge, MalformedMessagesAreRefused) {
  const ChunkGrid grid({16}, {4});
  const std::vector<ChunkPiece> pieces{{1, 0, 2, 0}};
  const Value values[2] = {5, 6};
  RoutedPieces routed = route_to_owners(pieces, reinterpret_cast<const std::uint8_t*>(values), 4, 4, 2, 1);
  Bytes message = routed.messages[0];
  ASSERT_FALSE(message.empty());
  for (std::size_t cut : {std::size_t(4), std::size_t(20), message.size() - 1}) {
    const Bytes truncated(message.begin(), message.begin() + std::ptrdiff_t(cut));
    EXPECT_THROW(gather_contributions({ByteView(truncated), ByteView(nullptr, 0)}, {}, 1, 4, 4, OwnerOp::write), Error);
  }
  Bytes bad_chunk = message;
  bad_chunk[0] = 9;  // chunk 9 of 4
  EXPECT_THROW(gather_contributions({ByteView(bad_chunk), ByteView(nullptr, 0)}, {}, 1, 4, 4, OwnerOp::write), Error);
}

TEST(OwnerMerge, EqualImagesWithDifferentEncodingsGoToDifferentRounds) {
  std::vector<OwnedChunk> owned{{0, Bytes(8, 0), Bytes{1}, 0}, {1, Bytes(8, 0), Bytes{2}, 0},
                                {2, Bytes(8, 0), Bytes{1}, 0}, {3, Bytes(8, 1), Bytes{2}, 0}};
  EXPECT_EQ(assign_rounds(owned), 2);
  EXPECT_EQ(owned[0].round, 0);
  EXPECT_EQ(owned[1].round, 1);
  EXPECT_EQ(owned[2].round, 0);  // same image, same encoding: no conflict
  EXPECT_EQ(owned[3].round, 0);
}

TEST(OwnerMerge, ImagesLandAtTheirPlaceInTheBox) {
  const Coords chunk_dims{3, 4, 5}, count{2, 4, 3}, at{1, 0, 2}, box{4, 5, 6};
  std::vector<std::uint8_t> image(3 * 4 * 5), dest(4 * 5 * 6, 0xEE);
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = std::uint8_t(i);
  copy_image_into_box(image.data(), chunk_dims, count, at, box, 1, dest.data());
  for (std::uint64_t x = 0; x < 4; ++x)
    for (std::uint64_t y = 0; y < 5; ++y)
      for (std::uint64_t z = 0; z < 6; ++z) {
        const bool inside = x >= 1 && x < 3 && y < 4 && z >= 2 && z < 5;
        const std::uint8_t want = inside ? image[((x - 1) * 4 + y) * 5 + (z - 2)] : 0xEE;
        ASSERT_EQ(dest[(x * 5 + y) * 6 + z], want) << x << "," << y << "," << z;
      }
}
