// Faulting in a large destination a little ahead of the threads that write it.
//
// A result array fresh from the allocator (numpy.zeros: calloc, transparent huge pages) is
// zeroed by the kernel on first write, 2 MiB at a time (4 KiB at its unaligned ends). On the
// development VM that zeroing is bound by memory bandwidth: 64 MiB take 6.4 ms on one thread,
// 7.5 ms on two, and zeroing 64 MiB while another thread streams 64 MiB takes the sum of the
// two. Left to the writes, a read's decoders fault the pages as they reach them, both at the
// same moment at the start of each band of chunks (neighbouring chunks share huge pages), and
// the memory bus idles while both decode offsets or wait for HDF5. Faulting everything first
// (tried) leaves the whole zeroing in front of the decoders. Here each piece is faulted by one
// thread, about a band before the decoders reach it, so the zeroing overlaps with the work that
// is not bound by memory (docs/DESIGN.md, "Performance notes", has the numbers).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace h5sparse {

class PrefaultAhead {
 public:
  /// The destination [data, data + size); pieces are 2 MiB, on 2 MiB address boundaries.
  PrefaultAhead(std::uint8_t* data, std::size_t size) noexcept;

  /// Called by a thread about to write the destination's bytes below offset `needed`: makes
  /// the pages of every unclaimed piece that starts below `needed` present (they would fault
  /// in the writes anyway), then those of at most one more piece starting below `ahead`. Pages are populated writable
  /// without changing a byte (Linux MADV_POPULATE_WRITE); each piece by one thread only. A
  /// hint: where the kernel does not support it, or the memory does not take it, nothing.
  void advance(std::uint64_t needed, std::uint64_t ahead) noexcept;

 private:
  // Claims the next piece if it starts below `limit`; populates it; false when none was.
  bool populate_next(std::uintptr_t limit) noexcept;

  std::uintptr_t data_;  // the destination's address
  std::uintptr_t end_;
  std::atomic<std::uintptr_t> next_;  // the first byte not yet claimed
};

}  // namespace h5sparse
