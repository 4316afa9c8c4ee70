// encode_coordinates (chunks made away from the file) against write_coordinates into a store:
// the same bytes, chunk for chunk, over what is stored already; an SWMR writer's rule; bad input.
#include <gtest/gtest.h>

#include <random>

#include "h5sparse/engine/chunk_encoder.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "memory_chunk_store.hpp"

using namespace h5sparse;

namespace {

struct Points {
  std::vector<std::uint64_t> coords;
  std::vector<TestValue> values;
};

Points random_points(const Coords& dims, std::size_t n, std::mt19937_64& rng) {
  Points p;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint64_t d : dims) p.coords.push_back(rng() % d);
    p.values.push_back(TestValue(rng() % 4 == 0 ? kTestFill : rng() % 1000));
  }
  return p;
}

const std::uint8_t* bytes_of(const Points& p) { return reinterpret_cast<const std::uint8_t*>(p.values.data()); }

// The encoder's chunks as a store's map.
std::map<Coords, Bytes> as_map(const std::vector<ChunkAt>& chunks) {
  std::map<Coords, Bytes> m;
  for (const ChunkAt& c : chunks) m[c.origin] = Bytes(c.chunk.bytes.begin(), c.chunk.bytes.end());
  return m;
}

std::vector<ChunkAt> as_stored(const std::map<Coords, Bytes>& m) {
  std::vector<ChunkAt> out;
  for (const auto& [origin, bytes] : m) out.push_back(ChunkAt{origin, StoredChunk{RawBytes(bytes.begin(), bytes.end()), 0}});
  return out;
}

TEST(ChunkEncoder, MakesTheChunksAWriteStoresOverWhatIsStored) {
  std::mt19937_64 rng(7);
  for (const bool fill_is_undefined : {false, true}) {
    const Coords dims{37, 50}, chunk{8, 16};
    const SparseParams params = test_params(chunk, fill_is_undefined);
    const ChunkGrid grid(dims, chunk);
    MemoryChunkStore file;
    std::map<Coords, Bytes> encoded;  // what the encoder's chunks make of the same writes
    for (int round = 0; round < 3; ++round) {
      const Points p = random_points(dims, 150, rng);
      SparseEngine(params, 0).write_coordinates(file, grid, p.coords.data(), p.values.size(), bytes_of(p));
      const std::vector<ChunkAt> stored = as_stored(encoded);
      for (const auto& [origin, bytes] : as_map(encode_coordinates({params, dims, stored}, p.coords.data(),
                                                                     p.values.size(), bytes_of(p))))
        encoded[origin] = bytes;
    }
    EXPECT_FALSE(encoded.empty());
    EXPECT_EQ(encoded, file.chunks) << "fill_is_undefined " << fill_is_undefined;
  }
}

TEST(ChunkEncoder, GivesOnlyTheChunksTheElementsTouchInRowMajorOrder) {
  const Coords dims{64, 64}, chunk{16, 16};
  const SparseParams params = test_params(chunk);
  const std::vector<std::uint64_t> coords{40, 3, 1, 60, 2, 2};
  const std::vector<TestValue> values{1, 2, 3};
  MemoryChunkStore earlier;  // a chunk the elements do not touch is not given back
  const std::uint64_t other[] = {63, 63};
  SparseEngine(params, 0).write_coordinates(earlier, ChunkGrid(dims, chunk), other, 1,
                                            reinterpret_cast<const std::uint8_t*>(values.data()));
  const std::vector<ChunkAt> stored = as_stored(earlier.chunks);
  const std::vector<ChunkAt> out = encode_coordinates({params, dims, stored}, coords.data(), 3,
                                                      reinterpret_cast<const std::uint8_t*>(values.data()));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].origin, (Coords{0, 0}));
  EXPECT_EQ(out[1].origin, (Coords{0, 48}));
  EXPECT_EQ(out[2].origin, (Coords{32, 0}));
  for (const ChunkAt& c : out) EXPECT_EQ(c.chunk.filter_mask, 0u);
}

TEST(ChunkEncoder, AnSwmrWritersRewriteNeverKeepsItsSize) {
  const Coords dims{16}, chunk{16};
  const SparseParams params = test_params(chunk);
  const std::vector<std::uint64_t> coords{3};
  const TestValue first = 10, second = 11;  // a new value only: the same size unless moved
  const auto* v1 = reinterpret_cast<const std::uint8_t*>(&first);
  const auto* v2 = reinterpret_cast<const std::uint8_t*>(&second);
  const std::vector<ChunkAt> none;
  const std::vector<ChunkAt> once = encode_coordinates({params, dims, none}, coords.data(), 1, v1);
  const std::vector<ChunkAt> in_place = encode_coordinates({params, dims, once}, coords.data(), 1, v2);
  const std::vector<ChunkAt> moved = encode_coordinates({params, dims, once, true}, coords.data(), 1, v2);
  EXPECT_EQ(in_place[0].chunk.bytes.size(), once[0].chunk.bytes.size());
  EXPECT_NE(moved[0].chunk.bytes.size(), once[0].chunk.bytes.size());
}

TEST(ChunkEncoder, RefusesBadInputBeforeGivingAnything) {
  const Coords dims{10, 10}, chunk{4, 4};
  const SparseParams params = test_params(chunk);
  const std::vector<std::uint64_t> outside{1, 1, 10, 0};
  const std::vector<TestValue> values{1, 2};
  const auto* v = reinterpret_cast<const std::uint8_t*>(values.data());
  const std::vector<ChunkAt> none;
  try {
    encode_coordinates({params, dims, none}, outside.data(), 2, v);
    FAIL() << "a coordinate outside the extent was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("(10, 0)"), std::string::npos) << e.what();
  }
  const std::vector<std::uint64_t> inside{1, 1};
  const std::vector<ChunkAt> corrupt{ChunkAt{{0, 0}, StoredChunk{RawBytes{2, 0, 0, 0, 9}, 0}}};
  try {
    encode_coordinates({params, dims, corrupt}, inside.data(), 1, v);
    FAIL() << "a corrupt stored chunk was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::corrupt_data);
    EXPECT_NE(std::string(e.what()).find("(0, 0)"), std::string::npos) << e.what();
  }
  const std::vector<ChunkAt> twice{ChunkAt{{0, 0}, {}}, ChunkAt{{0, 0}, {}}};
  EXPECT_THROW(encode_coordinates({params, dims, twice}, inside.data(), 1, v), Error);
  EXPECT_THROW(encode_coordinates({params, Coords{10}, none}, inside.data(), 1, v), Error);
}

}  // namespace
