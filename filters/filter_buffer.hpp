// Output buffers of filter callbacks. HDF5 hands a filter a buffer it allocated and expects
// the result in a buffer it can free, so results are written straight into memory from
// H5allocate_memory (or, when compressing, into the thread's previous input) and swapped in
// only on success.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "h5sparse/error.hpp"
#include "h5sparse/kept_memory.hpp"

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

// The buffer HDF5 handed this thread's previous compression as its input (a filter may free
// its input with H5free_memory and hand back a buffer from H5allocate_memory: the filter
// contract of H5Z_func_t, which this class keeps on both sides), kept to receive the
// next compression's output: its pages are mapped and recently used, where a fresh 1 MiB
// buffer costs about 250 page faults, as much time as lz4 itself, and compressing into a
// scratch buffer costs a copy of the result. One per thread, freed when the thread ends, at
// HDF5's close, or when the process keeps more than its budget (core's kept_memory.hpp).
class SpareChunkBuffer final : public Keeper {
 public:
  SpareChunkBuffer() = default;
  ~SpareChunkBuffer() override { release(); }

  /// At least `size` bytes (allocated on first use or when too small); throws bad_alloc.
  std::uint8_t* reserve(std::size_t size) {
    if (capacity_ < size || data_ == nullptr) {
      release();
      data_ = H5allocate_memory(size ? size : 1, false);
      if (data_ == nullptr) throw std::bad_alloc();
      capacity_ = size;
    }
    return static_cast<std::uint8_t*>(data_);
  }
  /// Hands this buffer to HDF5 as the filter's output and keeps HDF5's input in its place.
  void swap_with(void** buf, std::size_t* buf_size) noexcept {
    std::swap(*buf, data_);
    std::swap(*buf_size, capacity_);
  }
  void release() noexcept {
    if (data_ != nullptr) H5free_memory(data_);
    data_ = nullptr;
    capacity_ = 0;
  }

 private:
  std::size_t held() const noexcept override { return capacity_; }
  void free_buffers() noexcept override { release(); }

  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// Runs `compress(dst, capacity)` for an output that must be smaller than the input (else the
/// filter does not pay, and HDF5's buffer is left as it was) and hands the output to HDF5 in
/// place of its input, which this thread keeps for the next call (SpareChunkBuffer). Chunks
/// over 64 MiB get a one-off output buffer and nothing is kept. Returns compress's size.
template <typename Compress>
std::size_t compress_swapping_input(void** buf, std::size_t* buf_size, std::size_t nbytes, Compress&& compress) {
  constexpr std::size_t kKeepLimit = std::size_t(64) << 20;
  if (nbytes > kKeepLimit) {
    FilterOutput out(nbytes);
    const std::size_t size = compress(out.data(), nbytes);
    return size > 0 && size <= nbytes ? out.replace(buf, buf_size, size) : size;
  }
  thread_local SpareChunkBuffer spare;
  spare.settle();
  const std::size_t size = compress(spare.reserve(nbytes), nbytes);
  if (size > 0 && size <= nbytes) spare.swap_with(buf, buf_size);
  return size;
}

/// The output of a filter whose compression did not pay (0 from compress_swapping_input).
/// Optional (H5Z_FLAG_OPTIONAL in `flags`): 0, so HDF5 stores the chunk as it is, which is
/// smaller, and sets its mask bit. Mandatory: HDF5 fails the write on 0, so `store(dst,
/// capacity)` writes the input in the codec's stored form (at most `bound` bytes, a little
/// more than the input), handed to HDF5 in place of its input.
template <typename Store>
std::size_t output_when_compression_does_not_pay(unsigned flags, void** buf, std::size_t* buf_size, std::size_t nbytes,
                                                  std::size_t bound, const char* codec, Store&& store) {
  if (flags & H5Z_FLAG_OPTIONAL) return 0;
  FilterOutput out(bound);
  const std::size_t size = store(out.data(), out.capacity());
  H5SPARSE_FAIL_IF(size == 0, ErrorCode::unsupported,
                   std::string(codec) + ": a chunk of " + std::to_string(nbytes) +
                       " bytes does not compress and is too large to store uncompressed in the codec's format");
  return out.replace(buf, buf_size, size);
}

}  // namespace h5sparse::hdf5
