// Fuzz target: our Blosc encoder (blosc_block_encoder.hpp) against c-blosc's own. Input: six
// bytes of parameters (compressor and shuffle, clevel, typesize, forced block size, output
// capacity), then the data. Property: the same return value and the same frame, byte for byte.
#include <blosc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "h5sparse/blosc_block_encoder.hpp"
#include "h5sparse/codecs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h5sparse;
  constexpr std::size_t kParams = 6;
  if (size < kParams) return 0;
  static const BloscCompressor kCompressors[] = {BloscCompressor::zstd, BloscCompressor::zlib, BloscCompressor::lz4hc,
                                                 BloscCompressor::lz4};
  BloscParams p;
  p.compressor = kCompressors[data[0] % 4];
  p.shuffle = Shuffle(data[0] / 4 % 3);
  p.clevel = data[1] % 10;
  p.typesize = data[2] == 0 ? 300 : data[2];  // 0: above c-blosc's limit of 255
  const std::size_t forced = data[3] == 0 ? 0 : std::size_t(data[3]) * 61;
  const std::uint8_t* src = data + kParams;
  const std::size_t n = size - kParams;
  // capacity: the copied frame's size, or a fraction of it down to the header and below
  const std::size_t full = n + BLOSC_MAX_OVERHEAD;
  const std::size_t capacity = data[4] < 128 ? full : std::size_t(data[4] - 128) * full / 128 + data[5] % 8;
  if (p.compressor == BloscCompressor::zstd && p.clevel == 9 && n > 4096) return 0;  // zstd level 22: too slow

  std::vector<std::uint8_t> ours(capacity + 1), theirs(capacity + 64);
  const int a = blosc_encode_frame(ours.data(), capacity, src, n, p, forced);
  const int b = blosc_compress_ctx(p.clevel, int(p.shuffle), p.typesize, n, src, theirs.data(), capacity,
                                   blosc_compressor_name(p.compressor), forced, 1);
  if (a != b || (a > 0 && std::memcmp(ours.data(), theirs.data(), std::size_t(a)) != 0)) std::abort();
  return 0;
}
