// LZF through liblzf: the raw stream h5py's LZF filter stores (no header of its own).
// Upstream's lzf.h has no C++ guard (Debian's adds one; nesting it here is harmless).
extern "C" {
#include <lzf.h>
}

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse {

std::size_t lzf_compress(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                         std::size_t src_size) noexcept {
  if (src_size == 0 || src_size > std::numeric_limits<unsigned>::max()) return 0;
  const std::size_t capacity = std::min<std::size_t>(dst_capacity, std::numeric_limits<unsigned>::max());
  return ::lzf_compress(src, unsigned(src_size), dst, unsigned(capacity));
}

std::size_t lzf_store_bound(std::size_t src_size) noexcept {
  return src_size + (src_size + 31) / 32;
}

std::size_t lzf_store(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                      std::size_t src_size) noexcept {
  constexpr std::size_t kMaxRun = 32;  // a control byte below 32 starts a literal run of it + 1 bytes
  const std::size_t size = lzf_store_bound(src_size);
  if (src_size == 0 || size > dst_capacity || size > std::numeric_limits<unsigned>::max()) return 0;
  for (std::size_t at = 0; at < src_size; at += kMaxRun) {
    const std::size_t run = std::min(kMaxRun, src_size - at);
    *dst++ = std::uint8_t(run - 1);
    std::memcpy(dst, src + at, run);
    dst += run;
  }
  return size;
}

std::size_t lzf_decompress(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                           std::size_t src_size) {
  H5SPARSE_FAIL_IF(src_size == 0, ErrorCode::corrupt_data, "lzf: empty stream");
  H5SPARSE_FAIL_IF(src_size > std::numeric_limits<unsigned>::max(), ErrorCode::unsupported,
          "lzf: streams over 4 GiB are not supported");
  const std::size_t capacity = std::min<std::size_t>(dst_capacity, std::numeric_limits<unsigned>::max());
  errno = 0;
  const unsigned n = ::lzf_decompress(src, unsigned(src_size), dst, unsigned(capacity));
  if (n != 0) return n;
  H5SPARSE_FAIL_IF(errno == E2BIG, ErrorCode::buffer_too_small,
          "lzf: stream decodes to more than " + std::to_string(capacity) + " bytes");
  throw Error(ErrorCode::corrupt_data, "lzf: stream is corrupt");
}

}  // namespace h5sparse
