// Blosc 1.x frames shared between threads (BLOSC_NTHREADS > 1) through the core's worker pool
// (worker_pool.hpp) and c-blosc's context-free calls only, so no global c-blosc state is used.
//
// A frame is a 16-byte header, a table of block offsets (bstarts) and the blocks, each
// compressed on its own. Decoding: each thread decodes a run of whole blocks from the frame
// straight into its part of the output (blosc_block_decoder.hpp). Encoding: each thread
// compresses a run of whole blocks as a frame of its own (blosc_compress_frame, the same forced
// block size); the frames are then joined into one: one header, one offset table, the blocks
// in order. Blocks are compressed independently, so the joined frame holds the bytes c-blosc
// writes for the whole buffer with that block size (unit tests compare them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "h5sparse/blosc_block_decoder.hpp"
#include "h5sparse/codecs.hpp"

namespace h5sparse {

/// Decodes `frame` (blosc_read_frame) into dst with up to `nthreads` threads, each on a run of
/// whole blocks. Returns false, having written nothing, when the frame does not divide (a
/// single block, a copied frame, less than 128 KiB per thread); throws corrupt_data when a
/// block fails to decode.
bool blosc_decode_shared(const BloscFrame& frame, std::uint8_t* dst, int nthreads);

/// blosc_decode_shared for a frame not read yet: false also for a frame blosc_read_frame
/// leaves to c-blosc; throws what blosc_read_frame throws.
bool blosc_decompress_threaded(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                               std::size_t src_size, int nthreads);

/// Compresses `src` as one frame whose blocks are `blocksize` bytes (what c-blosc makes of the
/// `forced` block size, 0 = automatic), with up to params.nthreads threads. Returns the frame's
/// size; 0 when the frame does not fit in `dst_capacity` and neither would c-blosc's copied
/// frame (c-blosc's own answer then); nullopt when the work does not divide or a part came out
/// other than predicted (the caller then compresses serially). params.typesize must be 1-255.
std::optional<std::size_t> blosc_compress_threaded(std::uint8_t* dst, std::size_t dst_capacity,
                                                   const std::uint8_t* src, std::size_t src_size,
                                                   const BloscParams& params, std::size_t forced,
                                                   std::size_t blocksize);

}  // namespace h5sparse
