// Blosc 1.x frames through c-blosc's context API only (no global c-blosc state, safe from any
// thread). Several threads share a frame's blocks through the core's worker pool
// (blosc_threaded.hpp): c-blosc's context API would start and join its threads on every call,
// which costs more than compressing a 1 MiB chunk, and its pooled global API is state shared
// with every other c-blosc user in the process. zstd, zlib, lz4hc, lz4 and blosclz frames are written
// by our own encoder with per-thread codec state (blosc_block_encoder.hpp), the same bytes,
// and every frame c-blosc decodes (but snappy's) is decoded by our own decoder
// (blosc_block_decoder.hpp), the same bytes.
// With several threads the chunk is cut into at least two blocks per thread
// (blosc_blocks.hpp); one thread keeps c-blosc's automatic blocks, so its frames are the
// peer's byte for byte.
#include <blosc.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "h5sparse/blosc_block_decoder.hpp"
#include "h5sparse/blosc_block_encoder.hpp"
#include "h5sparse/blosc_blocks.hpp"
#include "h5sparse/blosc_threaded.hpp"
#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse {
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
  BloscParams single = params;
  single.typesize = typesize;
  int rc = 0;
  if (params.nthreads <= 1) {
    rc = blosc_compress_frame(dst, dst_capacity, src, src_size, single, 0);
  } else {
    // c-blosc's context calls use its process-wide split mode, FORWARD_COMPAT unless someone
    // changed it; if someone did, the parts come out other than predicted and we go serial.
    const BloscSplitMode mode = BloscSplitMode::forward_compat;
    const std::size_t forced =
        blosc_block_size_for_threads(params.compressor, params.clevel, typesize, src_size, params.nthreads, mode);
    const std::optional<std::size_t> joined = blosc_compress_threaded(
        dst, dst_capacity, src, src_size, single,
        forced, blosc_frame_block_size(params.compressor, params.clevel, typesize, src_size, forced, mode));
    if (joined) return *joined;
    rc = blosc_compress_frame(dst, dst_capacity, src, src_size, single, forced);
  }
  H5SPARSE_FAIL_IF(rc < 0, ErrorCode::codec_failure, "blosc: compression failed, code " + std::to_string(rc));
  return std::size_t(rc);
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
  if (const std::optional<BloscFrame> frame = blosc_read_frame(src, src_size, dst_capacity)) {
    if (!blosc_decode_shared(*frame, dst, nthreads)) blosc_throw_unless_ok(blosc_decode_blocks(*frame, dst, 0, frame->nblocks));
    return expected;
  }
  // A codec our decoder does not know (snappy, or a code from the future): c-blosc decides.
  const int rc = blosc_decompress_ctx(src, dst, dst_capacity, 1);
  H5SPARSE_FAIL_IF(rc <= 0 || std::size_t(rc) != expected, ErrorCode::corrupt_data,
          "blosc: frame payload is corrupt (decoder returned " + std::to_string(rc) + ")");
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
