// Fuzz target: our BloscLZ compressor (blosclz_encoder.hpp, through blosc_encode_frame) against
// c-blosc's blosc_compress_ctx with "blosclz". Input: four bytes of parameters (clevel and
// shuffle, typesize 1-16, forced block size, output capacity), then the data. Small forced
// blocks make many short streams, where BloscLZ's probe, minimum match and limits decide.
// Property: the same return value and the same frame, byte for byte.
#include <blosc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "h5sparse/blosc_block_encoder.hpp"
#include "h5sparse/codecs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h5sparse;
  constexpr std::size_t kParams = 4;
  if (size < kParams) return 0;
  BloscParams p;
  p.compressor = BloscCompressor::blosclz;
  p.clevel = data[0] % 10;
  p.shuffle = Shuffle(data[0] / 10 % 3);
  p.typesize = 1 + data[1] % 16;
  const std::size_t forced = data[2] < 64 ? 0 : std::size_t(data[2]) * 29;
  const std::uint8_t* src = data + kParams;
  const std::size_t n = size - kParams;
  const std::size_t full = n + BLOSC_MAX_OVERHEAD;
  const std::size_t capacity = data[3] < 128 ? full : std::size_t(data[3] - 127) * full / 128;

  std::vector<std::uint8_t> ours(capacity + 1), theirs(capacity + 64);
  const int a = blosc_encode_frame(ours.data(), capacity, src, n, p, forced);
  const int b = blosc_compress_ctx(p.clevel, int(p.shuffle), p.typesize, n, src, theirs.data(), capacity, "blosclz",
                                   forced, 1);
  if (a != b || (a > 0 && std::memcmp(ours.data(), theirs.data(), std::size_t(a)) != 0)) std::abort();
  return 0;
}
