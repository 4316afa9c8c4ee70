// c-blosc 1.21's compressor (blosc/blosc.c: blosc_compress_ctx, write_compression_header,
// serial_blosc, blosc_c and the zstd/zlib/lz4/lz4hc wrappers; blosclz is blosclz_encoder.cpp) with codec contexts that live as
// long as the thread; see blosc_block_encoder.hpp for why. The frame layout is documented in
// blosc_threaded.cpp.
#include "h5sparse/blosc_block_encoder.hpp"

#include <blosc.h>
#include <lz4.h>
#include <lz4hc.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "h5sparse/blosc_blocks.hpp"
#include "h5sparse/blosclz_encoder.hpp"

namespace h5sparse {
namespace {

constexpr std::size_t kHeader = BLOSC_MIN_HEADER_LENGTH;
constexpr std::size_t kMinBufferSize = 128;  // c-blosc's MIN_BUFFERSIZE: smaller buffers are copied
constexpr int kErrorBadParameter = -10;      // c-blosc's answer to a bad clevel or shuffle
constexpr int kErrorCodec = -1;

void write32(std::uint8_t* p, std::int64_t value) {
  const auto v = std::int32_t(value);
  std::memcpy(p, &v, 4);  // c-blosc's _sw32 on little-endian hosts
}

// The codec contexts and shuffle buffer of one thread, made on first use and kept.
class ThreadCodecs {
 public:
  ThreadCodecs() = default;
  ThreadCodecs(const ThreadCodecs&) = delete;
  ThreadCodecs& operator=(const ThreadCodecs&) = delete;
  ~ThreadCodecs() {
    ZSTD_freeCCtx(zstd_);
    if (zlib_level_ >= 0) deflateEnd(&zlib_);
  }

  // Each returns the compressed size, or 0 when the result does not fit in `capacity` or the
  // codec fails: the wrapper's answers in c-blosc, which then stores the stream raw.
  int zstd(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, std::size_t size, int clevel) {
    if (zstd_ == nullptr && (zstd_ = ZSTD_createCCtx()) == nullptr) return 0;
    // zstd_wrap_compress's level mapping (its "level 8" case cannot occur: 2c-1 is odd).
    const int level = clevel < 9 ? clevel * 2 - 1 : ZSTD_maxCLevel();
    // ZSTD_compressCCtx sets every parameter from (level, size) on each call, as ZSTD_compress does.
    const std::size_t code = ZSTD_compressCCtx(zstd_, dst, capacity, src, size, level);
    return ZSTD_isError(code) ? 0 : int(code);
  }

  int zlib(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, std::size_t size, int clevel) {
    if (zlib_level_ != clevel) {
      if (zlib_level_ >= 0) deflateEnd(&zlib_);
      zlib_level_ = -1;
      zlib_ = z_stream{};
      if (deflateInit(&zlib_, clevel) != Z_OK) return 0;  // compress2's parameters
      zlib_level_ = clevel;
    } else if (deflateReset(&zlib_) != Z_OK) {
      return 0;
    }
    zlib_.next_in = const_cast<Bytef*>(src);
    zlib_.avail_in = uInt(size);
    zlib_.next_out = dst;
    zlib_.avail_out = uInt(capacity);
    return deflate(&zlib_, Z_FINISH) == Z_STREAM_END ? int(zlib_.total_out) : 0;
  }

  int lz4(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, std::size_t size, int clevel) {
    if (!lz4_) lz4_.reset(new (std::nothrow) LZ4_stream_t);
    if (!lz4_) return 0;
    // lz4_wrap_compress with get_accel()'s acceleration; LZ4_compress_fast initialises its
    // state the same way.
    return LZ4_compress_fast_extState(lz4_.get(), reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                                      int(size), int(capacity), 10 - clevel);
  }

  int lz4hc(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, std::size_t size, int clevel) {
    if (!lz4hc_) lz4hc_.reset(new (std::nothrow) LZ4_streamHC_t);
    if (!lz4hc_) return 0;
    return LZ4_compress_HC_extStateHC(lz4hc_.get(), reinterpret_cast<const char*>(src), reinterpret_cast<char*>(dst),
                                      int(size), int(capacity), clevel);
  }

  int blosclz(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, std::size_t size, int clevel,
              bool split) {
    if (!blosclz_table_) blosclz_table_.reset(new (std::nothrow) std::uint32_t[kBlosclzHashEntries]);
    if (!blosclz_table_) return 0;
    return blosclz_compress_stream(clevel, src, int(size), dst, int(capacity), split, blosclz_table_.get());
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

 private:
  ZSTD_CCtx* zstd_ = nullptr;
  z_stream zlib_{};
  int zlib_level_ = -1;
  std::unique_ptr<LZ4_stream_t> lz4_;
  std::unique_ptr<LZ4_streamHC_t> lz4hc_;
  std::unique_ptr<std::uint32_t[]> blosclz_table_;
  std::vector<std::uint8_t> scratch_;
};

ThreadCodecs& thread_codecs() {
  thread_local ThreadCodecs codecs;
  return codecs;
}

struct FrameShape {
  BloscCompressor compressor;
  int clevel;
  Shuffle shuffle;
  std::size_t typesize;
  std::size_t blocksize;
  bool split;  // blocks (but the short last one) are cut into `typesize` streams
};

// blosc_c: shuffles one block, compresses its streams at dst + ntbytes (ntbytes counted from
// the frame's start, `maxbytes` the frame's capacity). Returns the bytes written, 0 when the
// frame cannot hold them (c-blosc then falls back to a copied frame), < 0 on codec errors.
int encode_block(ThreadCodecs& codecs, const FrameShape& shape, const std::uint8_t* block, std::size_t bsize,
                 bool leftover, std::uint8_t* frame, std::int64_t ntbytes, std::int64_t maxbytes) {
  const std::size_t typesize = shape.typesize;
  const std::uint8_t* data = block;
  if (shape.shuffle == Shuffle::byte && typesize > 1) {
    std::uint8_t* tmp = codecs.scratch(bsize);
    if (tmp == nullptr) return kErrorCodec;
    shuffle_bytes(tmp, block, bsize, typesize);
    data = tmp;
  } else if (shape.shuffle == Shuffle::bit && bsize >= typesize) {
    // c-blosc bit-shuffles only whole runs of 8 elements; any other block is copied as it is.
    std::uint8_t* tmp = codecs.scratch(bsize);
    if (tmp == nullptr) return kErrorCodec;
    if ((bsize / typesize) % 8 == 0) {
      bitshuffle(tmp, block, bsize, typesize);
    } else {
      std::memcpy(tmp, block, bsize);
    }
    data = tmp;
  }
  const std::size_t nsplits = shape.split && !leftover ? typesize : 1;
  const std::size_t neblock = bsize / nsplits;
  const std::int64_t start = ntbytes;
  for (std::size_t j = 0; j < nsplits; ++j) {
    std::uint8_t* length_at = frame + ntbytes;
    ntbytes += 4;
    std::int64_t maxout = std::int64_t(neblock);
    if (ntbytes + maxout > maxbytes) {
      maxout = maxbytes - ntbytes;  // c-blosc's "avoid buffer overrun"
      if (maxout <= 0) return 0;
    }
    const std::uint8_t* stream = data + j * neblock;
    std::uint8_t* out = frame + ntbytes;
    int cbytes = 0;
    switch (shape.compressor) {
      case BloscCompressor::zstd: cbytes = codecs.zstd(out, std::size_t(maxout), stream, neblock, shape.clevel); break;
      case BloscCompressor::zlib: cbytes = codecs.zlib(out, std::size_t(maxout), stream, neblock, shape.clevel); break;
      case BloscCompressor::lz4: cbytes = codecs.lz4(out, std::size_t(maxout), stream, neblock, shape.clevel); break;
      case BloscCompressor::lz4hc: cbytes = codecs.lz4hc(out, std::size_t(maxout), stream, neblock, shape.clevel); break;
      // blosc_c hands blosclz the frame's split flag, also for the unsplit last block.
      case BloscCompressor::blosclz:
        cbytes = codecs.blosclz(out, std::size_t(maxout), stream, neblock, shape.clevel, shape.split);
        break;
      default: return kErrorCodec;
    }
    if (cbytes < 0 || cbytes > maxout) return kErrorCodec;
    if (cbytes == 0 || std::size_t(cbytes) == neblock) {
      // Does not pay: the stream is stored raw, if the frame has room for it.
      if (ntbytes + std::int64_t(neblock) > maxbytes) return 0;
      std::memcpy(out, stream, neblock);
      cbytes = int(neblock);
    }
    write32(length_at, cbytes);
    ntbytes += cbytes;
  }
  return int(ntbytes - start);
}

// serial_blosc's compression loop: the offset table and every block. Returns the frame's
// size, 0 when it does not fit, < 0 on codec errors.
std::int64_t encode_blocks(const FrameShape& shape, std::uint8_t* dst, std::size_t dst_capacity,
                           const std::uint8_t* src, std::size_t src_size) {
  const std::size_t nblocks = (src_size + shape.blocksize - 1) / shape.blocksize;
  const std::size_t leftover = src_size % shape.blocksize;
  std::int64_t ntbytes = std::int64_t(kHeader + 4 * nblocks);
  const auto maxbytes = std::int64_t(dst_capacity);
  // c-blosc's first block fails in this case (after writing its offset past the end).
  if (ntbytes + 4 >= maxbytes) return 0;
  ThreadCodecs& codecs = thread_codecs();
  for (std::size_t j = 0; j < nblocks; ++j) {
    write32(dst + kHeader + 4 * j, ntbytes);
    const bool last_short = j == nblocks - 1 && leftover > 0;
    const std::size_t bsize = last_short ? leftover : shape.blocksize;
    const int cbytes =
        encode_block(codecs, shape, src + j * shape.blocksize, bsize, last_short, dst, ntbytes, maxbytes);
    if (cbytes <= 0) return cbytes;
    ntbytes += cbytes;
  }
  return ntbytes;
}

std::uint8_t format_of(BloscCompressor compressor) {
  switch (compressor) {
    case BloscCompressor::zstd: return BLOSC_ZSTD_FORMAT;
    case BloscCompressor::zlib: return BLOSC_ZLIB_FORMAT;
    case BloscCompressor::lz4: return BLOSC_LZ4_FORMAT;
    case BloscCompressor::blosclz: return BLOSC_BLOSCLZ_FORMAT;
    default: return BLOSC_LZ4HC_FORMAT;
  }
}

std::uint8_t format_version_of(BloscCompressor compressor) {
  switch (compressor) {
    case BloscCompressor::zstd: return BLOSC_ZSTD_VERSION_FORMAT;
    case BloscCompressor::zlib: return BLOSC_ZLIB_VERSION_FORMAT;
    case BloscCompressor::lz4: return BLOSC_LZ4_VERSION_FORMAT;
    case BloscCompressor::blosclz: return BLOSC_BLOSCLZ_VERSION_FORMAT;
    default: return BLOSC_LZ4HC_VERSION_FORMAT;
  }
}

}  // namespace

bool blosc_encoder_handles(BloscCompressor compressor) noexcept {
  return compressor == BloscCompressor::zstd || compressor == BloscCompressor::zlib ||
         compressor == BloscCompressor::lz4hc || compressor == BloscCompressor::lz4 ||
         compressor == BloscCompressor::blosclz;
}

int blosc_encode_frame(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src, std::size_t src_size,
                       const BloscParams& params, std::size_t forced) noexcept {
  if (!blosc_encoder_handles(params.compressor)) return kErrorCodec;
  // initialize_context_compression's checks, in its order.
  if (src_size > std::size_t(BLOSC_MAX_BUFFERSIZE) || dst_capacity < kHeader) return 0;
  if (params.clevel < 0 || params.clevel > 9) return kErrorBadParameter;
  if (params.shuffle != Shuffle::none && params.shuffle != Shuffle::byte && params.shuffle != Shuffle::bit) {
    return kErrorBadParameter;
  }
  // Like c-blosc's context calls, we assume its process-wide split mode is left at its default.
  const BloscSplitMode mode = BloscSplitMode::forward_compat;
  FrameShape shape{params.compressor, params.clevel, params.shuffle,
                   params.typesize == 0 || params.typesize > BLOSC_MAX_TYPESIZE ? 1 : params.typesize, 0, false};
  shape.blocksize = blosc_frame_block_size(shape.compressor, shape.clevel, shape.typesize, src_size, forced, mode);
  shape.split = blosc_block_splits(shape.compressor, shape.typesize, shape.blocksize, mode);

  // write_compression_header
  std::uint8_t flags = std::uint8_t(format_of(shape.compressor) << 5);
  if (!shape.split) flags |= 0x10;
  if (shape.shuffle == Shuffle::byte) flags |= BLOSC_DOSHUFFLE;
  if (shape.shuffle == Shuffle::bit) flags |= BLOSC_DOBITSHUFFLE;
  bool copied = shape.clevel == 0 || src_size < kMinBufferSize;
  dst[0] = BLOSC_VERSION_FORMAT;
  dst[1] = format_version_of(shape.compressor);
  dst[3] = std::uint8_t(shape.typesize);
  write32(dst + 4, std::int64_t(src_size));
  write32(dst + 8, std::int64_t(shape.blocksize));

  // blosc_compress_context
  const bool copy_fits = src_size + kHeader <= dst_capacity;
  std::int64_t ntbytes = 0;
  if (!copied) {
    ntbytes = encode_blocks(shape, dst, dst_capacity, src, src_size);
    if (ntbytes < 0) return kErrorCodec;
    copied = ntbytes == 0;
  }
  if (copied) {
    if (!copy_fits) {
      dst[2] = flags | BLOSC_MEMCPYED;
      write32(dst + 12, 0);
      return 0;
    }
    if (src_size != 0) std::memcpy(dst + kHeader, src, src_size);
    ntbytes = std::int64_t(kHeader + src_size);
    flags |= BLOSC_MEMCPYED;
  }
  dst[2] = flags;
  write32(dst + 12, ntbytes);
  return int(ntbytes);
}

int blosc_compress_frame(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src, std::size_t src_size,
                         const BloscParams& params, std::size_t forced) noexcept {
  if (blosc_encoder_handles(params.compressor)) return blosc_encode_frame(dst, dst_capacity, src, src_size, params, forced);
  return blosc_compress_ctx(params.clevel, int(params.shuffle), params.typesize, src_size, src, dst, dst_capacity,
                            blosc_compressor_name(params.compressor), forced, 1);
}

}  // namespace h5sparse
