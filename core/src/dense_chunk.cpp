#include "h5sparse/dense_chunk.hpp"

#include <cstring>
#include <string>

#include "h5sparse/error.hpp"

namespace h5sparse {

void decode_dense_chunk(const std::uint8_t* data, std::size_t size, unsigned filter_mask, std::size_t chunk_bytes,
                        std::uint8_t* out) {
  if (filter_mask & 1u) {
    H5SPARSE_FAIL_IF(size != chunk_bytes, ErrorCode::corrupt_data,
                     "chunk stored without compression holds " + std::to_string(size) + " bytes, chunks hold " +
                         std::to_string(chunk_bytes));
    std::memcpy(out, data, size);
    return;
  }
  const std::size_t decoded = blosc_decoded_size(data, size);
  H5SPARSE_FAIL_IF(decoded != chunk_bytes, ErrorCode::corrupt_data,
                   "blosc: frame decodes to " + std::to_string(decoded) + " bytes but chunks hold " +
                       std::to_string(chunk_bytes));
  blosc_decompress(out, chunk_bytes, data, size, 1);
}

std::size_t encode_dense_chunk(std::uint8_t* dst, const std::uint8_t* chunk, std::size_t chunk_bytes,
                               const BloscParams& params) {
  BloscParams one = params;
  one.nthreads = 1;
  return blosc_compress(dst, chunk_bytes, chunk, chunk_bytes, one);
}

void copy_pieces_out(const std::uint8_t* chunk, const ChunkPiece* pieces, std::size_t count, std::size_t element_size,
                     std::uint8_t* dest) {
  for (std::size_t i = 0; i < count; ++i)
    std::memcpy(dest + pieces[i].source * element_size, chunk + pieces[i].in_chunk_start * element_size,
                pieces[i].length * element_size);
}

void copy_pieces_in(const std::uint8_t* source, const ChunkPiece* pieces, std::size_t count, std::size_t element_size,
                    std::uint8_t* chunk) {
  for (std::size_t i = 0; i < count; ++i)
    std::memcpy(chunk + pieces[i].in_chunk_start * element_size, source + pieces[i].source * element_size,
                pieces[i].length * element_size);
}

}  // namespace h5sparse
