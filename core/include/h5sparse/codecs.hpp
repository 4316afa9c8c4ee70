// Byte-buffer codecs of the core: shuffle, deflate, blosc, lzf.
//
// Conventions (after c-blosc2 and zstd): destination first, then source; compressors that can
// refuse return 0 when the result would not be smaller than the capacity given ("does not
// pay"), so callers can store the input raw; decoders validate the whole header before they
// touch the payload and throw h5sparse::Error(corrupt_data) on anything inconsistent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace h5sparse {

using Bytes = std::vector<std::uint8_t>;

/// std::allocator, except that growing a vector leaves the new elements uninitialised: for
/// buffers written whole right after they grow (a stored chunk read into), whose zeroing is
/// pure cost.
template <typename T>
struct UninitialisedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitialisedAllocator<U>;
  };
  UninitialisedAllocator() = default;
  template <typename U>
  UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// Bytes that `resize` does not zero (UninitialisedAllocator).
using RawBytes = std::vector<std::uint8_t, UninitialisedAllocator<std::uint8_t>>;

/// Bytes someone else owns (a Bytes, or part of a larger buffer).
struct ByteView {
  const std::uint8_t* data;
  std::size_t size;
  ByteView(const std::uint8_t* bytes, std::size_t count) : data(bytes), size(count) {}
  ByteView(const Bytes& bytes) : data(bytes.data()), size(bytes.size()) {}  // NOLINT: implicit by design
  ByteView(const RawBytes& bytes) : data(bytes.data()), size(bytes.size()) {}  // NOLINT: implicit by design
};

// --- shuffle -------------------------------------------------------------------------------
// Byte shuffle: for elements of `element_size` bytes, all first bytes, then all second bytes...
// A trailing partial element (size % element_size bytes) is copied unchanged. dst != src.
void shuffle_bytes(std::uint8_t* dst, const std::uint8_t* src, std::size_t size,
                   std::size_t element_size) noexcept;
void unshuffle_bytes(std::uint8_t* dst, const std::uint8_t* src, std::size_t size,
                     std::size_t element_size) noexcept;

// --- deflate (zlib stream, the format of HDF5's H5Z_FILTER_DEFLATE) -----------------------
/// Compresses at `level` 0-9; returns the compressed size or 0 if it exceeds `dst_capacity`.
std::size_t deflate_compress(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                             std::size_t src_size, int level);
/// Inflates into exactly `expected_size` bytes; throws corrupt_data if the stream is invalid,
/// truncated, or does not produce exactly that many bytes.
void deflate_decompress_exact(std::uint8_t* dst, std::size_t expected_size, const std::uint8_t* src,
                              std::size_t src_size);
/// Inflates a stream of unknown decoded size (HDF5's deflate filter does not store it);
/// `size_hint` is a first guess; the output grows up to `max_size`, then corrupt_data.
Bytes deflate_decompress(const std::uint8_t* src, std::size_t src_size, std::size_t size_hint,
                         std::size_t max_size);

// --- blosc (c-blosc 1.x frame, the format of filter 32001) ---------------------------------
enum class BloscCompressor : int {  // numbering of hdf5-blosc cd_values[6]
  blosclz = 0, lz4 = 1, lz4hc = 2, snappy = 3, zlib = 4, zstd = 5,
};
enum class Shuffle : int { none = 0, byte = 1, bit = 2 };  // blosc's doshuffle numbering

const char* blosc_compressor_name(BloscCompressor compressor) noexcept;
/// True when the linked c-blosc was built with this compressor.
bool blosc_compressor_available(BloscCompressor compressor) noexcept;

/// Where c-blosc's threads come from when nthreads > 1: started and joined in each call (its
/// context calls, safe on any thread), or c-blosc's global pool, kept between calls (its global
/// API, as hdf5-blosc uses it; one call at a time process-wide): for HDF5's filter calls only,
/// never for our own worker threads. Same frames either way.
enum class BloscPool : int { per_call = 0, global = 1 };

struct BloscParams {
  int clevel = 5;
  Shuffle shuffle = Shuffle::byte;
  BloscCompressor compressor = BloscCompressor::blosclz;
  std::size_t typesize = 1;
  int nthreads = 1;
  BloscPool pool = BloscPool::per_call;
};
/// Blosc's worst-case frame size for `src_size` input bytes.
std::size_t blosc_compress_bound(std::size_t src_size) noexcept;
/// Returns the frame size, or 0 when it would exceed `dst_capacity`.
std::size_t blosc_compress(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                           std::size_t src_size, const BloscParams& params);
/// `src` in a frame that holds it as it is (c-blosc's copied frame, clevel 0), of
/// blosc_compress_bound(src_size) bytes: what a mandatory filter stores when compression does
/// not pay. Returns the frame size, or 0 when it would exceed `dst_capacity`.
std::size_t blosc_store(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src, std::size_t src_size,
                        const BloscParams& params);
/// Validates a frame's header against `src_size` and returns the decoded size it declares.
std::size_t blosc_decoded_size(const std::uint8_t* src, std::size_t src_size);
/// Decodes a validated frame; `dst_capacity` must be >= blosc_decoded_size(). A frame of a
/// codec c-blosc knows but this build of it lacks (snappy, when built without) is
/// Error(unsupported); anything else it refuses, Error(corrupt_data).
std::size_t blosc_decompress(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                             std::size_t src_size, int nthreads, BloscPool pool = BloscPool::per_call);
/// Threads to use for blosc: $BLOSC_NTHREADS if it is a positive integer, else 1.
int blosc_threads_from_environment() noexcept;

// --- lzf (liblzf raw stream, the format of h5py's filter 32000) -----------------------------
/// Returns the compressed size, or 0 if it would exceed `dst_capacity`.
std::size_t lzf_compress(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                         std::size_t src_size) noexcept;
/// Size of lzf_store's stream of `src_size` bytes: the input plus one control byte per 32.
std::size_t lzf_store_bound(std::size_t src_size) noexcept;
/// `src` as an LZF stream of literal runs only, valid LZF that every decoder reads (h5py's
/// too): what a mandatory filter stores when compression does not pay. Returns the stream
/// size, or 0 when it would exceed `dst_capacity` or 4 GiB (liblzf's limit).
std::size_t lzf_store(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                      std::size_t src_size) noexcept;
/// Returns the decoded size; throws buffer_too_small if `dst_capacity` is too small and
/// corrupt_data if the stream is invalid.
std::size_t lzf_decompress(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                           std::size_t src_size);

}  // namespace h5sparse
