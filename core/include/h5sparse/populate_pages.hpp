// Faulting in a large destination buffer on several threads before it is written.
//
// A result array fresh from the allocator (numpy.zeros: calloc, transparent huge pages) is
// zeroed by the kernel on first write, a 2 MiB page at a time. Chunks of one band of a
// row-major array share their huge pages, so threads decoding neighbouring chunks would wait
// for each other's faults and the zeroing runs on one core at a time. Populating the pages
// first, the threads taking interleaved 2 MiB pieces, spreads that work over the cores.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h5sparse {

/// Makes the pages of [data, data + size) present and writable without changing a byte
/// (Linux MADV_POPULATE_WRITE), on up to `threads` threads of the shared pool. Only whole
/// pages inside the range are touched. A hint: on kernels without it, or for memory it does
/// not apply to, it does nothing.
void populate_pages_for_writing(std::uint8_t* data, std::size_t size, int threads) noexcept;

}  // namespace h5sparse
