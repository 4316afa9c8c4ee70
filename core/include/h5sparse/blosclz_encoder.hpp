// BloscLZ compression, the stream format of c-blosc 1.21's blosclz codec (a FastLZ level-1
// descendant: literal runs of up to 32 bytes, matches at distances up to 8191, or up to
// 73,725 with a 16-bit far distance), written to give exactly the bytes c-blosc 1.21.5's
// blosclz_compress gives for the same stream, clevel and split flag: the same entropy probe
// on the last quarter that refuses streams it judges not worth it, the same hash sizes per
// clevel, the same match-length bias and the same "does not fit" answer (0). c-blosc does not
// export its blosclz functions, and its blosc_compress_ctx allocates its buffers on every
// call; this one only needs a hash table the caller keeps (blosc_block_encoder.cpp keeps one
// per thread). Decoding is blosc_block_decoder's.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h5sparse {

/// Entries of the hash table blosclz_compress_stream needs (64 KiB of uint32_t).
constexpr std::size_t kBlosclzHashEntries = std::size_t(1) << 14;

/// Compresses `length` bytes of `src` into at most `capacity` bytes of `dst` at `clevel` 1-9;
/// `split` says whether the stream is one byte plane of a split block (c-blosc then uses a
/// minimum match of 4 on data that compresses well). Returns the stream's size, or 0 when it
/// does not fit, when the probe says the data does not compress enough for this clevel, or
/// for streams under 16 bytes or capacities under 66 bytes (c-blosc's answers; the caller
/// stores the stream raw). `hash_table` holds kBlosclzHashEntries entries; its contents need
/// not be kept between calls.
int blosclz_compress_stream(int clevel, const std::uint8_t* src, int length, std::uint8_t* dst, int capacity,
                            bool split, std::uint32_t* hash_table) noexcept;

}  // namespace h5sparse
