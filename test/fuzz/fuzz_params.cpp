// Fuzz target: the structured-chunk filter's cd_values parsers (request and complete forms).
#include <cstdint>
#include <cstring>
#include <vector>

#include "h5sparse/error.hpp"
#include "h5sparse/sparse_layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h5sparse;
  std::vector<unsigned> values(size / 4);
  if (!values.empty()) std::memcpy(values.data(), data, values.size() * 4);
  try {
    if (is_complete_form(values.data(), values.size())) {  // versions 1 and 2
      const SparseParams p = from_cd_values(values.data(), values.size());
      (void)to_cd_values(p);
    } else {
      (void)to_request(parse_request(values));
    }
  } catch (const Error&) {
  }
  return 0;
}
