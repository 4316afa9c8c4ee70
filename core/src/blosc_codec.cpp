// Blosc 1.x frames (the format of filter 32001) through c-blosc 1.21's context calls, which
// keep no global state and so are safe from any thread, next to PyTables or hdf5plugin using
// c-blosc's global API in the same process. The frames are c-blosc's own, byte for byte the
// peer's (hdf5-blosc) for the same parameters. Threads: `nthreads` becomes c-blosc's
// numinternalthreads (BLOSC_NTHREADS, in the filter and in the sparse value sections).
#include <blosc.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

constexpr int kNoCodec = -5;           // blosc_decompress_ctx: codec not in this c-blosc build
constexpr int kBadCodecVersion = -9;   // blosc_decompress_ctx: codec format version unknown
constexpr unsigned kReservedFlag = 0x08;

[[noreturn]] void throw_corrupt(const std::string& what) {
  throw Error(ErrorCode::corrupt_data, "blosc: " + what);
}

// The header checks blosc_decompress_ctx makes before it touches the payload (it answers -1
// to all of them), made here first so that each refusal says what is wrong. `nbytes` is the
// validated decoded size, > 0.
void check_frame_header(const std::uint8_t* src, std::size_t src_size, std::size_t nbytes,
                        std::size_t dst_capacity) {
  std::size_t declared = 0, cbytes = 0, blocksize = 0, typesize = 0;
  int flags = 0;
  blosc_cbuffer_sizes(src, &declared, &cbytes, &blocksize);
  blosc_cbuffer_metainfo(src, &typesize, &flags);
  // blosc_cbuffer_sizes widens a negative block size to a huge one: one check covers both.
  if (blocksize == 0 || blocksize > dst_capacity || blocksize > std::size_t(BLOSC_MAX_BLOCKSIZE) || typesize == 0) {
    throw_corrupt("frame header has a block size of " + std::to_string(std::int32_t(blocksize)) +
                  " and a type size of " + std::to_string(typesize));
  }
  if ((src[2] & kReservedFlag) != 0) throw_corrupt("frame header has a flag this version does not know (0x08)");
  if ((flags & BLOSC_MEMCPYED) != 0) {
    if (nbytes + BLOSC_MAX_OVERHEAD != src_size) {
      throw_corrupt("a copied frame of " + std::to_string(src_size) + " bytes cannot hold " +
                    std::to_string(nbytes) + " bytes");
    }
    return;
  }
  const std::size_t nblocks = (nbytes + blocksize - 1) / blocksize;
  if (nblocks > (src_size - BLOSC_MIN_HEADER_LENGTH) / 4) {
    throw_corrupt("a frame of " + std::to_string(src_size) + " bytes cannot hold the offsets of its " +
                  std::to_string(nblocks) + " blocks");
  }
}

// blosc_decompress_ctx's answer `rc` for a frame declaring `expected` bytes, in words.
void check_decoded(int rc, std::size_t expected, const std::uint8_t* src) {
  if (rc >= 0 && std::size_t(rc) == expected) return;
  if (rc == kNoCodec || rc == kBadCodecVersion) {
    const char* lib = blosc_cbuffer_complib(src);
    throw_corrupt(std::string("frame was written by codec '") + (lib != nullptr ? lib : "unknown") +
                  "', format version " + std::to_string(src[1]) + ", which this c-blosc " + BLOSC_VERSION_STRING +
                  " cannot decode (decoder returned " + std::to_string(rc) + ")");
  }
  throw_corrupt("frame payload is corrupt (decoder returned " + std::to_string(rc) + ")");
}

}  // namespace

const char* blosc_compressor_name(BloscCompressor compressor) noexcept {
  switch (compressor) {
    case BloscCompressor::blosclz: return "blosclz";
    case BloscCompressor::lz4: return "lz4";
    case BloscCompressor::lz4hc: return "lz4hc";
    case BloscCompressor::snappy: return "snappy";
    case BloscCompressor::zlib: return "zlib";
    case BloscCompressor::zstd: return "zstd";
  }
  return "unknown";
}

bool blosc_compressor_available(BloscCompressor compressor) noexcept {
  return blosc_compname_to_compcode(blosc_compressor_name(compressor)) >= 0;
}

std::size_t blosc_compress_bound(std::size_t src_size) noexcept {
  return src_size + BLOSC_MAX_OVERHEAD;
}

std::size_t blosc_compress(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                           std::size_t src_size, const BloscParams& params) {
  H5SPARSE_FAIL_IF(params.clevel < 0 || params.clevel > 9, ErrorCode::invalid_argument,
          "blosc: clevel must be 0-9, got " + std::to_string(params.clevel));
  H5SPARSE_FAIL_IF(src_size > std::size_t(BLOSC_MAX_BUFFERSIZE), ErrorCode::unsupported,
          "blosc: a chunk of " + std::to_string(src_size) + " bytes exceeds blosc's 2 GiB limit");
  H5SPARSE_FAIL_IF(!blosc_compressor_available(params.compressor), ErrorCode::unsupported,
          std::string("blosc: compressor '") + blosc_compressor_name(params.compressor) +
              "' is not available in this c-blosc build (available: " + blosc_list_compressors() + ")");
  // Blosc's own typesize limit; larger types are compressed as bytes, as hdf5-blosc does.
  const std::size_t typesize = params.typesize == 0 || params.typesize > BLOSC_MAX_TYPESIZE ? 1 : params.typesize;
  // c-blosc keeps sizes in int32: no frame is larger than the input plus its header anyway.
  const std::size_t capacity = std::min(dst_capacity, src_size + BLOSC_MAX_OVERHEAD);
  const int rc = blosc_compress_ctx(params.clevel, int(params.shuffle), typesize, src_size, src, dst, capacity,
                                    blosc_compressor_name(params.compressor), 0, std::max(params.nthreads, 1));
  H5SPARSE_FAIL_IF(rc < 0, ErrorCode::codec_failure, "blosc: compression failed, code " + std::to_string(rc));
  return std::size_t(rc);  // 0: does not fit in dst_capacity (does not pay)
}

std::size_t blosc_store(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src, std::size_t src_size,
                        const BloscParams& params) {
  BloscParams copy = params;
  copy.clevel = 0;  // c-blosc copies the input behind the header
  return blosc_compress(dst, dst_capacity, src, src_size, copy);
}

std::size_t blosc_decoded_size(const std::uint8_t* src, std::size_t src_size) {
  std::size_t nbytes = 0;
  H5SPARSE_FAIL_IF(src_size < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(src, src_size, &nbytes) != 0,
          ErrorCode::corrupt_data,
          "blosc: frame header is invalid or disagrees with the stored size of " +
              std::to_string(src_size) + " bytes");
  return nbytes;
}

std::size_t blosc_decompress(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                             std::size_t src_size, int nthreads) {
  const std::size_t expected = blosc_decoded_size(src, src_size);
  H5SPARSE_FAIL_IF(expected > dst_capacity, ErrorCode::buffer_too_small,
          "blosc: frame decodes to " + std::to_string(expected) + " bytes, more than the " +
              std::to_string(dst_capacity) + " expected");
  if (expected == 0) return 0;
  check_frame_header(src, src_size, expected, dst_capacity);
  // c-blosc compares its int32 sizes with the capacity: none is above BLOSC_MAX_BUFFERSIZE.
  const std::size_t capacity = std::min(dst_capacity, std::size_t(BLOSC_MAX_BUFFERSIZE));
  check_decoded(blosc_decompress_ctx(src, dst, capacity, std::max(nthreads, 1)), expected, src);
  return expected;
}

int blosc_threads_from_environment() noexcept {
  const char* text = std::getenv("BLOSC_NTHREADS");
  if (text == nullptr) return 1;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1) return 1;
  return value > 256 ? 256 : int(value);
}

}  // namespace h5sparse
