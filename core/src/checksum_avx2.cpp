// XXH3-64 with AVX2 (this file alone is compiled with -mavx2; it includes nothing but the
// xxHash header, so no AVX2 code can leak into other files through shared inline functions).
#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

#include "h5sparse/checksum.hpp"

namespace h5sparse::detail {

std::uint64_t xxh3_64_avx2(const void* data, std::size_t size) noexcept { return XXH3_64bits(data, size); }

}  // namespace h5sparse::detail
