// Coordinate I/O of the sparse engine over an in-memory chunk store, against a model (a map
// from coordinates to values): random writes (repeated coordinates, any order), erases and
// region scans at ranks 1 to 4 with edge chunks, row-major order and batching of scans, the
// fill-is-undefined option, agreement with the engine's dense reads, a 2^31 x 2^31 extent, and
// bad input (outside the extent, corrupt chunks, a failing store).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <random>

#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/structured_chunk.hpp"
#include "memory_chunk_store.hpp"

using namespace h5sparse;

namespace {

using Value = TestValue;
constexpr Value kFill = kTestFill;
using Model = std::map<Coords, Value>;  // the defined elements, in row-major order


struct Points {
  std::vector<std::uint64_t> coords;
  std::vector<Value> values;
  std::size_t size() const { return values.size(); }
};

Points random_points(const Coords& dims, std::size_t n, std::mt19937_64& rng) {
  Points p;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint64_t d : dims) p.coords.push_back(rng() % d);
    p.values.push_back(Value(rng() % 5 == 0 ? kFill : rng() % 1000));
  }
  if (n > 2) {  // a repeated coordinate: the last value wins
    for (std::size_t d = 0; d < dims.size(); ++d) p.coords[(n - 1) * dims.size() + d] = p.coords[d];
  }
  return p;
}

Box whole(const Coords& dims) { return Box{Coords(dims.size(), 0), dims}; }

Box random_box(const Coords& dims, std::mt19937_64& rng) {
  Box b{Coords(dims.size()), Coords(dims.size())};
  for (std::size_t d = 0; d < dims.size(); ++d) {
    b.start[d] = rng() % dims[d];
    b.count[d] = rng() % (dims[d] - b.start[d] + 1);
  }
  return b;
}

bool inside(const Coords& c, const std::vector<Box>& region) {
  for (const Box& b : region) {
    bool in = true;
    for (std::size_t d = 0; d < c.size(); ++d) in = in && c[d] >= b.start[d] && c[d] < b.start[d] + b.count[d];
    if (in) return true;
  }
  return false;
}

struct Scanned {
  std::vector<Coords> coords;
  std::vector<Value> values;
  std::vector<std::size_t> batch_sizes;
};

Scanned scan(const SparseEngine& engine, MemoryChunkStore& store, const ChunkGrid& grid, std::vector<Box> region,
             std::size_t max_bytes = std::size_t(64) << 20) {
  Scanned out;
  CoordinateScan s;
  s.region = std::move(region);
  s.max_bytes = max_bytes;
  const std::size_t rank = grid.rank();
  engine.scan_coordinates(store, grid, s, [&](const CoordinateBatch& b) {
    out.batch_sizes.push_back(b.count);
    for (std::size_t i = 0; i < b.count; ++i) {
      out.coords.emplace_back(b.coords + i * rank, b.coords + (i + 1) * rank);
      Value v;
      std::memcpy(&v, b.values + i * sizeof(Value), sizeof(Value));
      out.values.push_back(v);
    }
    return true;
  });
  return out;
}

void expect_scan_matches(const SparseEngine& engine, MemoryChunkStore& store, const ChunkGrid& grid,
                         const Model& model, const std::vector<Box>& region, const std::string& when) {
  const Scanned got = scan(engine, store, grid, region);
  std::size_t k = 0;
  for (const auto& [c, v] : model) {
    if (!inside(c, region)) continue;
    ASSERT_LT(k, got.coords.size()) << when << ": missing " << coords_text(c);
    ASSERT_EQ(got.coords[k], c) << when << ", element " << k;  // also row-major order
    ASSERT_EQ(got.values[k], v) << when << " at " << coords_text(c);
    ++k;
  }
  ASSERT_EQ(k, got.coords.size()) << when << ": extra elements";
}

void apply(Model& model, const Points& p, std::size_t rank, bool fill_is_undefined, bool erase) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Coords c(p.coords.begin() + std::ptrdiff_t(i * rank), p.coords.begin() + std::ptrdiff_t((i + 1) * rank));
    if (erase || (fill_is_undefined && p.values[i] == kFill))
      model.erase(c);
    else
      model[c] = p.values[i];
  }
}

const std::uint8_t* bytes_of(const std::vector<Value>& v) { return reinterpret_cast<const std::uint8_t*>(v.data()); }

// A store holding n random points written by coordinates, and their model.
struct Written {
  Written(const Coords& dims, const Coords& chunk, std::size_t n, unsigned seed, std::size_t kept_bytes = 0)
      : engine(test_params(chunk), kept_bytes), grid(dims, chunk) {
    std::mt19937_64 rng(seed);
    const Points p = random_points(dims, n, rng);
    engine.write_coordinates(store, grid, p.coords.data(), p.size(), bytes_of(p.values));
    apply(model, p, dims.size(), false, false);
  }
  SparseEngine engine;
  ChunkGrid grid;
  MemoryChunkStore store;
  Model model;
};

}  // namespace

TEST(Coordinates, RandomSequencesMatchTheModel) {
  const std::vector<std::pair<Coords, Coords>> shapes = {
      {{100}, {16}}, {{37, 50}, {8, 16}}, {{64, 64}, {64, 64}}, {{9, 10, 11}, {4, 3, 5}}, {{6, 5, 4, 7}, {2, 3, 4, 2}}};
  for (bool fill_is_undefined : {false, true}) {
    for (const auto& [dims, chunk] : shapes) {
      std::mt19937_64 rng(dims.size() * 31 + fill_is_undefined);
      const SparseEngine engine(test_params(chunk, fill_is_undefined), 0);
      const ChunkGrid grid(dims, chunk);
      MemoryChunkStore store;
      Model model;
      for (int step = 0; step < 40; ++step) {
        const std::string when = "rank " + std::to_string(dims.size()) + " step " + std::to_string(step);
        const Points p = random_points(dims, 1 + rng() % 60, rng);
        const bool erase = rng() % 4 == 0;
        if (erase)
          engine.erase_coordinates(store, grid, p.coords.data(), p.size());
        else
          engine.write_coordinates(store, grid, p.coords.data(), p.size(), bytes_of(p.values));
        apply(model, p, dims.size(), fill_is_undefined, erase);
        expect_scan_matches(engine, store, grid, model, {whole(dims)}, when);
        expect_scan_matches(engine, store, grid, model, {random_box(dims, rng)}, when + " (box)");
        expect_scan_matches(engine, store, grid, model, {random_box(dims, rng), random_box(dims, rng)}, when + " (2 boxes)");
      }
    }
  }
}

// Erase and get-defined of a region, by erase_region and through the pieces of its stored
// chunks (stored_region_pieces): overlapping boxes, edge chunks, ranks 1 to 4.
TEST(Coordinates, RegionErasesAndDefinedFollowTheModel) {
  const std::vector<std::pair<Coords, Coords>> shapes = {
      {{100}, {16}}, {{37, 50}, {8, 16}}, {{9, 10, 11}, {4, 3, 5}}, {{6, 5, 4, 7}, {2, 3, 4, 2}}};
  for (const auto& [dims, chunk] : shapes) {
    Written w(dims, chunk, 400, unsigned(dims.size()) * 7);
    std::mt19937_64 rng(dims.size());
    for (int step = 0; step < 20; ++step) {
      const std::string when = "rank " + std::to_string(dims.size()) + " step " + std::to_string(step);
      std::vector<Box> region{random_box(dims, rng), random_box(dims, rng)};
      if (step == 0) region = {whole(dims)};
      std::vector<std::uint64_t> expected;
      for (const auto& [c, v] : w.model) {
        if (!inside(c, region)) continue;
        std::uint64_t linear = 0;
        for (std::size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + c[d];
        expected.push_back(linear);
      }
      const std::vector<ChunkPiece> pieces = w.engine.stored_region_pieces(w.store, w.grid, region);
      for (const ChunkPiece& p : pieces) ASSERT_TRUE(w.store.chunks.count(w.grid.chunk_origin(p.chunk))) << when;
      ASSERT_EQ(w.engine.defined(w.store, w.grid, pieces), expected) << when;
      if (step % 3 == 2) continue;
      if (step % 3 == 0)
        w.engine.erase_region(w.store, w.grid, region);
      else
        w.engine.erase(w.store, w.grid, pieces);
      for (auto it = w.model.begin(); it != w.model.end();) it = inside(it->first, region) ? w.model.erase(it) : std::next(it);
      expect_scan_matches(w.engine, w.store, w.grid, w.model, {whole(dims)}, when + ", after the erase");
      const Points more = random_points(dims, 40, rng);
      w.engine.write_coordinates(w.store, w.grid, more.coords.data(), more.size(), bytes_of(more.values));
      apply(w.model, more, dims.size(), false, false);
    }
  }
}

// What coordinate writes store, the dense read path reads (and the other way round).
TEST(Coordinates, AgreeWithDenseReadsAndPieceWrites) {
  const Coords dims{40, 33};
  Written w(dims, {16, 16}, 300, 5);
  const SparseEngine& engine = w.engine;
  const ChunkGrid& grid = w.grid;
  MemoryChunkStore& store = w.store;
  Model& model = w.model;
  std::vector<ChunkPiece> pieces;
  grid.split(0, 40 * 33, 0, pieces);
  group_by_chunk(pieces);
  std::vector<Value> dense(40 * 33, 0);
  engine.read(store, ChunkRequest{grid, pieces, false, 40 * 33},
              ReadTarget{reinterpret_cast<std::uint8_t*>(dense.data()), engine.params().fill.data(), false, true});
  for (std::uint64_t r = 0; r < 40; ++r)
    for (std::uint64_t c = 0; c < 33; ++c) {
      const auto it = model.find(Coords{r, c});
      ASSERT_EQ(dense[r * 33 + c], it == model.end() ? kFill : it->second) << r << ", " << c;
    }
  // A piece write over the same store, then a coordinate scan.
  std::vector<ChunkPiece> row;
  grid.split(5 * 33, 33, 0, row);
  group_by_chunk(row);
  std::vector<Value> values(33);
  for (std::size_t i = 0; i < 33; ++i) values[i] = Value(5000 + i);
  engine.write(store, grid, row, bytes_of(values));
  for (std::uint64_t c = 0; c < 33; ++c) model[Coords{5, c}] = Value(5000 + c);
  expect_scan_matches(engine, store, grid, model, {whole(dims)}, "after a piece write");
}

TEST(Coordinates, ScansComeInBatchesOfWholeBands) {
  const Coords dims{64, 64};
  Written w(dims, {8, 8}, 2000, 9);
  const SparseEngine& engine = w.engine;
  const ChunkGrid& grid = w.grid;
  MemoryChunkStore& store = w.store;
  const Model& model = w.model;
  const Scanned small = scan(engine, store, grid, {whole(dims)}, 1);  // one group of chunks per batch
  EXPECT_GT(small.batch_sizes.size(), 8u);
  const Scanned big = scan(engine, store, grid, {whole(dims)});
  EXPECT_EQ(big.batch_sizes.size(), 1u);
  EXPECT_EQ(big.coords.size(), model.size());
  std::size_t total = 0;
  for (std::size_t s : small.batch_sizes) total += s;
  EXPECT_EQ(total, model.size());
  // Without values: the same coordinates.
  CoordinateScan no_values;
  no_values.region = {whole(dims)};
  no_values.values = false;
  std::size_t seen = 0;
  engine.scan_coordinates(store, grid, no_values, [&](const CoordinateBatch& b) {
    EXPECT_EQ(b.values, nullptr);
    seen += b.count;
    return true;
  });
  EXPECT_EQ(seen, model.size());
  // A sink that stops.
  int calls = 0;
  CoordinateScan stop;
  stop.region = {whole(dims)};
  stop.max_bytes = 1;
  engine.scan_coordinates(store, grid, stop, [&](const CoordinateBatch&) { return ++calls < 2; });
  EXPECT_EQ(calls, 2);
}

// A matrix band is merged by a counting sort on its rows, element by element when its lines hold
// few elements and a line at a time when they hold many: both give row-major order, whole and in
// boxes that cut chunks, also with edge chunks and a chunk width that is not a power of two.
TEST(Coordinates, MatrixBandsMergeByRowsOrByLines) {
  for (const Coords& chunk : {Coords{8, 32}, Coords{5, 12}}) {
    for (const std::size_t n : {std::size_t(60), std::size_t(5000)}) {  // about 0.1 and 20 a line
      const Coords dims{45, 100};
      Written w(dims, chunk, n, unsigned(n + chunk[1]));
      const std::string when = "chunk " + coords_text(chunk) + ", " + std::to_string(n) + " points";
      expect_scan_matches(w.engine, w.store, w.grid, w.model, {whole(dims)}, when);
      expect_scan_matches(w.engine, w.store, w.grid, w.model, {Box{{3, 7}, {30, 61}}}, when + ", a box");
      expect_scan_matches(w.engine, w.store, w.grid, w.model, {Box{{0, 5}, {45, 1}}, Box{{0, 40}, {45, 30}}},
                          when + ", two column bands");
    }
  }
}

// Compressed-row form holds what coordinates hold: the columns (from the box's first, 4 or 8
// bytes) and values of the model's elements in row-major order and each row's count, by each
// merge (a heap of lines for sparse bands, a counting sort by element or by line).
TEST(Coordinates, CompressedRowsHoldWhatCoordinatesHold) {
  for (const Coords& chunk : {Coords{8, 32}, Coords{5, 12}, Coords{45, 10}}) {  // the last: one row by heap
    for (const std::size_t n : {std::size_t(60), std::size_t(5000)}) {
      const Coords dims{45, 100};
      Written w(dims, chunk, n, unsigned(n + chunk[0]));
      for (const Box& box : {whole(dims), Box{{3, 7}, {30, 61}}, Box{{44, 0}, {1, 100}}}) {
        for (const std::size_t index_size : {std::size_t(4), std::size_t(8)}) {
          const std::string when = "chunk " + coords_text(chunk) + ", " + std::to_string(n) + " points, box " +
                                   coords_text(box.start) + " + " + coords_text(box.count) + ", " +
                                   std::to_string(index_size) + "-byte columns";
          std::vector<std::uint64_t> counts(box.count[0], 99), columns;
          std::vector<Value> values;
          CoordinateScan s;
          s.region = {box};
          s.compressed_rows = {counts.data(), index_size};
          s.room = [&](std::size_t count) {
            columns.assign(count, 0);  // 8 bytes each: room for either width
            values.assign(count, Value());
            return CoordinateDestination{columns.data(), reinterpret_cast<std::uint8_t*>(values.data())};
          };
          std::size_t batches = 0;
          w.engine.scan_coordinates(w.store, w.grid, s, [&](const CoordinateBatch&) { return ++batches > 0; });
          ASSERT_LE(batches, 1u) << when;
          std::vector<std::uint64_t> want_counts(box.count[0], 0);
          std::size_t k = 0;
          for (const auto& [c, v] : w.model) {
            if (!inside(c, {box})) continue;
            ++want_counts[c[0] - box.start[0]];
            ASSERT_LT(k, values.size()) << when;
            std::uint64_t column = columns[k];
            if (index_size == 4) {
              std::uint32_t narrow;
              std::memcpy(&narrow, reinterpret_cast<const std::uint8_t*>(columns.data()) + 4 * k, 4);
              column = narrow;
            }
            ASSERT_EQ(column, c[1] - box.start[1]) << when << ", element " << k;
            ASSERT_EQ(values[k], v) << when << " at " << coords_text(c);
            ++k;
          }
          EXPECT_EQ(k, values.size()) << when;
          EXPECT_EQ(counts, want_counts) << when;
        }
      }
    }
  }
}

TEST(Coordinates, CompressedRowsAreOfOneBoxOfAMatrix) {
  const Coords dims{40, 40};
  Written w(dims, {8, 8}, 100, 5);
  std::vector<std::uint64_t> counts(40);
  auto refused = [&](CoordinateScan s, const ChunkGrid& grid, const std::string& why) {
    s.compressed_rows.row_counts = counts.data();
    try {
      w.engine.scan_coordinates(w.store, grid, s, [](const CoordinateBatch&) { return true; });
      ADD_FAILURE() << "taken: " << why;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  CoordinateScan s;
  s.region = {whole(dims)};
  CoordinateScan two = s;
  two.region.push_back(Box{{0, 0}, {1, 1}});
  refused(two, w.grid, "from one box, not from 2");
  CoordinateScan resumed = s;
  resumed.from = {8, 0};
  refused(resumed, w.grid, "in one batch");
  CoordinateScan odd = s;
  odd.compressed_rows.index_size = 2;
  refused(odd, w.grid, "4 or 8 bytes, not 2");
  const ChunkGrid cube({4, 4, 4}, {2, 2, 2});
  CoordinateScan three;
  three.region = {whole({4, 4, 4})};
  refused(three, cube, "from 2-D datasets, not from 3-D ones");
  const Coords wide_dims{2, std::uint64_t(1) << 33};
  const ChunkGrid wide(wide_dims, {2, 1024});
  CoordinateScan narrow;
  narrow.region = {whole(wide_dims)};
  narrow.compressed_rows.index_size = 4;
  refused(narrow, wide, "needs 8-byte column indices");
  EXPECT_EQ(counts, std::vector<std::uint64_t>(40, 0));  // nothing written by a refused scan
}

// With the caller's room, each batch is written once into memory the caller gave for its exact
// size, and holds what a scan into the engine's own memory holds; no room fails the scan.
TEST(Coordinates, ScansWriteIntoTheCallersRoom) {
  const Coords dims{64, 64};
  Written w(dims, {8, 8}, 2000, 9);
  const std::vector<Box> region{Box{{3, 5}, {50, 41}}};
  const Scanned own = scan(w.engine, w.store, w.grid, region, 1);
  std::vector<std::vector<std::uint64_t>> coords;  // one per batch
  std::vector<std::vector<Value>> values;
  CoordinateScan s;
  s.region = region;
  s.max_bytes = 1;
  s.room = [&](std::size_t count) {
    coords.emplace_back(count * 2);
    values.emplace_back(count);
    return CoordinateDestination{coords.back().data(), reinterpret_cast<std::uint8_t*>(values.back().data())};
  };
  std::size_t batches = 0;
  w.engine.scan_coordinates(w.store, w.grid, s, [&](const CoordinateBatch& b) {
    EXPECT_EQ(b.coords, coords.back().data());
    EXPECT_EQ(b.count, values.back().size());
    ++batches;
    return true;
  });
  ASSERT_EQ(batches, own.batch_sizes.size());
  std::size_t k = 0;
  for (std::size_t batch = 0; batch < batches; ++batch)
    for (std::size_t i = 0; i < values[batch].size(); ++i, ++k) {
      EXPECT_EQ(own.coords[k], (Coords{coords[batch][2 * i], coords[batch][2 * i + 1]}));
      EXPECT_EQ(own.values[k], values[batch][i]);
    }
  EXPECT_EQ(k, own.coords.size());
  s.room = [](std::size_t) { return CoordinateDestination{}; };
  try {
    w.engine.scan_coordinates(w.store, w.grid, s, [](const CoordinateBatch&) { return true; });
    ADD_FAILURE() << "a room without memory was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("no memory was given"), std::string::npos) << e.what();
  }
}

// A scan lets go of chunks beyond its held bytes and reads them again when it writes the
// batch: the same elements, and one more read per chunk let go (none of chunks under 4 KiB).
// So too when the workers may read the chunks (a store reading by address), and then every
// read is by the address the listing gave.
TEST(Coordinates, ScansReadChunksAgainBeyondTheirHeldBytes) {
  const Coords dims{512, 512};
  Written big(dims, {128, 128}, 60000, 23);   // chunks of about 15 KB
  Written small(dims, {16, 16}, 60000, 23);   // chunks under 4 KB: always held
  const std::vector<std::vector<Box>> regions{{whole(dims)}, {Box{{100, 30}, {300, 400}}, Box{{0, 0}, {512, 64}}}};
  std::size_t chunks = 0;
  for (const bool any_thread : {false, true})
  for (Written* w : {&big, &small})
    for (const std::vector<Box>& region : regions)
      for (const std::size_t held : {std::size_t(16) << 20, std::size_t(20000), std::size_t(0)}) {
        w->store.any_thread = any_thread;
        const std::size_t reads_before = w->store.listed_reads, by_address_before = w->store.address_reads;
        Scanned got;
        CoordinateScan s;
        s.region = region;
        s.held_bytes = held;
        w->engine.scan_coordinates(w->store, w->grid, s, [&](const CoordinateBatch& b) {
          for (std::size_t i = 0; i < b.count; ++i) {
            got.coords.emplace_back(b.coords + 2 * i, b.coords + 2 * i + 2);
            Value v;
            std::memcpy(&v, b.values + i * sizeof(Value), sizeof(Value));
            got.values.push_back(v);
          }
          return true;
        });
        std::size_t k = 0;
        for (const auto& [c, v] : w->model) {
          if (!inside(c, region)) continue;
          ASSERT_LT(k, got.coords.size());
          ASSERT_EQ(got.coords[k], c) << "held " << held << ", element " << k;
          ASSERT_EQ(got.values[k], v) << "held " << held << " at " << coords_text(c);
          ++k;
        }
        ASSERT_EQ(k, got.coords.size());
        const std::size_t reads = w->store.listed_reads - reads_before;
        EXPECT_EQ(w->store.address_reads - by_address_before, any_thread ? reads : 0);
        if (held == std::size_t(16) << 20)  // first: every chunk the region meets, read once
          chunks = reads;
        else if (w == &small)
          EXPECT_EQ(reads, chunks) << "held " << held;
        else
          EXPECT_GE(reads, chunks + (held ? chunks / 2 : chunks - 4)) << "held " << held;
      }
}

// An iteration (a scan per batch, each resuming at the previous batch's `next`) lists the
// index once when the engine may keep memory between calls, once per batch when it must not
// (a store others change); a change in between makes the next resumed scan list anew.
TEST(Coordinates, ResumedScansListTheIndexOnce) {
  const Coords dims{64, 64}, chunk{8, 8};
  for (const std::size_t kept : {std::size_t(0), std::size_t(1) << 20}) {
    Written w(dims, chunk, 2000, 17, kept);
    const SparseEngine& engine = w.engine;
    const ChunkGrid& grid = w.grid;
    MemoryChunkStore& store = w.store;
    Model& model = w.model;
    // One batch per call (max_bytes 1: one chunk each), `change` run before the third call.
    const auto iterate = [&](const std::function<void()>& change) {
      Scanned out;
      Coords from;
      for (std::size_t calls = 0;; ++calls) {
        if (calls == 2) change();
        CoordinateScan s;
        s.region = {whole(dims)};
        s.max_bytes = 1;
        s.from = from;
        bool more = false;
        engine.scan_coordinates(store, grid, s, [&](const CoordinateBatch& b) {
          for (std::size_t i = 0; i < b.count; ++i) out.coords.emplace_back(b.coords + 2 * i, b.coords + 2 * i + 2);
          more = b.next != nullptr;
          if (more) from = *b.next;
          return false;
        });
        if (!more) return std::make_pair(out.coords.size(), calls + 1);
      }
    };
    store.listings = 0;
    const auto [elements, calls] = iterate([] {});
    EXPECT_EQ(elements, model.size());
    EXPECT_GT(calls, 8u);
    EXPECT_EQ(store.listings, kept ? 1u : calls) << kept;
    store.listings = 0;
    const Points one{{63, 63}, {5}};
    const auto after_change = iterate([&] {
      engine.write_coordinates(store, grid, one.coords.data(), 1, bytes_of(one.values));
      apply(model, one, 2, false, false);
    });
    EXPECT_EQ(after_change.first, model.size());
    EXPECT_EQ(store.listings, kept ? 2u : after_change.second) << kept;
  }
}

// 2^31 x 2^31 with 1024 x 1024 chunks: work and memory follow the points, not the extent.
// New values for elements a chunk holds leave its stored selection as it was (only the values
// section is encoded again); a new element changes it.
TEST(Coordinates, UpdatedValuesKeepTheStoredSelection) {
  const Coords dims{40, 30}, chunk{8, 16};
  Written w(dims, chunk, 300, 21);
  const auto section0 = [&](const Bytes& stored) {
    const ChunkHeader h = read_chunk_header(stored.data(), stored.size(), w.engine.params().layout);
    return Bytes(stored.begin() + std::ptrdiff_t(h.size),
                 stored.begin() + std::ptrdiff_t(h.size + h.sections[0].stored_size));
  };
  const auto before = w.store.chunks;
  Points update;
  for (const auto& [c, v] : w.model) {
    if ((c[0] + c[1]) % 3) continue;
    update.coords.insert(update.coords.end(), c.begin(), c.end());
    update.values.push_back(v + 1000);
  }
  w.engine.write_coordinates(w.store, w.grid, update.coords.data(), update.size(), bytes_of(update.values));
  apply(w.model, update, 2, false, false);
  expect_scan_matches(w.engine, w.store, w.grid, w.model, {whole(dims)}, "after updating values");
  ASSERT_EQ(w.store.chunks.size(), before.size());
  std::size_t changed = 0;
  for (const auto& [origin, stored] : w.store.chunks) {
    EXPECT_EQ(section0(stored), section0(before.at(origin))) << coords_text(origin);
    changed += stored != before.at(origin);
  }
  EXPECT_GT(changed, 0u);
  Coords fresh;  // an element no chunk holds yet
  for (std::uint64_t i = 0; fresh.empty(); ++i)
    if (!w.model.count({i / dims[1], i % dims[1]})) fresh = {i / dims[1], i % dims[1]};
  const Points one{{fresh[0], fresh[1]}, {5}};
  w.engine.write_coordinates(w.store, w.grid, one.coords.data(), 1, bytes_of(one.values));
  apply(w.model, one, 2, false, false);
  expect_scan_matches(w.engine, w.store, w.grid, w.model, {whole(dims)}, "after a new element");
  const Coords origin{fresh[0] / chunk[0] * chunk[0], fresh[1] / chunk[1] * chunk[1]};
  if (before.count(origin)) {
    EXPECT_NE(section0(w.store.chunks.at(origin)), section0(before.at(origin)));
  }
}

TEST(Coordinates, HugeExtent) {
  const Coords dims{std::uint64_t(1) << 31, std::uint64_t(1) << 31}, chunk{1024, 1024};
  const SparseEngine engine(test_params(chunk), 0);
  const ChunkGrid grid(dims, chunk);
  MemoryChunkStore store;
  std::mt19937_64 rng(11);
  Model model;
  const Points p = random_points(dims, 20000, rng);
  engine.write_coordinates(store, grid, p.coords.data(), p.size(), bytes_of(p.values));
  apply(model, p, 2, false, false);
  EXPECT_GE(store.chunks.size(), 19000u);
  expect_scan_matches(engine, store, grid, model, {whole(dims)}, "huge");
  const Box band{{0, 0}, {std::uint64_t(1) << 20, dims[1]}};
  expect_scan_matches(engine, store, grid, model, {band}, "huge, a row band");
  // A region of few chunk places in a large index: its places are looked up, the index is
  // listed only in part; boxes sharing places give each chunk once.
  const Box small{{std::uint64_t(1) << 30, std::uint64_t(1) << 29}, {4 * 1024, 3 * 1024 + 1}};
  const Box overlapping{{(std::uint64_t(1) << 30) + 1024, std::uint64_t(1) << 29}, {1024, 2048}};
  Points inside;
  for (std::uint64_t k = 0; k < 50; ++k) {
    inside.coords.push_back(small.start[0] + (k * 997) % small.count[0]);
    inside.coords.push_back(small.start[1] + (k * 1231) % small.count[1]);
    inside.values.push_back(Value(k));
  }
  engine.write_coordinates(store, grid, inside.coords.data(), inside.size(), bytes_of(inside.values));
  apply(model, inside, 2, false, false);
  store.lookups = 0;
  expect_scan_matches(engine, store, grid, model, {small, overlapping}, "huge, a small region");
  EXPECT_GE(scan(engine, store, grid, {small, overlapping}).coords.size(), 50u);
  EXPECT_EQ(store.lookups, 2 * (4u * 4 + 2));  // two scans
  store.lookups = 0;
  expect_scan_matches(engine, store, grid, model, {whole(dims)}, "huge, listed");
  EXPECT_EQ(store.lookups, 0u);
  // A small region's erase and its pieces look its places up.
  store.lookups = 0;
  const std::vector<ChunkPiece> pieces = engine.stored_region_pieces(store, grid, {small, overlapping});
  EXPECT_EQ(store.lookups, 4u * 4 + 2);
  EXPECT_LE(pieces.size(), 18u * 1024);
  engine.erase_region(store, grid, {small, overlapping});
  EXPECT_EQ(store.lookups, 2 * (4u * 4 + 2));
  for (auto it = model.begin(); it != model.end();) it = ::inside(it->first, {small, overlapping}) ? model.erase(it) : std::next(it);
  expect_scan_matches(engine, store, grid, model, {small, overlapping}, "huge, the small region erased");
  engine.erase_coordinates(store, grid, p.coords.data(), p.size() / 2);
  Points half;
  half.coords.assign(p.coords.begin(), p.coords.begin() + std::ptrdiff_t(p.size() / 2 * 2));
  half.values.assign(p.values.begin(), p.values.begin() + std::ptrdiff_t(p.size() / 2));
  apply(model, half, 2, false, true);
  expect_scan_matches(engine, store, grid, model, {whole(dims)}, "huge, after erasing half");
}

TEST(Coordinates, BadInputChangesNothing) {
  const Coords dims{10, 20}, chunk{4, 4};
  const SparseEngine engine(test_params(chunk), 0);
  const ChunkGrid grid(dims, chunk);
  MemoryChunkStore store;
  const std::vector<std::uint64_t> good{1, 1, 2, 2};
  const std::vector<Value> values{1, 2, 3};
  engine.write_coordinates(store, grid, good.data(), 2, bytes_of(values));
  const auto before = store.chunks;
  const std::vector<std::uint64_t> outside{1, 1, 10, 0, 3, 3};
  try {
    engine.write_coordinates(store, grid, outside.data(), 3, bytes_of(values));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("(10, 0) (point 1) is outside the extent (10, 20)"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(engine.erase_coordinates(store, grid, outside.data(), 3), Error);
  EXPECT_EQ(store.chunks, before);
  CoordinateScan s;
  s.region = {Box{{0, 0}, {11, 1}}};
  EXPECT_THROW(engine.scan_coordinates(store, grid, s, [](const CoordinateBatch&) { return true; }), Error);
}

TEST(Coordinates, CorruptChunksAndFailingStores) {
  const Coords dims{16, 16}, chunk{4, 4};
  const SparseEngine engine(test_params(chunk), 0);
  const ChunkGrid grid(dims, chunk);
  MemoryChunkStore store;
  std::vector<std::uint64_t> coords;
  std::vector<Value> values;
  for (std::uint64_t r = 0; r < 16; r += 4)
    for (std::uint64_t c = 0; c < 16; c += 4) {
      coords.insert(coords.end(), {r, c});
      values.push_back(Value(r * 16 + c));
    }
  engine.write_coordinates(store, grid, coords.data(), values.size(), bytes_of(values));
  store.chunks[Coords{4, 8}].back() ^= 1;
  CoordinateScan s;
  s.region = {whole(dims)};
  try {
    engine.scan_coordinates(store, grid, s, [](const CoordinateBatch&) { return true; });
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::corrupt_data);
    EXPECT_NE(std::string(e.what()).find("chunk at (4, 8)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(engine.write_coordinates(store, grid, coords.data(), values.size(), bytes_of(values)), Error);
  try {
    engine.erase_region(store, grid, {Box{{4, 6}, {2, 6}}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::corrupt_data);
    EXPECT_NE(std::string(e.what()).find("chunk at (4, 8)"), std::string::npos) << e.what();
  }
  // A store that refuses its third write: the first two chunks are written, nothing after.
  MemoryChunkStore refusing;
  refusing.writes_left = 2;
  EXPECT_THROW(engine.write_coordinates(refusing, grid, coords.data(), values.size(), bytes_of(values)), Error);
  EXPECT_EQ(refusing.chunks.size(), 2u);
  EXPECT_TRUE(refusing.chunks.count(Coords{0, 0}) && refusing.chunks.count(Coords{0, 4}));
}

// Scans read the next group of chunks, and the next window, while the workers decode (or the
// workers read them, from a store reading by address): a corrupt chunk is still the first in
// chunk order whichever group or window it is in, counted or written, and a failed read is the
// scan's error, with no batch handed out.
TEST(Coordinates, FailuresAheadOfTheDecodeAreReportedInOrder) {
  const Coords dims{512, 512};
  const std::vector<std::vector<Box>> regions{{whole(dims)}, {Box{{5, 0}, {500, 512}}}, {Box{{0, 3}, {512, 2}}}};
  for (const bool any_thread : {false, true})
  for (const std::vector<Box>& region : regions)
    for (const std::size_t held : {std::size_t(16) << 20, std::size_t(0)}) {
      Written w(dims, {64, 64}, 60000, 29);  // 64 chunks of about 940 elements, 8 bands
      w.store.any_thread = any_thread;
      w.store.chunks.at(Coords{192, 0})[200] ^= 1;
      w.store.chunks.at(Coords{384, 0})[200] ^= 1;
      CoordinateScan s;
      s.region = region;
      s.held_bytes = held;
      bool handed = false;
      try {
        w.engine.scan_coordinates(w.store, w.grid, s, [&](const CoordinateBatch&) { return handed = true; });
        FAIL() << "no error";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("chunk at (192, 0)"), std::string::npos) << e.what();
      }
      EXPECT_FALSE(handed);
      Written fresh(dims, {64, 64}, 60000, 29);
      fresh.store.any_thread = any_thread;
      fresh.engine.scan_coordinates(fresh.store, fresh.grid, s, [&](const CoordinateBatch&) { return true; });
      fresh.store.listed_reads_left = fresh.store.listed_reads / 2 + 1;  // a later band's, read ahead
      try {
        fresh.engine.scan_coordinates(fresh.store, fresh.grid, s, [&](const CoordinateBatch&) { return true; });
        FAIL() << "no error";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("the store refused a read"), std::string::npos) << e.what();
      }
    }
}

// Elements an edge chunk holds past the extent (left by writers without the connector, or a
// shrink) are not the dataset's: scans never return them.
TEST(Coordinates, ScansStopAtTheExtent) {
  const Coords chunk{8, 8};
  const SparseEngine engine(test_params(chunk), 0);
  MemoryChunkStore store;
  const ChunkGrid wide(Coords{16, 16}, chunk);
  std::vector<std::uint64_t> coords;
  std::vector<Value> values;
  for (std::uint64_t i = 0; i < 16; ++i) {
    coords.insert(coords.end(), {i, i});
    values.push_back(Value(i));
  }
  engine.write_coordinates(store, wide, coords.data(), values.size(), bytes_of(values));
  const ChunkGrid narrow(Coords{13, 11}, chunk);  // the same chunks under a smaller extent
  Model model;
  for (std::uint64_t i = 0; i < 11; ++i) model[Coords{i, i}] = Value(i);
  expect_scan_matches(engine, store, narrow, model, {whole(Coords{13, 11})}, "smaller extent");
}

// Columns and rows of chunks holding many elements (read from a bitmap of the chunk, met with
// the region's): lists of columns and of rows, overlapping, at ranks 2 and 3.
TEST(Coordinates, ColumnsAndRowsOfFullChunks) {
  const std::vector<std::pair<Coords, Coords>> shapes = {{{200, 150}, {64, 64}}, {{20, 30, 40}, {8, 8, 16}}};
  for (const auto& [dims, chunk] : shapes) {
    std::mt19937_64 rng(dims.size());
    const SparseEngine engine(test_params(chunk, false), 0);
    const ChunkGrid grid(dims, chunk);
    MemoryChunkStore store;
    Model model;
    std::uint64_t n = 1;
    for (std::uint64_t d : dims) n *= d;
    const Points p = random_points(dims, std::size_t(n / 2), rng);
    engine.write_coordinates(store, grid, p.coords.data(), p.size(), bytes_of(p.values));
    apply(model, p, dims.size(), false, false);
    const std::size_t last = dims.size() - 1;
    std::vector<Box> columns, rows;
    for (std::uint64_t c : {std::uint64_t(3), std::uint64_t(17), std::uint64_t(18), dims[last] - 1}) {
      Box b = whole(dims);
      b.start[last] = c, b.count[last] = 1;
      columns.push_back(b);
    }
    for (std::uint64_t r : {std::uint64_t(0), std::uint64_t(5), std::uint64_t(9), dims[0] - 1}) {
      Box b = whole(dims);
      b.start[0] = r, b.count[0] = 1;
      rows.push_back(b);
    }
    std::vector<Box> both = columns;
    both.insert(both.end(), rows.begin(), rows.end());
    expect_scan_matches(engine, store, grid, model, columns, "columns");
    expect_scan_matches(engine, store, grid, model, rows, "rows");
    expect_scan_matches(engine, store, grid, model, both, "rows and columns, overlapping");
  }
}
