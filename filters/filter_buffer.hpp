// Output buffers of filter callbacks. HDF5 hands a filter a buffer it allocated and expects
// the result in a buffer it can free, so results are written straight into memory from
// H5allocate_memory and swapped in only on success.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

namespace h5sparse::hdf5 {

class FilterOutput {
 public:
  explicit FilterOutput(std::size_t capacity)
      : data_(static_cast<std::uint8_t*>(H5allocate_memory(capacity ? capacity : 1, false))),
        capacity_(capacity) {
    if (data_ == nullptr) throw std::bad_alloc();
  }
  ~FilterOutput() {
    if (data_ != nullptr) H5free_memory(data_);
  }
  FilterOutput(const FilterOutput&) = delete;
  FilterOutput& operator=(const FilterOutput&) = delete;

  std::uint8_t* data() noexcept { return data_; }
  std::size_t capacity() const noexcept { return capacity_; }

  /// Hands the buffer to HDF5 in place of its input; returns the valid size, as filters do.
  std::size_t replace(void** buf, std::size_t* buf_size, std::size_t valid_size) noexcept {
    H5free_memory(*buf);
    *buf = data_;
    *buf_size = capacity_;
    data_ = nullptr;
    return valid_size;
  }

 private:
  std::uint8_t* data_;
  std::size_t capacity_;
};

/// Runs `compress(dst, capacity)` for an output that must be smaller than the input (else the
/// filter does not pay) and copies the result over the input, which HDF5 lets a filter reuse.
/// The output goes to a per-thread scratch buffer that stays mapped: a fresh 1 MiB buffer per
/// chunk costs about 250 page faults, as much time as lz4 itself. Returns compress's size.
template <typename Compress>
std::size_t compress_over_input(void* input, std::size_t nbytes, Compress&& compress) {
  constexpr std::size_t kScratchLimit = std::size_t(64) << 20;  // larger chunks: a one-off buffer
  thread_local std::vector<std::uint8_t> scratch;
  std::vector<std::uint8_t> one_off;
  std::vector<std::uint8_t>& out = nbytes <= kScratchLimit ? scratch : one_off;
  if (out.size() < nbytes) out.resize(nbytes);
  const std::size_t size = compress(out.data(), nbytes);
  if (size > 0 && size <= nbytes) std::memcpy(input, out.data(), size);
  return size;
}

}  // namespace h5sparse::hdf5
