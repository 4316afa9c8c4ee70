// Blosc 1.x frames (the format of filter 32001) through c-blosc 1.21's context calls, which
// keep no global state and so are safe from any thread, next to PyTables or hdf5plugin using
// c-blosc's global API in the same process. The frames are c-blosc's own, byte for byte the
// peer's (hdf5-blosc) for the same parameters. Threads: `nthreads` becomes c-blosc's
// numinternalthreads (BLOSC_NTHREADS, in the filter and in the sparse value sections). The
// context calls start and join those threads in every call; BloscPool::global (HDF5's filter
// calls) takes them from c-blosc's global pool instead, which lives between calls, as the peer
// does (docs/DESIGN.md, "Threads in the filter").
#include <blosc.h>
#include <pthread.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>

#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"
#include "pinned_object.hpp"

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
    // A codec c-blosc has a name for (its number in the flags is one of the five) but this
    // build was made without: valid data this build cannot decode.
    if (rc == kNoCodec && lib != nullptr)
      throw Error(ErrorCode::unsupported, std::string("blosc: frame was written by codec '") + lib +
                                              "', which this c-blosc " + BLOSC_VERSION_STRING + " was built without");
    throw_corrupt(std::string("frame was written by codec '") + (lib != nullptr ? lib : "unknown") +
                  "', format version " + std::to_string(src[1]) + ", which this c-blosc " + BLOSC_VERSION_STRING +
                  " cannot decode (decoder returned " + std::to_string(rc) + ")");
  }
  throw_corrupt("frame payload is corrupt (decoder returned " + std::to_string(rc) + ")");
}

// --- c-blosc's global API ------------------------------------------------------------------
// Its state (compressor, thread count, pool, block size) is shared by every user of libblosc
// in the process: the peer plugin and PyTables' filter set their compressor before each call,
// as we do, and HDF5 runs filters one at a time. c-blosc locks only inside blosc_compress and
// blosc_decompress, so our own calls hold this mutex around the set + call pair. Held across
// fork() (atfork handlers), so that no child inherits it locked by a thread it does not have.
std::mutex g_global_api;

// Variables with which c-blosc's global calls override their arguments (or, BLOSC_SPLITMODE,
// set process state that the context calls read too; BLOSC_NOLOCK: calls without the pool).
constexpr const char* kGlobalOverrides[] = {"BLOSC_CLEVEL",    "BLOSC_SHUFFLE",   "BLOSC_TYPESIZE", "BLOSC_COMPRESSOR",
                                            "BLOSC_BLOCKSIZE", "BLOSC_SPLITMODE", "BLOSC_NOLOCK"};

std::unique_lock<std::mutex> lock_global_api() {
  static const bool prepared = [] {
    // c-blosc's pool threads wait in libblosc between calls: it must outlive our plugins.
    detail::pin_object_holding(reinterpret_cast<const void*>(&::blosc_compress));
    pthread_atfork([] { g_global_api.lock(); }, [] { g_global_api.unlock(); }, [] { g_global_api.unlock(); });
    return true;
  }();
  (void)prepared;
  return std::unique_lock<std::mutex>(g_global_api);
}

// Under the lock: true when c-blosc's global calls give the context call's frame and thread
// count: none of kGlobalOverrides is set, c-blosc reads BLOSC_NTHREADS (its own way) as
// `nthreads` or not at all, and nobody forced a block size (blosc_set_blocksize). Otherwise
// the caller keeps to the context call: the dataset's parameters decide the frame.
bool global_api_gives_our_frame(int nthreads) {
  for (const char* name : kGlobalOverrides) {
    if (std::getenv(name) != nullptr) return false;
  }
  if (const char* text = std::getenv("BLOSC_NTHREADS")) {
    const long theirs = std::strtol(text, nullptr, 10);
    if (theirs > 0 && theirs != nthreads) return false;
  }
  return nthreads <= BLOSC_MAX_THREADS && blosc_get_blocksize() == 0;
}

// Under the lock. Changing the count makes c-blosc rebuild its pool (blosc_set_nthreads).
void use_global_threads(int nthreads) {
  if (blosc_get_nthreads() != nthreads) blosc_set_nthreads(nthreads);
}

int compress_frame(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, std::size_t src_size,
                   std::size_t typesize, const BloscParams& p) {
  const char* compressor = blosc_compressor_name(p.compressor);
  const int nthreads = std::max(p.nthreads, 1);
  if (nthreads > 1 && p.pool == BloscPool::global) {
    const auto lock = lock_global_api();
    if (global_api_gives_our_frame(nthreads)) {
      blosc_set_compressor(compressor);
      use_global_threads(nthreads);
      return ::blosc_compress(p.clevel, int(p.shuffle), typesize, src_size, src, dst, capacity);
    }
  }
  return blosc_compress_ctx(p.clevel, int(p.shuffle), typesize, src_size, src, dst, capacity, compressor, 0,
                            nthreads);
}

int decompress_frame(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, int nthreads,
                     BloscPool pool) {
  nthreads = std::max(nthreads, 1);
  if (nthreads > 1 && pool == BloscPool::global) {
    const auto lock = lock_global_api();
    if (global_api_gives_our_frame(nthreads)) {
      use_global_threads(nthreads);
      return ::blosc_decompress(src, dst, capacity);
    }
  }
  return blosc_decompress_ctx(src, dst, capacity, nthreads);
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
  const int rc = compress_frame(dst, capacity, src, src_size, typesize, params);
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
                             std::size_t src_size, int nthreads, BloscPool pool) {
  const std::size_t expected = blosc_decoded_size(src, src_size);
  H5SPARSE_FAIL_IF(expected > dst_capacity, ErrorCode::buffer_too_small,
          "blosc: frame decodes to " + std::to_string(expected) + " bytes, more than the " +
              std::to_string(dst_capacity) + " expected");
  if (expected == 0) return 0;
  check_frame_header(src, src_size, expected, dst_capacity);
  // c-blosc compares its int32 sizes with the capacity: none is above BLOSC_MAX_BUFFERSIZE.
  const std::size_t capacity = std::min(dst_capacity, std::size_t(BLOSC_MAX_BUFFERSIZE));
  check_decoded(decompress_frame(dst, capacity, src, nthreads, pool), expected, src);
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
