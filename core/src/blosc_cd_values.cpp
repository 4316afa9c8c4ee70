#include "h5sparse/blosc_cd_values.hpp"

#include <string>

#include "h5sparse/error.hpp"

namespace h5sparse {

BloscParams blosc_params_from_cd_values(std::size_t count, const unsigned values[]) {
  BloscParams p;
  H5SPARSE_FAIL_IF(count < 4, ErrorCode::invalid_argument,
                   "blosc: expected at least 4 cd_values, got " + std::to_string(count));
  p.typesize = values[2];
  if (count >= 5) p.clevel = int(values[4]);
  if (count >= 6) {
    H5SPARSE_FAIL_IF(values[5] > 2, ErrorCode::invalid_argument,
                     "blosc: shuffle cd_values[5] must be 0 (none), 1 (byte) or 2 (bit), got " +
                         std::to_string(values[5]));
    p.shuffle = Shuffle(values[5]);
  }
  if (count >= 7) {
    H5SPARSE_FAIL_IF(values[6] > 5, ErrorCode::invalid_argument,
                     "blosc: compressor cd_values[6] must be 0 blosclz, 1 lz4, 2 lz4hc, 3 snappy, 4 zlib or "
                     "5 zstd, got " + std::to_string(values[6]));
    p.compressor = BloscCompressor(values[6]);
  }
  H5SPARSE_FAIL_IF(p.clevel < 0 || p.clevel > 9, ErrorCode::invalid_argument,
                   "blosc: clevel cd_values[4] must be 0-9, got " + std::to_string(p.clevel));
  p.nthreads = 1;
  return p;
}

}  // namespace h5sparse
