// Blosc frames shared between threads; the frame layout is c-blosc 1.x's (blosc/blosc.c):
//   [0] format version 2  [1] codec format version  [2] flags  [3] typesize
//   [4..8) decoded bytes  [8..12) block size  [12..16) frame bytes   (little endian int32)
//   [16..16 + 4 * nblocks) each block's offset from the frame's start, then the blocks.
// Flags: 0x01 byte shuffle, 0x02 copied (no blocks, no offsets), 0x04 bit shuffle, 0x08
// reserved (a reader rejects it), 0x10 blocks not split into per-byte streams, bits 5-7 codec.
#include "h5sparse/blosc_threaded.hpp"

#include <blosc.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "h5sparse/blosc_block_decoder.hpp"
#include "h5sparse/blosc_block_encoder.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/worker_pool.hpp"

namespace h5sparse {
namespace {

constexpr std::size_t kHeader = 16;
constexpr std::uint8_t kCopied = 0x02;
constexpr std::size_t kMinShare = 128 * 1024;  // decoded bytes per thread, at least
constexpr int kMaxParts = 64;

std::int64_t read32(const std::uint8_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);  // c-blosc's sw32_ on little-endian hosts
  return v;
}

void write32(std::uint8_t* p, std::size_t value) {
  const auto v = std::int32_t(value);
  std::memcpy(p, &v, 4);
}

// How many threads share `nblocks` blocks of a `nbytes` buffer.
int parts_for(int nthreads, std::size_t nblocks, std::size_t nbytes) {
  std::size_t parts = std::min<std::size_t>({std::size_t(nthreads), nblocks, nbytes / kMinShare,
                                             std::size_t(kMaxParts)});
  return int(parts);
}

}  // namespace

bool blosc_decode_shared(const BloscFrame& frame, std::uint8_t* dst, int nthreads) {
  if (nthreads < 2 || frame.copied()) return false;
  const int parts = parts_for(nthreads, frame.nblocks, frame.nbytes);
  if (parts < 2) return false;
  // Each part takes the next block not taken yet and decodes it from the frame straight into
  // its place in dst, until none is left: a helper that wakes late (a decode of a 1 MiB chunk
  // is a few hundred microseconds, a wake-up on this VM tens) finds its blocks done by the
  // others instead of holding them up.
  std::atomic<std::size_t> next{0};
  std::array<BloscBlockStatus, kMaxParts> status{};
  auto decode = [&](int t) {
    BloscBlockStatus result = BloscBlockStatus::ok;
    for (std::size_t j = 0; result == BloscBlockStatus::ok && (j = next.fetch_add(1, std::memory_order_relaxed)) <
                                                                  frame.nblocks;) {
      result = blosc_decode_blocks(frame, dst, j, j + 1);
    }
    status[t] = result;
  };
  run_shared(parts, decode);
  for (int t = 0; t < parts; ++t) blosc_throw_unless_ok(status[t]);
  return true;
}

bool blosc_decompress_threaded(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                               std::size_t src_size, int nthreads) {
  if (nthreads < 2) return false;
  const std::optional<BloscFrame> frame = blosc_read_frame(src, src_size, dst_capacity);
  return frame && blosc_decode_shared(*frame, dst, nthreads);
}

std::optional<std::size_t> blosc_compress_threaded(std::uint8_t* dst, std::size_t dst_capacity,
                                                   const std::uint8_t* src, std::size_t src_size,
                                                   const BloscParams& params, std::size_t forced,
                                                   std::size_t blocksize) {
  if (params.nthreads < 2 || params.clevel <= 0 || blocksize == 0 || src_size > std::size_t(BLOSC_MAX_BUFFERSIZE)) {
    return std::nullopt;
  }
  const std::size_t nblocks = (src_size + blocksize - 1) / blocksize;
  const int threads = parts_for(params.nthreads, nblocks, src_size);
  // The threads take pieces as they come free (a block each, up to kMaxParts pieces), not a
  // fixed half each: blocks of one chunk take unequal times (halves of a `field` chunk 5-7% apart)
  // and a worker starts 70 us or more after the caller. A short last block rides with the
  // piece before it, as a frame of its own would get a block size of its own.
  const std::size_t whole = src_size / blocksize;
  const int pieces = int(std::min<std::size_t>(whole, kMaxParts));
  if (threads < 2 || pieces < 2) return std::nullopt;
  auto first = [&](int t) { return t == pieces ? nblocks : std::size_t(t) * whole / std::size_t(pieces); };
  // Piece 0 is compressed in place, `shift` bytes in: the joined frame's offset table is that
  // much longer than piece 0's, so piece 0's blocks are already where the joined frame wants them.
  const std::size_t blocks0 = first(1);
  const std::size_t shift = 4 * (nblocks - blocks0);
  if (dst_capacity <= shift + kHeader) return std::nullopt;

  // Pieces 1.. go to scratch buffers of the calling thread (kept mapped between calls), big
  // enough that c-blosc never falls back to a copied frame: every stream of every block costs
  // at most its raw size plus a 4-byte length, and a block has at most 16 streams.
  thread_local std::vector<std::vector<std::uint8_t>> caller_scratch;
  std::vector<std::vector<std::uint8_t>>& scratch = caller_scratch;  // named here: workers see the caller's
  if (scratch.size() < std::size_t(pieces)) scratch.resize(std::size_t(pieces));
  std::array<std::size_t, kMaxParts + 1> begin{};
  for (int t = 0; t <= pieces; ++t) begin[t] = std::min(first(t) * blocksize, src_size);
  for (int t = 1; t < pieces; ++t) {
    const std::size_t need = begin[t + 1] - begin[t] + kHeader + (first(t + 1) - first(t)) * 4 * (1 + 16) + 64;
    if (scratch[t].size() < need) scratch[t].resize(need);
  }

  std::array<int, kMaxParts> sizes{};
  std::atomic<int> next{0};
  auto compress = [&](int) {
    for (int t; (t = next.fetch_add(1, std::memory_order_relaxed)) < pieces;) {
      std::uint8_t* out = t == 0 ? dst + shift : scratch[t].data();
      const std::size_t capacity = t == 0 ? dst_capacity - shift : scratch[t].size();
      sizes[t] = blosc_compress_frame(out, capacity, src + begin[t], begin[t + 1] - begin[t], params, forced);
    }
  };
  run_shared(threads, compress);

  // Every piece must be a frame of blocks (not copied) with the predicted block size and the
  // same flags, or the pieces do not join.
  const std::uint8_t* head0 = dst + shift;
  const bool copied0 = sizes[0] > 0 && (head0[2] & kCopied) != 0;
  std::size_t total = shift;
  for (int t = 0; t < pieces; ++t) {
    H5SPARSE_FAIL_IF(sizes[t] < 0, ErrorCode::codec_failure,
            "blosc: compression failed, code " + std::to_string(sizes[t]));
    if (t == 0 && (sizes[0] == 0 || copied0)) {
      // Piece 0 did not fit where the joined frame puts it, so the joined frame cannot fit
      // either; c-blosc would then answer with a copied frame if that fits, else 0.
      if (dst_capacity < src_size + BLOSC_MAX_OVERHEAD) return std::size_t(0);
      return std::nullopt;
    }
    const std::uint8_t* head = t == 0 ? head0 : scratch[t].data();
    if (sizes[t] < int(kHeader) || std::memcmp(head, head0, 4) != 0 ||
        read32(head + 4) != std::int64_t(begin[t + 1] - begin[t]) || read32(head + 8) != std::int64_t(blocksize) ||
        read32(head + 12) != sizes[t]) {
      return std::nullopt;
    }
    total += std::size_t(sizes[t]);
  }
  // Pieces 1.. lose their headers and tables; piece 0's table grows by `shift`.
  for (int t = 1; t < pieces; ++t) total -= kHeader + 4 * (first(t + 1) - first(t));
  if (total > dst_capacity || total > std::size_t(BLOSC_MAX_BUFFERSIZE) + BLOSC_MAX_OVERHEAD) {
    if (dst_capacity < src_size + BLOSC_MAX_OVERHEAD) return std::size_t(0);
    return std::nullopt;
  }

  // Join: pieces 1.. after piece 0's blocks, then one header and one offset table in front.
  std::vector<std::uint8_t> table(kHeader + 4 * nblocks);
  std::memcpy(table.data(), head0, kHeader);
  write32(table.data() + 4, src_size);
  write32(table.data() + 12, total);
  std::size_t block = 0;
  for (std::size_t j = 0; j < blocks0; ++j, ++block) {
    write32(table.data() + kHeader + 4 * block, std::size_t(read32(head0 + kHeader + 4 * j)) + shift);
  }
  std::size_t at = shift + std::size_t(sizes[0]);
  for (int t = 1; t < pieces; ++t) {
    const std::uint8_t* frame = scratch[t].data();
    const std::size_t blocks = first(t + 1) - first(t);
    const std::size_t data_at = kHeader + 4 * blocks;
    for (std::size_t j = 0; j < blocks; ++j, ++block) {
      write32(table.data() + kHeader + 4 * block, std::size_t(read32(frame + kHeader + 4 * j)) - data_at + at);
    }
    std::memcpy(dst + at, frame + data_at, std::size_t(sizes[t]) - data_at);
    at += std::size_t(sizes[t]) - data_at;
  }
  std::memcpy(dst, table.data(), table.size());
  return total;
}

}  // namespace h5sparse
