#include "h5sparse/checksum.hpp"

#include <xxhash.h>

#include "h5sparse/cpu_features.hpp"

namespace h5sparse {

std::uint64_t xxh3_64(const void* data, std::size_t size) noexcept {
#if defined(H5SPARSE_XXH3_AVX2)
  // Short inputs (headers, small sections) gain nothing from the wider kernel.
  if (size >= 1024 && cpu_has_avx2()) return detail::xxh3_64_avx2(data, size);
#endif
  return XXH3_64bits(data, size);
}

}  // namespace h5sparse
