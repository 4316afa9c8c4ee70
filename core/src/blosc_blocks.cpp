// Mirror of c-blosc 1.21's compute_blocksize() and split_block() (blosc/blosc.c), so that the
// block size forced for several threads is known before compressing.
#include "h5sparse/blosc_blocks.hpp"

#include <blosc.h>

#include <algorithm>

namespace h5sparse {
namespace {

constexpr std::size_t kMinBufferSize = 128;     // c-blosc's MIN_BUFFERSIZE
constexpr std::size_t kMaxSplits = 16;          // c-blosc's MAX_SPLITS (typesize limit of a split)
constexpr std::size_t kL1 = 32 * 1024;          // c-blosc's L1
constexpr std::size_t kMaxSplitBuffer = 1 << 18;  // a split block's size before * typesize
constexpr std::size_t kMinSplitBlock = 1 << 16;
constexpr std::size_t kMaxSplitBlock = 1 << 20;
constexpr std::size_t kMinThreadedBlock = 64 * 1024;  // our floor for blocks shared by threads

// lz4hc, zlib, zstd: c-blosc doubles their automatic blocks ("High Compression Ratio" codecs).
bool high_ratio(BloscCompressor c) {
  return c == BloscCompressor::lz4hc || c == BloscCompressor::zlib || c == BloscCompressor::zstd;
}

bool splits(BloscCompressor c, std::size_t typesize, std::size_t blocksize, BloscSplitMode mode) {
  const bool small_type = typesize <= kMaxSplits && blocksize / typesize >= kMinBufferSize;
  switch (mode) {
    case BloscSplitMode::always: return true;
    case BloscSplitMode::never: return false;
    case BloscSplitMode::automatic:
      return (c == BloscCompressor::blosclz || c == BloscCompressor::snappy) && small_type;
    case BloscSplitMode::forward_compat: return c != BloscCompressor::zstd && small_type;
  }
  return false;
}

std::size_t automatic_base(BloscCompressor c, int clevel) {
  std::size_t b = kL1 * (high_ratio(c) ? 2 : 1);
  switch (clevel) {
    case 0: return b / 4;
    case 1: return b / 2;
    case 2: return b;
    case 3: return b * 2;
    case 4: case 5: return b * 4;
    case 6: case 7: case 8: return b * 8;
    default: return b * 8 * (high_ratio(c) ? 2 : 1);
  }
}

}  // namespace

bool blosc_block_splits(BloscCompressor compressor, std::size_t typesize, std::size_t blocksize,
                        BloscSplitMode mode) {
  return splits(compressor, typesize, blocksize, mode);
}

std::size_t blosc_frame_block_size(BloscCompressor compressor, int clevel, std::size_t typesize,
                                   std::size_t nbytes, std::size_t forced, BloscSplitMode mode) {
  if (typesize == 0 || typesize > BLOSC_MAX_TYPESIZE) typesize = 1;
  if (nbytes < typesize) return 1;
  std::size_t b = nbytes;
  if (forced != 0) {
    b = std::clamp<std::size_t>(forced, kMinBufferSize, BLOSC_MAX_BLOCKSIZE);
  } else if (nbytes >= kL1) {
    b = automatic_base(compressor, clevel);
  }
  if (clevel > 0 && splits(compressor, typesize, b, mode)) {
    b = std::clamp(std::min(b, kMaxSplitBuffer) * typesize, kMinSplitBlock, kMaxSplitBlock);
  }
  b = std::min(b, nbytes);
  if (b > typesize) b = b / typesize * typesize;
  return b;
}

std::size_t blosc_block_size_for_threads(BloscCompressor compressor, int clevel, std::size_t typesize,
                                         std::size_t nbytes, int nthreads, BloscSplitMode mode) {
  if (nthreads <= 1 || clevel <= 0) return 0;  // clevel 0 copies: nothing to share
  if (typesize == 0 || typesize > BLOSC_MAX_TYPESIZE) typesize = 1;
  const std::size_t wanted_blocks = 2 * std::size_t(nthreads);
  const std::size_t automatic = blosc_frame_block_size(compressor, clevel, typesize, nbytes, 0, mode);
  if ((nbytes + automatic - 1) / automatic >= wanted_blocks) return 0;
  const std::size_t target = nbytes / wanted_blocks / typesize * typesize;
  if (target < kMinThreadedBlock) return 0;
  // A split codec's forced size is per byte stream: c-blosc multiplies it by the typesize.
  const std::size_t per_stream = target / typesize;
  const std::size_t forced =
      clevel > 0 && splits(compressor, typesize, per_stream, mode) ? per_stream : target;
  return forced;
}

}  // namespace h5sparse
