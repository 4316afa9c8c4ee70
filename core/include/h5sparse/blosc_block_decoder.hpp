// Blosc 1.x frames decoded block by block with codec state kept per thread.
//
// c-blosc 1.21 decodes every stream through a one-shot codec call: ZSTD_decompress creates
// and frees a ZSTD_DCtx (~160 KiB, above glibc's mmap threshold: an mmap, page faults and an
// munmap per block), uncompress() runs inflateInit/inflateEnd per block, and
// blosc_decompress_ctx allocates its temporary buffers (twice the block size) on every call.
// Its threads could only be used through sub-frames copied per thread. This decoder accepts
// exactly the frames c-blosc 1.21.5's blosc_decompress_ctx decodes and writes the same bytes
// (its header checks, split rule, raw streams, leftover block, byte and bit unshuffle, copied
// frames), with one ZSTD_DCtx, one libdeflate decompressor (zlib streams) and one unshuffle
// buffer per thread, and a blosclz decoder of our own. Any run of blocks decodes straight
// into its place in the output, so threads share a frame without copying it. Unit tests and
// the fuzz target fuzz_blosc_decoder compare it with blosc_decompress_ctx.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace h5sparse {

/// A frame whose header passed c-blosc's checks for a given output capacity.
struct BloscFrame {
  const std::uint8_t* data;
  std::size_t size;       ///< bytes of the frame (the header's compressed size)
  std::uint8_t flags;     ///< header byte 2
  std::size_t typesize;   ///< 1-255
  std::size_t nbytes;     ///< decoded bytes, > 0
  std::size_t blocksize;  ///< bytes of every block but a short last one
  std::size_t nblocks;
  bool copied() const noexcept { return (flags & 0x02) != 0; }
};

/// Reads the header of a frame of `src_size` bytes as blosc_decompress_ctx does for an output
/// of `dst_capacity` bytes. Throws corrupt_data when c-blosc would refuse the frame and
/// buffer_too_small when it decodes to more than `dst_capacity` bytes. Returns nullopt for an
/// empty frame (nothing to decode) and for a codec this decoder does not handle (snappy, or
/// codes c-blosc does not know): c-blosc decides those.
std::optional<BloscFrame> blosc_read_frame(const std::uint8_t* src, std::size_t src_size, std::size_t dst_capacity);

/// How decoding a run of blocks ended.
enum class BloscBlockStatus {
  ok,
  bad_offset,     ///< a block or stream starts outside the frame
  bad_length,     ///< a stream's length runs past the frame's end
  bad_stream,     ///< the codec refused a stream or it did not decode to its exact size
  bad_split,      ///< a block cut into per-byte streams is not a whole number of elements
  out_of_memory,  ///< the unshuffle buffer could not grow
};

/// Throws for a status other than ok: corrupt_data (out_of_memory for out_of_memory), with
/// words for what went wrong.
void blosc_throw_unless_ok(BloscBlockStatus status);

/// Decodes blocks [first, last) of `frame` into their places in `dst` (the whole frame's
/// output, frame.nbytes bytes). Safe to run on several threads at once for disjoint runs.
/// Every offset and length is checked against the frame; on failure the run's bytes in dst
/// are unspecified and the reason is returned.
BloscBlockStatus blosc_decode_blocks(const BloscFrame& frame, std::uint8_t* dst, std::size_t first,
                                     std::size_t last) noexcept;

/// blosclz_decompress of c-blosc 1.21.5: the bytes decoded (0 or fewer than `capacity`
/// when the stream is invalid or does not fill the output exactly).
std::size_t blosclz_decode(std::uint8_t* dst, std::size_t capacity, const std::uint8_t* src, std::size_t size) noexcept;

}  // namespace h5sparse
