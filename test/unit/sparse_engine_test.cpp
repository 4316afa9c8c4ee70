// The sparse engine over an in-memory chunk store, against a dense model of the RFC's meaning:
// random writes (any order, repeats), erases, reads (pieces and whole) and get-defined at ranks
// 1 to 3, the fill-is-undefined option, large writes that take the worker threads, an SWMR
// store, failures of the store and corrupt chunks, and extent changes.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "h5sparse/engine/extent_update.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "memory_chunk_store.hpp"

using namespace h5sparse;

namespace {

using Value = TestValue;
constexpr Value kFill = kTestFill;

// The model: each element's value and whether it is defined, by linear offset in the extent.
struct Model {
  std::vector<Value> value;
  std::vector<bool> defined;
};

const std::uint8_t* bytes_of(const std::vector<Value>& values) {
  return reinterpret_cast<const std::uint8_t*>(values.data());
}

void expect_matches(const SparseEngine& engine, MemoryChunkStore& store, const ChunkGrid& grid, const Model& model,
                    const std::string& when) {
  const std::uint64_t total = model.value.size();
  std::vector<Value> got(total, 0);
  const std::vector<ChunkPiece> none;
  engine.read(store, ChunkRequest{grid, none, true, total},
              ReadTarget{reinterpret_cast<std::uint8_t*>(got.data()), engine.params().fill.data(), false, true});
  const std::vector<std::uint64_t> defined = engine.defined(store, grid, every_element(grid));
  std::size_t next_defined = 0;
  for (std::uint64_t i = 0; i < total; ++i) {
    ASSERT_EQ(got[i], model.defined[i] ? model.value[i] : kFill) << when << ", element " << i;
    const bool listed = next_defined < defined.size() && defined[next_defined] == i;
    ASSERT_EQ(listed, bool(model.defined[i])) << when << ", element " << i;
    next_defined += listed;
  }
  ASSERT_EQ(next_defined, defined.size()) << when;
}

void run_model(const Coords& dims, const Coords& chunk_dims, bool fill_is_undefined, unsigned seed) {
  const SparseEngine engine(test_params(chunk_dims, fill_is_undefined), 1 << 20);
  MemoryChunkStore store;
  const ChunkGrid grid(dims, chunk_dims);
  std::uint64_t total = 1;
  for (std::uint64_t d : dims) total *= d;
  Model model{std::vector<Value>(total, kFill), std::vector<bool>(total, false)};
  std::mt19937 rng(seed);
  std::vector<std::uint64_t> offsets;
  for (int step = 0; step < 60; ++step) {
    const std::string when = "seed " + std::to_string(seed) + ", step " + std::to_string(step);
    const std::vector<ChunkPiece> pieces = random_pieces(grid, total, rng, offsets);
    const unsigned op = rng() % 4;
    if (op == 0) {
      engine.erase(store, grid, pieces);
      for (std::uint64_t o : offsets) model.defined[o] = false;
    } else if (op == 1) {  // a read of the pieces: values in selection order
      std::vector<Value> got(offsets.size(), 0);
      engine.read(store, ChunkRequest{grid, pieces, false, offsets.size()},
                  ReadTarget{reinterpret_cast<std::uint8_t*>(got.data()), engine.params().fill.data(), false, false});
      for (std::size_t i = 0; i < offsets.size(); ++i)
        ASSERT_EQ(got[i], model.defined[offsets[i]] ? model.value[offsets[i]] : kFill) << when << ", read " << i;
    } else {
      std::vector<Value> values(offsets.size());
      for (Value& v : values) v = rng() % 3 == 0 ? kFill : Value(rng() % 100000 + 100);
      engine.write(store, grid, pieces, reinterpret_cast<const std::uint8_t*>(values.data()));
      for (std::size_t i = 0; i < offsets.size(); ++i) {  // the last write of an element wins
        model.value[offsets[i]] = values[i];
        model.defined[offsets[i]] = !(fill_is_undefined && values[i] == kFill);
      }
    }
    expect_matches(engine, store, grid, model, when);
  }
}

}  // namespace

TEST(SparseEngine, Rank1MatchesTheModel) { run_model({1000}, {64}, false, 1); }
TEST(SparseEngine, Rank2EdgeChunksMatchTheModel) { run_model({37, 53}, {8, 16}, false, 2); }
TEST(SparseEngine, Rank3FillIsUndefinedMatchesTheModel) { run_model({9, 10, 11}, {4, 3, 5}, true, 3); }
TEST(SparseEngine, Rank2FillIsUndefinedMatchesTheModel) { run_model({40, 40}, {16, 16}, true, 4); }

TEST(SparseEngine, LargeWritesAndReadsOnTheWorkersMatchTheModel) {
  // 512 x 512 x 4 bytes: over the threshold at which chunks go to the worker threads.
  const Coords dims{512, 512}, chunk_dims{64, 64};
  const SparseEngine engine(test_params(chunk_dims, false), 0);
  MemoryChunkStore store;
  const ChunkGrid grid(dims, chunk_dims);
  const std::uint64_t total = 512 * 512;
  Model model{std::vector<Value>(total, kFill), std::vector<bool>(total, false)};
  std::vector<ChunkPiece> pieces;
  std::vector<Value> values;
  for (std::uint64_t row = 0; row < 512; row += 2) {  // every other row, 400 elements of each
    grid.split(row * 512 + 50, 400, values.size(), pieces);
    for (std::uint64_t k = 0; k < 400; ++k) {
      values.push_back(Value(row * 1000 + k));
      model.value[row * 512 + 50 + k] = values.back();
      model.defined[row * 512 + 50 + k] = true;
    }
  }
  group_by_chunk(pieces);
  engine.write(store, grid, pieces, reinterpret_cast<const std::uint8_t*>(values.data()));
  expect_matches(engine, store, grid, model, "after the large write");
}

TEST(SparseEngine, AnSwmrStoreNeverGetsAChunkRewrittenInPlace) {
  const Coords dims{64}, chunk_dims{16};
  const SparseEngine engine(test_params(chunk_dims, false), 0);
  MemoryChunkStore store;
  store.moves = true;  // throws on a rewrite of the same size
  const ChunkGrid grid(dims, chunk_dims);
  const std::vector<ChunkPiece> pieces = every_element(grid);
  std::vector<Value> values(64, 1);
  for (Value round = 1; round < 5; ++round) {  // same defined set, same values size each round
    std::fill(values.begin(), values.end(), round);
    engine.write(store, grid, pieces, bytes_of(values));
  }
  std::vector<Value> got(64);
  engine.read(store, ChunkRequest{grid, {}, true, 64}, ReadTarget{reinterpret_cast<std::uint8_t*>(got.data()), nullptr, false, true});
  EXPECT_EQ(got, std::vector<Value>(64, 4));
}

TEST(SparseEngine, AStoreFailureNamesTheChunkAndKeepsWhatWasStoredBefore) {
  const Coords dims{64}, chunk_dims{16};
  const SparseEngine engine(test_params(chunk_dims, false), 0);
  MemoryChunkStore store;
  const ChunkGrid grid(dims, chunk_dims);
  const std::vector<ChunkPiece> pieces = every_element(grid);
  std::vector<Value> values(64, 3);
  engine.write(store, grid, pieces, bytes_of(values));
  const auto before = store.chunks;
  store.writes_left = 2;
  std::fill(values.begin(), values.end(), 9);
  try {
    engine.write(store, grid, pieces, bytes_of(values));
    FAIL() << "the third chunk's write should fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the store refused a write"), std::string::npos) << e.what();
  }
  EXPECT_NE(store.chunks.at({0}), before.at({0}));
  EXPECT_NE(store.chunks.at({16}), before.at({16}));
  EXPECT_EQ(store.chunks.at({32}), before.at({32}));  // untouched: nothing half-written
  EXPECT_EQ(store.chunks.at({48}), before.at({48}));
}

TEST(SparseEngine, ACorruptChunkIsReportedWithItsOrigin) {
  const Coords dims{8, 8}, chunk_dims{4, 4};
  const SparseEngine engine(test_params(chunk_dims, false), 1 << 20);
  MemoryChunkStore store;
  const ChunkGrid grid(dims, chunk_dims);
  const std::vector<ChunkPiece> pieces = every_element(grid);
  const std::vector<Value> values(64, 5);
  engine.write(store, grid, pieces, bytes_of(values));
  store.chunks.at({4, 0})[3] ^= 0x40;
  std::vector<Value> got(64);
  for (bool whole : {true, false}) {
    try {
      engine.read(store, ChunkRequest{grid, whole ? std::vector<ChunkPiece>() : pieces, whole, 64},
                  ReadTarget{reinterpret_cast<std::uint8_t*>(got.data()), nullptr, false, true});
      FAIL() << "a corrupt chunk should not read";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::corrupt_data);
      EXPECT_NE(std::string(e.what()).find("store 'memory', chunk at (4, 0)"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(engine.write(store, grid, pieces, bytes_of(values)), Error);
  EXPECT_THROW(engine.check_chunks(store, grid, pieces), Error);
}

TEST(SparseEngine, ExtentChangesKeepOnlyTheKeptBoxDefined) {
  const Coords chunk_dims{4, 4};
  const SparseEngine engine(test_params(chunk_dims, false), 0);
  MemoryChunkStore store;
  Coords dims{10, 10};
  const std::vector<Coords> changes{{7, 10}, {7, 13}, {12, 13}, {3, 2}, {9, 9}};
  // Define everything, then change the extent again and again: in the model only the kept box
  // of each change keeps its elements. The memory store drops chunks as HDF5 does, but does not
  // rewrite the chunks a shrink cuts through.
  std::vector<Value> values(100);
  for (Value i = 0; i < 100; ++i) values[i] = i + 100;
  engine.write(store, ChunkGrid(dims, chunk_dims), every_element(ChunkGrid(dims, chunk_dims)), bytes_of(values));
  std::map<Coords, Value> model;  // defined elements by coordinates
  for (std::uint64_t r = 0; r < 10; ++r)
    for (std::uint64_t c = 0; c < 10; ++c) model[{r, c}] = Value(r * 10 + c + 100);
  for (const Coords& next : changes) {
    ExtentUpdate update(engine, store, dims, next);
    store.change_extent(next);
    update.after(true);
    for (auto it = model.begin(); it != model.end();)
      it = it->first[0] < next[0] && it->first[1] < next[1] ? std::next(it) : model.erase(it);
    dims = next;
    const ChunkGrid grid(dims, chunk_dims);
    Model dense{std::vector<Value>(dims[0] * dims[1], kFill), std::vector<bool>(dims[0] * dims[1], false)};
    for (const auto& [at, v] : model) {
      dense.value[at[0] * dims[1] + at[1]] = v;
      dense.defined[at[0] * dims[1] + at[1]] = true;
    }
    expect_matches(engine, store, grid, dense, "extent " + coords_text(dims));
  }
}
