// Fuzz target: the section 0 decoder. Property: any input either decodes to a selection that
// re-encodes and decodes to itself, or throws Error(corrupt_data); nothing else, no overrun.
// Rice offsets (tag 6) also agree with a bit-at-a-time reader of the format: the same offsets,
// or both refusing. The offset-list decoder (coordinate I/O) agrees with the bitmap decoder:
// the same elements, or both refusing; and the list re-encodes to the same bytes. Reads of
// ranges of a valid selection give exactly its elements there, with their ranks.
#include <cstdint>
#include <cstdlib>

#include "h5sparse/error.hpp"
#include "h5sparse/selection_codec.hpp"
#include "rice_reference.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h5sparse;
  if (size < 2) return 0;
  // First byte picks the chunk shape; the rest is the encoded selection.
  const std::vector<std::uint64_t> dims = {std::uint64_t(data[0] % 13 + 1), std::uint64_t(data[0] / 13 % 7 + 1),
                                           std::uint64_t(data[0] % 5 + 1)};
  std::optional<std::vector<std::uint64_t>> rice;
  if (data[1] == std::uint8_t(SelectionEncoding::rice_offsets))
    rice = h5sparse_test::reference_rice_offsets(data + 1, size - 1, dims[0] * dims[1] * dims[2]);
  try {
    const ChunkSelection s = decode_selection(data + 1, size - 1, dims);
    if (data[1] == std::uint8_t(SelectionEncoding::rice_offsets)) {
      if (!rice || rice->size() != s.defined_count()) std::abort();
      for (std::uint64_t i : *rice)
        if (!s.test(i)) std::abort();
    }
    const Bytes again = encode_selection(s, dims);
    if (!(decode_selection(again.data(), again.size(), dims) == s)) std::abort();
    std::vector<std::uint32_t> offsets;
    decode_selection_offsets(data + 1, size - 1, dims, offsets);
    if (!(selection_of(offsets.data(), offsets.size(), s.element_count()) == s) ||
        offsets.size() != s.defined_count())
      std::abort();
    if (encode_selection(offsets.data(), offsets.size(), dims) != again) std::abort();
    // Ranges of it: a third, a line and single elements, as coordinate reads ask.
    const std::uint64_t n = s.element_count();
    std::vector<OffsetRange> ranges{{0, n / 3}, {n / 2, n / 2 + 1}};
    if (n / 2 + 2 < n) ranges.push_back({n / 2 + 2, n - 1});
    std::vector<std::uint32_t> inside;
    std::vector<RankRun> runs;
    if (decode_selection_in(data + 1, size - 1, dims, ranges, inside, runs) != s.defined_count()) std::abort();
    std::vector<std::uint64_t> ranks;
    for (const RankRun& run : runs)
      for (std::uint64_t r = run.rank; r < run.rank + run.count; ++r) ranks.push_back(r);
    std::size_t k = 0;
    for (std::size_t i = 0; i < offsets.size(); ++i)
      for (const OffsetRange& r : ranges)
        if (offsets[i] >= r.first && offsets[i] < r.end) {
          if (k >= inside.size() || inside[k] != offsets[i] || ranks[k] != i) std::abort();
          ++k;
        }
    if (k != inside.size()) std::abort();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::corrupt_data) std::abort();
    if (rice) std::abort();  // the reference reads what the core refused
    std::vector<std::uint32_t> offsets;
    try {
      decode_selection_offsets(data + 1, size - 1, dims, offsets);
      std::abort();  // the list decoder took what the bitmap decoder refused
    } catch (const Error& e2) {
      if (e2.code() != ErrorCode::corrupt_data) std::abort();
    }
  }
  return 0;
}
