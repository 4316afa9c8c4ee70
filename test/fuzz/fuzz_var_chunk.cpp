// Fuzz target: the variable-length chunk decoder (format version 3) with every section
// pipeline kind. Property: any input either throws our Error or decodes to elements that are
// consistent (offsets ascending, parts and payloads adding up) and encode to a chunk that
// decodes to the same elements again.
#include <cstdint>
#include <cstdlib>

#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"
#include "h5sparse/var_chunk.hpp"
#include "fuzz_pipelines.hpp"

#ifndef H5SPARSE_FUZZ_LAYOUT_ONLY
namespace {

bool same(const h5sparse::ChunkVarElements& a, const h5sparse::ChunkVarElements& b) {
  return a.offsets == b.offsets && a.values.fixed == b.values.fixed && a.values.ends == b.values.ends &&
         a.values.null == b.values.null && a.values.data == b.values.data;
}

}  // namespace
#endif

// The layout a seed's first byte selects (make_seeds.cpp writes seeds with the same choice).
h5sparse::ChunkLayout fuzz_var_layout(std::uint8_t selector) {
  using namespace h5sparse;
  ChunkLayout layout;
  layout.dims = {8, 6};
  layout.element_size = 16;
  layout.var = (selector & 1) ? VarType{3, {1, 4}} : VarType{0, {1}};  // compound, or string
  layout.selection_pipeline = fuzz_pipeline((selector >> 1) & 1);
  layout.values_pipeline = fuzz_pipeline((selector >> 2) & 1);
  layout.lengths_pipeline = fuzz_pipeline((selector >> 3) & 3);
  layout.data_pipeline = fuzz_pipeline((selector >> 5) & 3);
  return layout;
}

#ifndef H5SPARSE_FUZZ_LAYOUT_ONLY
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h5sparse;
  if (size < 1) return 0;
  const ChunkLayout layout = fuzz_var_layout(data[0]);
  ChunkVarElements chunk;
  try {
    chunk = decode_var_chunk(data + 1, size - 1, layout);
  } catch (const Error&) {
    return 0;
  }
  try {
    check_var_values(chunk.values, chunk.offsets.size(), layout.var);
    for (std::size_t i = 1; i < chunk.offsets.size(); ++i)
      if (chunk.offsets[i] <= chunk.offsets[i - 1]) std::abort();
    const Bytes again = encode_var_chunk(chunk, layout);
    if (!same(decode_var_chunk(again.data(), again.size(), layout), chunk)) std::abort();
  } catch (const Error&) {
    std::abort();  // what decoded must be consistent and encode again
  }
  return 0;
}
#endif
