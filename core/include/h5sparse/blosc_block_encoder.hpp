// Blosc 1.x frames for zstd, zlib, lz4hc, lz4 and blosclz with codec state kept per thread.
//
// c-blosc 1.21 compresses every block (every per-byte stream of a split block) through a
// one-shot codec call: ZSTD_compress builds and frees a ZSTD_CCtx whose tables it then zeroes
// (MiBs at blosc clevel 5+, page faults on every call), compress2 runs deflateInit/deflateEnd,
// LZ4_compress_HC allocates its 256 KiB state; and blosc_compress_ctx allocates its shuffle
// buffers (twice the block size) on every call, page faults again. This encoder writes the
// same frames byte for byte (c-blosc's header, flags, offset table, split rule, "stored raw
// when it does not pay" rule and whole-frame copy fallback, under its default split mode
// FORWARD_COMPAT) with one ZSTD_CCtx, one z_stream (deflateReset), one LZ4/LZ4HC state and one
// shuffle buffer per thread; blosclz streams come from our own compressor
// (blosclz_encoder.hpp: c-blosc does not export its codec) with a hash table per thread.
// Unit tests compare its frames with blosc_compress_ctx's. Decoding is our own too
// (blosc_block_decoder.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "h5sparse/codecs.hpp"

namespace h5sparse {

/// True for the compressors this encoder writes itself (zstd, zlib, lz4hc, lz4, blosclz).
bool blosc_encoder_handles(BloscCompressor compressor) noexcept;

/// Writes what blosc_compress_ctx(params.clevel, params.shuffle, params.typesize, src_size,
/// src, dst, dst_capacity, <compressor>, forced, 1) writes and returns what it returns: the
/// frame's size, 0 when neither the frame nor a copied frame fits in dst_capacity, < 0 on bad
/// parameters or a codec failure. params.nthreads is ignored; a typesize of 0 or above 255
/// is taken as 1 (c-blosc's rule for above 255). Only for blosc_encoder_handles() compressors.
int blosc_encode_frame(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                       std::size_t src_size, const BloscParams& params, std::size_t forced) noexcept;

/// blosc_encode_frame for the compressors it handles, c-blosc's blosc_compress_ctx (one
/// thread) for the others: the single-threaded frame writer of the Blosc codec.
int blosc_compress_frame(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                         std::size_t src_size, const BloscParams& params, std::size_t forced) noexcept;

}  // namespace h5sparse
