// c-blosc 1.21.5's decompressor (blosc/blosc.c: blosc_run_decompression_with_context,
// initialize_decompress_func, serial_blosc, blosc_d and the codec wrappers; blosc/blosclz.c:
// blosclz_decompress; blosc/shuffle.c: the bit unshuffle rule) with codec state that lives as
// long as the thread; see blosc_block_decoder.hpp for why. The frame layout is documented in
// blosc_threaded.cpp.
#include "h5sparse/blosc_block_decoder.hpp"

#include <blosc.h>
#include <libdeflate.h>
#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

constexpr std::size_t kHeader = BLOSC_MIN_HEADER_LENGTH;  // also c-blosc's BLOSC_MAX_OVERHEAD
constexpr std::uint8_t kByteShuffle = BLOSC_DOSHUFFLE;
constexpr std::uint8_t kCopied = BLOSC_MEMCPYED;
constexpr std::uint8_t kBitShuffle = BLOSC_DOBITSHUFFLE;
constexpr std::uint8_t kReservedFlag = 0x08;
constexpr std::uint8_t kNotSplit = 0x10;
constexpr std::size_t kMaxSplits = 16;        // c-blosc's MAX_SPLITS
constexpr std::size_t kMinBufferSize = 128;   // c-blosc's MIN_BUFFERSIZE

std::int64_t read32(const std::uint8_t* p) noexcept {
  std::int32_t v;
  std::memcpy(&v, p, 4);  // c-blosc's sw32_ on little-endian hosts
  return v;
}

// The codecs of a frame's streams (header byte 2, bits 5-7), those this decoder handles.
enum class Codec { blosclz, lz4, zlib, zstd };

std::optional<Codec> codec_of(std::uint8_t flags) noexcept {
  switch ((flags >> 5) & 7) {
    case BLOSC_BLOSCLZ_FORMAT: return Codec::blosclz;
    case BLOSC_LZ4_FORMAT: return Codec::lz4;  // lz4 and lz4hc
    case BLOSC_ZLIB_FORMAT: return Codec::zlib;
    case BLOSC_ZSTD_FORMAT: return Codec::zstd;
    default: return std::nullopt;
  }
}

// The codec state and unshuffle buffer of one thread, made on first use and kept.
class ThreadDecoders {
 public:
  ThreadDecoders() = default;
  ThreadDecoders(const ThreadDecoders&) = delete;
  ThreadDecoders& operator=(const ThreadDecoders&) = delete;
  ~ThreadDecoders() {
    ZSTD_freeDCtx(zstd_);
    if (deflate_ != nullptr) libdeflate_free_decompressor(deflate_);
  }

  // Each returns the bytes decoded, which the caller compares with `capacity` (c-blosc's
  // wrappers answer 0 on codec errors).
  std::size_t zstd(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, std::size_t size) noexcept {
    if (zstd_ == nullptr && (zstd_ = ZSTD_createDCtx()) == nullptr) return 0;
    // ZSTD_decompress's semantics (every frame of the input, skippable frames too), with a
    // context that is reset, not rebuilt, per call.
    const std::size_t code = ZSTD_decompressDCtx(zstd_, dst, capacity, src, size);
    return ZSTD_isError(code) ? 0 : code;
  }

  std::size_t zlib(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, std::size_t size) noexcept {
    if (deflate_ == nullptr && (deflate_ = libdeflate_alloc_decompressor()) == nullptr) return 0;
    // uncompress()'s answer for a stream of exactly `capacity` bytes: success, with bytes after
    // the stream's end ignored; shorter, longer or damaged streams fail.
    return libdeflate_zlib_decompress(deflate_, src, size, dst, capacity, nullptr) == LIBDEFLATE_SUCCESS ? capacity
                                                                                                         : 0;
  }

  // nullptr when out of memory: this runs on pool workers, where nothing may throw.
  std::uint8_t* scratch(std::size_t size) noexcept {
    try {
      if (scratch_.size() < size) scratch_.resize(size);
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
    return scratch_.data();
  }

  // Gives back an unshuffle buffer grown for unusually large blocks (forced block sizes run to
  // hundreds of MiB), so that a thread does not keep it for the rest of the process.
  void release_large_scratch() noexcept {
    constexpr std::size_t kKeep = std::size_t(16) << 20;
    if (scratch_.capacity() > kKeep) std::vector<std::uint8_t>().swap(scratch_);
  }

 private:
  ZSTD_DCtx* zstd_ = nullptr;
  libdeflate_decompressor* deflate_ = nullptr;
  std::vector<std::uint8_t> scratch_;
};

ThreadDecoders& thread_decoders() {
  thread_local ThreadDecoders decoders;
  return decoders;
}

std::size_t decode_stream(ThreadDecoders& decoders, Codec codec, std::uint8_t* dst, std::size_t capacity,
                          const std::uint8_t* src, std::size_t size) noexcept {
  switch (codec) {
    case Codec::blosclz: return blosclz_decode(dst, capacity, src, size);
    case Codec::lz4: {
      const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst), int(size),
                                        int(capacity));
      return n < 0 ? 0 : std::size_t(n);
    }
    case Codec::zlib: return decoders.zlib(dst, capacity, src, size);
    case Codec::zstd: return decoders.zstd(dst, capacity, src, size);
  }
  return 0;
}

// blosc_d: block j of the frame into out.
BloscBlockStatus decode_block(ThreadDecoders& decoders, const BloscFrame& frame, Codec codec, std::size_t j,
                              std::uint8_t* out) noexcept {
  const std::size_t typesize = frame.typesize;
  const std::size_t tail = frame.nbytes % frame.blocksize;
  const bool leftover = j == frame.nblocks - 1 && tail != 0;
  const std::size_t bsize = leftover ? tail : frame.blocksize;
  const bool byte_shuffled = (frame.flags & kByteShuffle) != 0 && typesize > 1;
  const bool bit_shuffled = (frame.flags & kBitShuffle) != 0 && bsize >= typesize;
  // The split rule also holds frames written before the "not split" flag existed.
  const bool split =
      (frame.flags & kNotSplit) == 0 && typesize <= kMaxSplits && bsize / typesize >= kMinBufferSize && !leftover;
  const std::size_t nsplits = split ? typesize : 1;
  const std::size_t neblock = bsize / nsplits;
  // c-blosc decodes such a block short and then reports fewer bytes than the frame holds.
  if (neblock * nsplits != bsize) return BloscBlockStatus::bad_split;

  std::uint8_t* streams = out;
  if (byte_shuffled || bit_shuffled) {
    streams = decoders.scratch(bsize);
    if (streams == nullptr) return BloscBlockStatus::out_of_memory;
  }
  const auto frame_size = std::int64_t(frame.size);
  std::int64_t at = read32(frame.data + kHeader + 4 * j);
  for (std::size_t k = 0; k < nsplits; ++k) {
    if (at < 0 || at > frame_size - 4) return BloscBlockStatus::bad_offset;
    const std::int64_t cbytes = read32(frame.data + at);
    at += 4;
    if (cbytes < 0 || cbytes > frame_size - at) return BloscBlockStatus::bad_length;
    const std::uint8_t* stream = frame.data + at;
    std::uint8_t* to = streams + k * neblock;
    if (std::size_t(cbytes) == neblock) {
      std::memcpy(to, stream, neblock);  // stored raw
    } else if (decode_stream(decoders, codec, to, neblock, stream, std::size_t(cbytes)) != neblock) {
      return BloscBlockStatus::bad_stream;
    }
    at += cbytes;
  }
  if (byte_shuffled) {
    unshuffle_bytes(out, streams, bsize, typesize);
  } else if (bit_shuffled) {
    // c-blosc bit-unshuffles only whole runs of 8 elements; other blocks were stored as they are.
    if ((bsize / typesize) % 8 == 0) {
      bitunshuffle(out, streams, bsize, typesize);
    } else {
      std::memcpy(out, streams, bsize);
    }
  }
  return BloscBlockStatus::ok;
}

// blosclz's match copy: `len` bytes from `dist` bytes back, byte by byte in meaning (a run
// repeats); `room` is the output left from `op`, so wide copies may spill into it.
inline void copy_match(std::uint8_t* op, std::size_t dist, std::size_t len, std::size_t room) noexcept {
  const std::uint8_t* ref = op - dist;
  if (dist == 1) {
    std::memset(op, *ref, len);
  } else if (dist >= 16 && room >= len + 16) {
    for (std::size_t i = 0; i < len; i += 16) std::memcpy(op + i, ref + i, 16);
  } else if (dist >= 8 && room >= len + 8) {
    for (std::size_t i = 0; i < len; i += 8) std::memcpy(op + i, ref + i, 8);
  } else {
    // The match repeats its first `dist` bytes: copy them, then the twice as long run now
    // behind op, and so on (each copy's source ends before its destination starts).
    std::uint8_t* const end = op + len;
    while (op < end) {
      const std::size_t n = std::min(std::size_t(op - ref), std::size_t(end - op));
      std::memcpy(op, ref, n);
      op += n;
    }
  }
}

}  // namespace

// blosclz_decompress, token for token: a control byte below 32 starts a literal run of
// ctrl + 1 bytes; otherwise its top three bits give the match length (7: more length bytes
// follow, each added, until one is not 255) and its low five bits the high byte of the
// distance, whose low byte follows; a low byte of 255 with high bits 31 means a 16-bit
// distance follows (plus 8191). The first control byte is a literal run (& 31). A stream
// that ends right after a match's header stops before that match's copy (c-blosc's order).
std::size_t blosclz_decode(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src,
                           std::size_t size) noexcept {
  constexpr std::size_t kMaxDistance = 8191;
  if (size == 0) return 0;
  const std::uint8_t* ip = src;
  const std::uint8_t* const ip_end = src + size;
  std::uint8_t* op = dst;
  std::uint8_t* const op_end = dst + capacity;
  std::size_t ctrl = *ip++ & 31u;
  for (;;) {
    if (ctrl >= 32) {
      std::size_t len = (ctrl >> 5) - 1;
      std::size_t ofs = (ctrl & 31u) << 8;
      if (len == 7 - 1) {
        std::uint8_t code;
        do {
          if (ip_end - ip < 2) return 0;
          code = *ip++;
          len += code;
        } while (code == 255);
      } else if (ip_end - ip < 2) {
        return 0;
      }
      const std::uint8_t code = *ip++;
      len += 3;
      std::size_t dist = ofs + code;
      if (code == 255 && ofs == (31u << 8)) {
        if (ip_end - ip < 2) return 0;
        dist = ((std::size_t(ip[0]) << 8) | ip[1]) + kMaxDistance;
        ip += 2;
      }
      const std::size_t room = std::size_t(op_end - op);
      if (len > room) return 0;
      if (dist + 1 > std::size_t(op - dst)) return 0;  // reaches before the output
      if (ip >= ip_end) break;
      ctrl = *ip++;
      copy_match(op, dist + 1, len, room);
      op += len;
    } else {
      ++ctrl;
      const std::size_t room = std::size_t(op_end - op);
      if (ctrl > room || ctrl > std::size_t(ip_end - ip)) return 0;
      if (room >= 32 && ip_end - ip >= 32) {
        std::memcpy(op, ip, 32);  // one fixed copy; the bytes past ctrl are overwritten later
      } else {
        std::memcpy(op, ip, ctrl);
      }
      op += ctrl;
      ip += ctrl;
      if (ip >= ip_end) break;
      ctrl = *ip++;
    }
  }
  return std::size_t(op - dst);
}

std::optional<BloscFrame> blosc_read_frame(const std::uint8_t* src, std::size_t src_size, std::size_t dst_capacity) {
  H5SPARSE_FAIL_IF(src_size < kHeader, ErrorCode::corrupt_data,
                   "blosc: a frame of " + std::to_string(src_size) + " bytes is shorter than its header");
  const std::int64_t nbytes = read32(src + 4), blocksize = read32(src + 8), cbytes = read32(src + 12);
  const std::uint8_t flags = src[2];
  const std::size_t typesize = src[3];
  H5SPARSE_FAIL_IF(src[0] != BLOSC_VERSION_FORMAT || cbytes != std::int64_t(src_size), ErrorCode::corrupt_data,
                   "blosc: frame header is invalid or disagrees with the stored size of " +
                       std::to_string(src_size) + " bytes");
  H5SPARSE_FAIL_IF(nbytes < 0 || nbytes > std::int64_t(BLOSC_MAX_BUFFERSIZE), ErrorCode::corrupt_data,
                   "blosc: frame header declares " + std::to_string(nbytes) + " decoded bytes");
  if (nbytes == 0) return std::nullopt;
  H5SPARSE_FAIL_IF(std::size_t(nbytes) > dst_capacity, ErrorCode::buffer_too_small,
                   "blosc: frame decodes to " + std::to_string(nbytes) + " bytes, more than the " +
                       std::to_string(dst_capacity) + " expected");
  H5SPARSE_FAIL_IF(blocksize <= 0 || std::size_t(blocksize) > dst_capacity ||
                       blocksize > std::int64_t(BLOSC_MAX_BLOCKSIZE) || typesize == 0,
                   ErrorCode::corrupt_data,
                   "blosc: frame header has a block size of " + std::to_string(blocksize) + " and a type size of " +
                       std::to_string(typesize));
  H5SPARSE_FAIL_IF((flags & kReservedFlag) != 0, ErrorCode::corrupt_data,
                   "blosc: frame header has a flag this version does not know (0x08)");
  BloscFrame frame{src, src_size, flags, typesize, std::size_t(nbytes), std::size_t(blocksize),
                   std::size_t((nbytes + blocksize - 1) / blocksize)};
  if (frame.copied()) {
    H5SPARSE_FAIL_IF(nbytes + std::int64_t(kHeader) != cbytes, ErrorCode::corrupt_data,
                     "blosc: a copied frame of " + std::to_string(cbytes) + " bytes cannot hold " +
                         std::to_string(nbytes) + " bytes");
    return frame;
  }
  if (!codec_of(flags)) return std::nullopt;
  H5SPARSE_FAIL_IF(src[1] != 1, ErrorCode::corrupt_data,  // every codec's format version is 1
                   "blosc: frame header has codec format version " + std::to_string(src[1]));
  H5SPARSE_FAIL_IF(std::int64_t(frame.nblocks) > (cbytes - std::int64_t(kHeader)) / 4, ErrorCode::corrupt_data,
                   "blosc: a frame of " + std::to_string(cbytes) + " bytes cannot hold the offsets of its " +
                       std::to_string(frame.nblocks) + " blocks");
  return frame;
}

BloscBlockStatus blosc_decode_blocks(const BloscFrame& frame, std::uint8_t* dst, std::size_t first,
                                     std::size_t last) noexcept {
  if (first >= last) return BloscBlockStatus::ok;
  if (frame.copied()) {
    const std::size_t begin = first * frame.blocksize;
    const std::size_t end = last >= frame.nblocks ? frame.nbytes : last * frame.blocksize;
    std::memcpy(dst + begin, frame.data + kHeader + begin, end - begin);
    return BloscBlockStatus::ok;
  }
  const std::optional<Codec> codec = codec_of(frame.flags);
  if (!codec) return BloscBlockStatus::bad_stream;
  ThreadDecoders& decoders = thread_decoders();
  BloscBlockStatus status = BloscBlockStatus::ok;
  for (std::size_t j = first; j < last && status == BloscBlockStatus::ok; ++j) {
    status = decode_block(decoders, frame, *codec, j, dst + j * frame.blocksize);
  }
  decoders.release_large_scratch();
  return status;
}

void blosc_throw_unless_ok(BloscBlockStatus status) {
  switch (status) {
    case BloscBlockStatus::ok: return;
    case BloscBlockStatus::bad_offset:
      throw Error(ErrorCode::corrupt_data, "blosc: frame payload is corrupt (a block starts outside the frame)");
    case BloscBlockStatus::bad_length:
      throw Error(ErrorCode::corrupt_data, "blosc: frame payload is corrupt (a stream runs past the frame's end)");
    case BloscBlockStatus::bad_stream:
      throw Error(ErrorCode::corrupt_data,
                  "blosc: frame payload is corrupt (a stream does not decode to its block's size)");
    case BloscBlockStatus::bad_split:
      throw Error(ErrorCode::corrupt_data,
                  "blosc: frame payload is corrupt (a split block is not a whole number of elements)");
    case BloscBlockStatus::out_of_memory:
      throw Error(ErrorCode::out_of_memory, "blosc: no memory for the unshuffle buffer");
  }
}

}  // namespace h5sparse
