// Fuzz target: the structured chunk decoder with every section pipeline kind. Property: any
// input either decodes to values consistent with its selection or throws our Error; the
// element-list decoder (coordinate I/O) gives the same elements and values, or refuses too;
// a count the chunk states without decoding is the decoded count.
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"
#include "h5sparse/structured_chunk.hpp"
#include "fuzz_pipelines.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h5sparse;
  if (size < 1) return 0;
  ChunkLayout layout;
  layout.dims = {8, 6};
  layout.element_size = 4;
  layout.selection_pipeline = fuzz_pipeline(data[0]);
  layout.values_pipeline = fuzz_pipeline(data[0] >> 2);
  bool decoded = false;
  StructuredChunk c;
  try {
    c = decode_chunk(data + 1, size - 1, layout);
    if (c.values.size() != c.defined.defined_count() * 4) std::abort();
    decoded = true;
  } catch (const Error&) {
  }
  try {
    const ChunkElements e = decode_chunk_elements(data + 1, size - 1, layout);
    if (!decoded || e.values != c.values ||
        !(selection_of(e.offsets.data(), e.offsets.size(), c.defined.element_count()) == c.defined))
      std::abort();
  } catch (const Error&) {
    if (decoded) std::abort();
  }
  try {  // the count a chunk states, read without decoding it, is the decoded one
    const std::optional<std::uint64_t> stated = stated_element_count(data + 1, size - 1, layout);
    if (stated && decoded && *stated != c.defined.defined_count()) std::abort();
  } catch (const Error&) {
  }
  return 0;
}
