// Writing a large destination with streaming (non-temporal) stores. A full read of a sparse
// dataset writes the caller's buffer chunk by chunk: short rows (a chunk's width) far apart,
// hundreds of pages per chunk. Ordinary stores first read every line they write (the cache
// needs the line before it can modify it) and the prefetchers do not follow that pattern: on
// the development machine 64 MiB written that way took 10-12 ms against 2-3 ms streamed,
// which go to memory through the write-combining buffers without reading anything. Only worth
// it when the destination is larger than the caches: the caller would find a small one in
// cache afterwards, a streamed one never.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h5sparse {

/// Reads whose destination has at least this many bytes write it with streaming stores
/// (glibc's memset and memcpy switch at 3/4 of the shared cache size, 24 MiB there).
constexpr std::size_t kStreamingMinBytes = std::size_t(16) << 20;

/// memcpy with streaming stores for the 16-byte aligned part of `dest` (short copies: memcpy).
void stream_copy(std::uint8_t* dest, const std::uint8_t* source, std::size_t bytes) noexcept;

/// fill_elements (chunk_scatter.hpp) with streaming stores; element sizes that do not divide
/// 16 bytes, and short fills, use fill_elements.
void stream_fill(std::uint8_t* dest, std::uint64_t count, const std::uint8_t* fill, std::size_t element_size) noexcept;

/// Orders the streaming stores before any later store (call once after the last one).
void stream_fence() noexcept;

}  // namespace h5sparse
