// The sparse engine over variable-length chunks in an in-memory store, against a model (each
// element undefined, NULL, or a byte string): random writes of pieces in any order with
// repeats, overwrites with longer and shorter values, erases, reads of pieces and of the whole
// extent, get-defined, at ranks 1 to 3; coordinate writes, erases and scans; NULL against
// empty; the fill-is-undefined option; an SWMR store; extent changes; corrupt chunks;
// fixed-size operations refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>

#include "h5sparse/engine/extent_update.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"
#include "memory_chunk_store.hpp"

using namespace h5sparse;

namespace {

using Value = std::optional<std::string>;     // nullopt: NULL
using Model = std::map<std::uint64_t, Value>;  // defined elements by linear offset

SparseParams string_params(const Coords& chunk_dims, bool fill_is_undefined = false) {
  SparseParams p;
  p.options = fill_is_undefined ? unsigned(kOptionFillIsUndefined) : 0u;
  p.layout.dims = chunk_dims;
  p.layout.element_size = kVarCarrierSize;
  p.layout.var.slot_base_sizes = {1};
  p.layout.lengths_pipeline = {{kFilterDeflate, 0, {6}}};
  p.layout.data_pipeline = {{kFilterLzf, kFilterFlagOptional, {}}};
  p.slot_kinds = {SlotKind::utf8};
  p.true_type = {1};
  return p;
}

VarValues values_of(const std::vector<Value>& values) {
  VarValues v;
  const VarType type{0, {1}};
  for (const Value& value : values) {
    const VarPayload slot = value ? VarPayload{reinterpret_cast<const std::uint8_t*>(value->data()), value->size(), false}
                                  : VarPayload{nullptr, 0, true};
    v.append(type, nullptr, &slot);
  }
  return v;
}

Value value_at(const VarValues& v, std::size_t e) {
  const VarPayload p = v.payload(e);
  if (p.null) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(p.data), p.size);
}

std::uint64_t total_of(const Coords& dims) {
  std::uint64_t total = 1;
  for (std::uint64_t d : dims) total *= d;
  return total;
}

Value random_value(std::mt19937& rng) {
  const unsigned kind = rng() % 8;
  if (kind == 0) return std::nullopt;
  if (kind == 1) return std::string();
  std::string s(rng() % (kind == 7 ? 400 : 9), 'a');
  for (char& c : s) c = char('a' + rng() % 5);
  return s;
}

// Reads the whole extent both ways (pieces and `whole`) and compares with the model.
void expect_matches(const SparseEngine& engine, MemoryChunkStore& store, const ChunkGrid& grid, const Model& model) {
  const std::uint64_t total = total_of(grid.dataset_dims());
  const std::vector<ChunkPiece> pieces = every_element(grid);
  for (bool whole : {false, true}) {
    const VarValues read = engine.read_var(store, ChunkRequest{grid, whole ? std::vector<ChunkPiece>() : pieces, whole, total});
    ASSERT_EQ(read.count(engine.params().layout.var), total);
    for (std::uint64_t i = 0; i < total; ++i) {
      const auto it = model.find(i);
      ASSERT_EQ(value_at(read, i), it == model.end() ? Value() : it->second) << "element " << i << " whole " << whole;
    }
  }
  std::vector<std::uint64_t> defined;
  for (const auto& [offset, value] : model) defined.push_back(offset);
  EXPECT_EQ(engine.defined(store, grid, pieces), defined);
}

}  // namespace

TEST(VarEngine, RandomWritesOverwritesAndErasesMatchTheModel) {
  const std::vector<std::pair<Coords, Coords>> shapes = {{{37}, {8}}, {{9, 11}, {4, 3}}, {{5, 6, 7}, {2, 4, 3}}};
  std::mt19937 rng(21);
  for (const auto& [dims, chunk] : shapes) {
    const SparseEngine engine(string_params(chunk), 0);
    const ChunkGrid grid(dims, chunk);
    MemoryChunkStore store;
    Model model;
    for (int round = 0; round < 60; ++round) {
      std::vector<std::uint64_t> offsets;
      const std::vector<ChunkPiece> pieces = random_pieces(grid, total_of(dims), rng, offsets);
      if (rng() % 4 == 0) {
        engine.erase(store, grid, pieces);
        for (std::uint64_t o : offsets) model.erase(o);
      } else {
        std::vector<Value> values;
        for (std::uint64_t o : offsets) model[o] = values.emplace_back(random_value(rng));
        engine.write_var(store, grid, pieces, values_of(values));
      }
      expect_matches(engine, store, grid, model);
    }
  }
}

// The model's elements inside a box in row-major order, as a scan of it gives them:
// coordinates and values, in batches of max_bytes.
void expect_scan_matches(const SparseEngine& engine, MemoryChunkStore& store, const ChunkGrid& grid,
                         const Model& model, const Box& box, std::size_t max_bytes) {
  const Coords& dims = grid.dataset_dims();
  std::vector<std::pair<Coords, Value>> want;
  for (const auto& [offset, value] : model) {
    Coords c(dims.size());
    for (std::size_t d = dims.size(), rest = std::size_t(offset); d-- > 0; rest /= std::size_t(dims[d]))
      c[d] = rest % dims[d];
    bool inside = true;
    for (std::size_t d = 0; d < dims.size(); ++d) inside = inside && c[d] >= box.start[d] && c[d] - box.start[d] < box.count[d];
    if (inside) want.emplace_back(c, value);
  }
  for (bool values : {true, false}) {
    CoordinateScan scan;
    scan.region = {box};
    scan.values = values;
    scan.max_bytes = max_bytes;
    std::vector<std::pair<Coords, Value>> got;
    engine.scan_coordinates(store, grid, scan, [&](const CoordinateBatch& b) {
      EXPECT_EQ(b.var_values != nullptr, values);
      for (std::size_t i = 0; i < b.count; ++i) {
        std::uint64_t number = 0;
        if (values) std::memcpy(&number, b.values + i * 8, 8);
        got.emplace_back(Coords(b.coords + i * dims.size(), b.coords + (i + 1) * dims.size()),
                         values ? value_at(*b.var_values, std::size_t(number)) : Value());
      }
      return true;
    });
    // Batches cut a band over the budget into runs of chunks: row-major inside each run only.
    if (max_bytes < 4096) std::sort(got.begin(), got.end());
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].first, want[i].first) << "element " << i;
      if (values) {
        EXPECT_EQ(got[i].second, want[i].second) << "element " << i;
      }
    }
  }
}

// Coordinate writes (in any order, with repeats: the last wins), erases and scans of the
// extent and of a box, in batches of a few chunks, against the model.
TEST(VarEngine, CoordinateWritesErasesAndScansMatchTheModel) {
  const std::vector<std::pair<Coords, Coords>> shapes = {{{37}, {8}}, {{9, 11}, {4, 3}}, {{5, 6, 7}, {2, 4, 3}}};
  std::mt19937 rng(22);
  for (const auto& [dims, chunk] : shapes) {
    const SparseEngine engine(string_params(chunk), 0);
    const ChunkGrid grid(dims, chunk);
    MemoryChunkStore store;
    Model model;
    for (int round = 0; round < 40; ++round) {
      const std::size_t n = 1 + rng() % 12;
      std::vector<std::uint64_t> coords;
      std::vector<std::uint64_t> offsets;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint64_t offset = 0;
        for (std::size_t d = 0; d < dims.size(); ++d) {
          coords.push_back(rng() % dims[d]);
          offset = offset * dims[d] + coords.back();
        }
        offsets.push_back(offset);
      }
      if (rng() % 4 == 0) {
        engine.erase_coordinates(store, grid, coords.data(), n);
        for (std::uint64_t o : offsets) model.erase(o);
      } else {
        std::vector<Value> values;
        for (std::uint64_t o : offsets) model[o] = values.emplace_back(random_value(rng));
        engine.write_var_coordinates(store, grid, coords.data(), n, values_of(values));
      }
      Box box{Coords(dims.size()), Coords(dims.size())};
      for (std::size_t d = 0; d < dims.size(); ++d) {
        box.start[d] = rng() % dims[d];
        box.count[d] = 1 + rng() % (dims[d] - box.start[d]);
      }
      expect_scan_matches(engine, store, grid, model, Box{Coords(dims.size()), dims}, 1 + rng() % 400);
      expect_scan_matches(engine, store, grid, model, box, std::size_t(64) << 20);
    }
    expect_matches(engine, store, grid, model);
  }
}

TEST(VarEngine, NullStaysApartFromEmptyAndFillIsUndefinedErasesNulls) {
  const ChunkGrid grid({6}, {4});
  const std::vector<ChunkPiece> pieces = every_element(grid);
  for (bool fill_is_undefined : {false, true}) {
    const SparseEngine engine(string_params({4}, fill_is_undefined), 0);
    MemoryChunkStore store;
    engine.write_var(store, grid, pieces, values_of({"x", "y", "z", "w", "v", "u"}));
    engine.write_var(store, grid, pieces, values_of({std::nullopt, "", "ab", std::nullopt, "", "é"}));
    Model model{{1, ""}, {2, "ab"}, {4, ""}, {5, "é"}};
    if (!fill_is_undefined) model.insert({{0, std::nullopt}, {3, std::nullopt}});
    expect_matches(engine, store, grid, model);
  }
}

TEST(VarEngine, SwmrStoreGetsRewritesOfAnotherSize) {
  const SparseEngine engine(string_params({4}), 0);
  const ChunkGrid grid({4}, {4});
  MemoryChunkStore store;
  store.moves = true;  // throws when a chunk is rewritten at its old size
  const std::vector<ChunkPiece> pieces = every_element(grid);
  engine.write_var(store, grid, pieces, values_of({"a", "b", "c", "d"}));
  engine.write_var(store, grid, pieces, values_of({"e", "f", "g", "h"}));  // same sizes
  expect_matches(engine, store, grid, Model{{0, "e"}, {1, "f"}, {2, "g"}, {3, "h"}});
}

TEST(VarEngine, ExtentChangesKeepOnlyTheKeptBox) {
  const SparseEngine engine(string_params({3, 3}), 0);
  MemoryChunkStore store;
  const Coords old_dims{7, 7}, small{4, 5}, big{9, 9};
  const ChunkGrid grid(old_dims, {3, 3});
  std::vector<Value> values;
  for (int i = 0; i < 49; ++i) values.push_back("v" + std::to_string(i));
  engine.write_var(store, grid, every_element(grid), values_of(values));
  ExtentUpdate shrink(engine, store, old_dims, small);
  store.change_extent(small);
  shrink.after(true);
  ExtentUpdate grow(engine, store, small, big);
  store.change_extent(big);
  grow.after(true);
  Model model;
  for (std::uint64_t r = 0; r < 4; ++r)
    for (std::uint64_t c = 0; c < 5; ++c) model[r * 9 + c] = "v" + std::to_string(r * 7 + c);
  expect_matches(engine, store, ChunkGrid(big, {3, 3}), model);
}

TEST(VarEngine, CorruptChunksAndFixedSizeOperationsAreRefused) {
  const SparseEngine engine(string_params({4}), 0);
  const ChunkGrid grid({4}, {4});
  MemoryChunkStore store;
  const std::vector<ChunkPiece> pieces = every_element(grid);
  engine.write_var(store, grid, pieces, values_of({"abc", "", std::nullopt, "d"}));
  const Bytes good = store.chunks.begin()->second;
  for (std::size_t i = 0; i < good.size(); ++i) {
    store.chunks.begin()->second = good;
    store.chunks.begin()->second[i] ^= 0x10;
    try {
      engine.read_var(store, ChunkRequest{grid, pieces, false, 4});
      ADD_FAILURE() << "flipped byte " << i;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("chunk at (0)"), std::string::npos) << e.what();
    }
    const Bytes corrupt = store.chunks.begin()->second;
    EXPECT_THROW(engine.write_var(store, grid, pieces, values_of({"x", "y", "z", "w"})), Error);
    EXPECT_EQ(store.chunks.begin()->second, corrupt);  // nothing stored over it
  }
  store.chunks.begin()->second = good;
  const std::uint32_t value = 1;
  EXPECT_THROW(engine.write(store, grid, pieces, reinterpret_cast<const std::uint8_t*>(&value)), Error);
  EXPECT_THROW(engine.write_coordinates(store, grid, nullptr, 0, nullptr), Error);
  VarValues too_few = values_of({"a"});
  EXPECT_THROW(engine.write_var(store, grid, pieces, too_few), Error);
  EXPECT_EQ(store.chunks.begin()->second, good);
}

// Writes and reads of more chunks than a batch holds; a store refusing a write stops the write
// at that chunk (the chunks before it stored, none after), naming the chunk.
TEST(VarEngine, BatchesOfChunksAndAStoreFailingHalfWay) {
  const SparseEngine engine(string_params({2}), 0);
  const ChunkGrid grid({400}, {2});
  MemoryChunkStore store;
  std::vector<Value> values;
  for (int i = 0; i < 400; ++i) values.push_back(std::string(std::size_t(i % 7), char('a' + i % 26)));
  store.writes_left = 150;
  try {
    engine.write_var(store, grid, every_element(grid), values_of(values));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("chunk at (300)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store.chunks.size(), 150u);
  store.writes_left = SIZE_MAX;
  engine.write_var(store, grid, every_element(grid), values_of(values));
  Model model;
  for (std::uint64_t i = 0; i < 400; ++i) model[i] = values[i];
  expect_matches(engine, store, grid, model);
}
