// Memory our threads keep between calls: buffers reused from call to call, whose pages stay
// mapped (a fresh buffer per call costs its page faults and zeroing, which dominates small
// reads and writes). All of it counts against one process-wide budget, H5SPARSE_KEPT_MB
// (default 256 MiB), and all of it can be released at once, which HDF5's close does
// (hdf5_support registers release_kept_memory with H5atclose).
//
// A keeper is a thread_local object holding such buffers. It settles its account when a call
// starts using it (nothing refers to its buffers then): what it holds now is counted, and when
// the process holds more than the budget, it frees its buffers and the call allocates anew.
#pragma once

#include <cstddef>

namespace h5sparse {

/// The budget in bytes (H5SPARSE_KEPT_MB, read once).
std::size_t kept_memory_budget() noexcept;
/// The bytes all keepers of the process hold, as last settled.
std::size_t kept_memory() noexcept;
/// Frees every keeper's buffers. Only while none of our calls runs (HDF5's close).
void release_kept_memory() noexcept;

class Keeper {
 public:
  Keeper();
  virtual ~Keeper();
  Keeper(const Keeper&) = delete;
  Keeper& operator=(const Keeper&) = delete;

  /// At the start of a use: counts what the buffers hold now; frees them when the process is
  /// over budget.
  void settle() noexcept;

 protected:
  /// The bytes the buffers hold (their capacities).
  virtual std::size_t held() const noexcept = 0;
  /// Frees the buffers.
  virtual void free_buffers() noexcept = 0;

 private:
  friend void release_kept_memory() noexcept;
  void release() noexcept;
  std::size_t counted_ = 0;
};

}  // namespace h5sparse
