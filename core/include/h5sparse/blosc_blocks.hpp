// Blosc block sizes: a c-blosc 1.x frame is cut into blocks, and a block is the unit its
// threads share. c-blosc's automatic size makes a 1 MiB chunk one block for lz4hc and zlib at
// clevel 5, so a second thread has nothing to do; these functions choose the block size to
// force (blosc_set_blocksize / the blocksize of blosc_compress_ctx) when several threads are
// wanted. They mirror c-blosc 1.21's compute_blocksize(), including its split mode, which
// multiplies a forced size by the typesize for every codec but zstd; unit tests compare the
// mirror with the block size c-blosc writes into its frames.
#pragma once

#include <cstddef>

#include "h5sparse/codecs.hpp"

namespace h5sparse {

/// c-blosc 1.x split modes (BLOSC_SPLITMODE / blosc_set_splitmode; FORWARD_COMPAT is its default).
enum class BloscSplitMode { always, never, automatic, forward_compat };

/// Whether c-blosc 1.21 splits blocks of `blocksize` bytes into one stream per byte of the type
/// (its split_block(); a frame's header flag 0x10 says "not split").
bool blosc_block_splits(BloscCompressor compressor, std::size_t typesize, std::size_t blocksize,
                        BloscSplitMode mode);

/// The block size c-blosc 1.21 puts into the header of a frame of `nbytes` bytes;
/// `forced` = 0 means its automatic choice.
std::size_t blosc_frame_block_size(BloscCompressor compressor, int clevel, std::size_t typesize,
                                   std::size_t nbytes, std::size_t forced, BloscSplitMode mode);

/// The block size to force so that `nthreads` threads find at least two blocks each in a
/// chunk of `nbytes` bytes, or 0 (c-blosc's automatic size) when that already gives them
/// enough, when one thread is asked for, or when blocks would fall under 64 KiB (where
/// waking the threads costs more than they save and compression suffers).
std::size_t blosc_block_size_for_threads(BloscCompressor compressor, int clevel, std::size_t typesize,
                                         std::size_t nbytes, int nthreads, BloscSplitMode mode);

}  // namespace h5sparse
