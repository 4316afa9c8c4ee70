// Output buffers of filter callbacks. HDF5 hands a filter a buffer it allocated and expects
// the result in a buffer it can free, so results are written straight into memory from
// H5allocate_memory and swapped in only on success.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <new>

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

}  // namespace h5sparse::hdf5
