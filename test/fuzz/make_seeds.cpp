// Writes valid seed inputs for every fuzz target into DIR/<target>/ (run at build time, so
// the corpus never goes stale when the format changes).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "h5sparse/codecs.hpp"
#include "h5sparse/filter_ids.hpp"
#include "h5sparse/sparse_layout.hpp"
#include "h5sparse/structured_chunk.hpp"
#include "h5sparse/var_chunk.hpp"
#include "fuzz_pipelines.hpp"

using namespace h5sparse;

ChunkLayout fuzz_var_layout(std::uint8_t selector);  // fuzz_var_chunk.cpp

static void put(const std::filesystem::path& dir, const std::string& name, std::uint8_t prefix, const Bytes& body) {
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary);
  out.put(char(prefix));
  out.write(reinterpret_cast<const char*>(body.data()), std::streamsize(body.size()));
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::filesystem::path root = argv[1];
  // Selections of a 1x1x1 ... chunk: prefix byte 0 -> dims (1,1,1); 25 -> (13? see target).
  for (std::uint8_t prefix : {std::uint8_t(0), std::uint8_t(64), std::uint8_t(200)}) {
    const std::vector<std::uint64_t> dims = {std::uint64_t(prefix % 13 + 1), std::uint64_t(prefix / 13 % 7 + 1),
                                             std::uint64_t(prefix % 5 + 1)};
    std::uint64_t n = dims[0] * dims[1] * dims[2];
    for (int pattern = 0; pattern < 4; ++pattern) {
      ChunkSelection s(n);
      for (std::uint64_t i = 0; i < n; ++i)
        if ((pattern == 1 && i % 3 == 0) || (pattern == 2 && i < n / 2) || pattern == 3) s.set(i);
      for (auto e : {SelectionEncoding::bitmap, SelectionEncoding::offsets, SelectionEncoding::runs,
                     SelectionEncoding::rice_offsets, SelectionEncoding::elias_fano}) {
        if (e == SelectionEncoding::elias_fano && s.none()) continue;  // the empty tag's
        put(root / "selection", "p" + std::to_string(prefix) + "_" + std::to_string(pattern) + "_" +
                                    std::to_string(int(e)), prefix, encode_selection_as(e, s, dims));
      }
    }
  }
  for (std::uint8_t prefix = 0; prefix < 16; ++prefix) {
    ChunkLayout layout;
    layout.dims = {8, 6};
    layout.element_size = 4;
    layout.selection_pipeline = fuzz_pipeline(prefix);
    layout.values_pipeline = fuzz_pipeline(prefix >> 2);
    StructuredChunk c = StructuredChunk::empty(layout);
    for (std::uint64_t i = 0; i < 48; i += 1 + prefix % 3) {
      c.defined.set(i);
      for (int b = 0; b < 4; ++b) c.values.push_back(std::uint8_t(i * 7 + b));
    }
    put(root / "chunk", "c" + std::to_string(prefix), prefix, encode_chunk(c, layout));
  }
  // Variable-length chunks: every layout fuzz_var_chunk selects, NULL, empty and longer values.
  for (unsigned prefix = 0; prefix < 128; prefix += 3) {
    const ChunkLayout layout = fuzz_var_layout(std::uint8_t(prefix));
    ChunkVarElements c;
    const std::uint8_t text[] = "variable-length payloads, repeated repeated";
    for (std::uint32_t i = 0; i < 48; i += 1 + prefix % 4) {
      VarPayload slots[2] = {{text, i % 40, i % 5 == 0}, {text, 4 * (i % 9), false}};
      if (slots[0].null) slots[0].size = 0;
      c.offsets.push_back(i);
      c.values.append(layout.var, text, slots);
    }
    put(root / "var_chunk", "v" + std::to_string(prefix), std::uint8_t(prefix), encode_var_chunk(c, layout));
  }
  SparseParams p;
  p.layout.dims = {8, 6};
  p.layout.element_size = 4;
  p.layout.values_pipeline = fuzz_pipeline(3);
  SparseParams var = p;  // parameters version 2: two variable-length members
  var.layout = fuzz_var_layout(5);
  var.layout.dims = {8, 6};
  var.layout.element_size = kVarCarrierSize;
  var.slot_kinds.assign(var.layout.var.slots(), SlotKind::sequence);
  var.true_type = {1, 2, 3, 4, 5};
  const std::vector<unsigned> complete = to_cd_values(p), request = to_request(p), complete_var = to_cd_values(var);
  std::filesystem::create_directories(root / "params");
  for (const auto* v : {&complete, &request, &complete_var}) {
    Bytes raw(v->size() * 4);
    std::memcpy(raw.data(), v->data(), raw.size());
    const char* name = v == &complete ? "complete" : v == &request ? "request" : "complete_v2";
    std::ofstream out(root / "params" / name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(raw.data()), std::streamsize(raw.size()));
  }
  Bytes data(2000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::uint8_t(i / 7);
  Bytes packed(blosc_compress_bound(data.size()));
  packed.resize(blosc_compress(packed.data(), packed.size(), data.data(), data.size(), BloscParams{}));
  put(root / "codecs", "blosc", 0, packed);
  packed.assign(data.size(), 0);
  packed.resize(lzf_compress(packed.data(), packed.size(), data.data(), data.size()));
  put(root / "codecs", "lzf", 1, packed);
  packed.assign(data.size() + 64, 0);
  packed.resize(deflate_compress(packed.data(), packed.size(), data.data(), data.size(), 6));
  put(root / "codecs", "deflate", 2, packed);
  // Our Blosc wrapper against c-blosc's verdicts (fuzz_blosc_decoder): a capacity/threads byte, then a
  // frame of every codec and shuffle, some of several blocks.
  Bytes wide(70000);
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = std::uint8_t((i * i) >> 9 ^ (i % 3 == 0 ? i : 0));
  for (int codec = 0; codec < 15; ++codec) {  // compressor x shuffle
    const BloscParams p{1 + codec % 9, Shuffle(codec % 3), BloscCompressor(codec / 3 == 3 ? 5 : codec / 3 == 4 ? 4 : codec / 3),
                        std::size_t(codec % 2 == 0 ? 4 : 8), 1};
    const Bytes& source = codec % 4 == 0 ? wide : data;
    Bytes frame(blosc_compress_bound(source.size()));
    frame.resize(blosc_compress(frame.data(), frame.size(), source.data(), source.size(), p));
    put(root / "blosc_decoder", "c" + std::to_string(codec), std::uint8_t(codec * 37), frame);
  }
  return 0;
}
