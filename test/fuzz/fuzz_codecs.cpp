// Fuzz target: the byte codecs' decoders (blosc frame, lzf stream, deflate stream), which see
// stored chunks straight from files. Property: throw our Error or decode within bounds.
#include <cstdint>

#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h5sparse;
  if (size < 1) return 0;
  const std::uint8_t* payload = data + 1;
  const std::size_t n = size - 1;
  Bytes out(4096);
  try {
    switch (data[0] % 3) {
      case 0: {
        const std::size_t decoded = blosc_decoded_size(payload, n);
        if (decoded <= out.size()) blosc_decompress(out.data(), out.size(), payload, n, 1);
        break;
      }
      case 1:
        lzf_decompress(out.data(), out.size(), payload, n);
        break;
      default:
        (void)deflate_decompress(payload, n, 64, 1 << 16);
    }
  } catch (const Error&) {
  }
  return 0;
}
