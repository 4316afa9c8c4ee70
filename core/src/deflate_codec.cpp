// Deflate through zlib, producing the zlib-wrapped stream that HDF5's deflate filter stores.
#include <zlib.h>

#include <limits>

#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

void check_fits_zlib(std::size_t size) {
  H5SPARSE_FAIL_IF(size > std::numeric_limits<uInt>::max(), ErrorCode::unsupported,
          "deflate: buffers over 4 GiB are not supported");
}

}  // namespace

std::size_t deflate_compress(std::uint8_t* dst, std::size_t dst_capacity, const std::uint8_t* src,
                             std::size_t src_size, int level) {
  H5SPARSE_FAIL_IF(level < 0 || level > 9, ErrorCode::invalid_argument,
          "deflate: level must be 0-9, got " + std::to_string(level));
  check_fits_zlib(src_size);
  uLongf out_size = uLongf(dst_capacity);
  const int rc = compress2(dst, &out_size, src, uLong(src_size), level);
  if (rc == Z_BUF_ERROR) return 0;
  H5SPARSE_FAIL_IF(rc != Z_OK, ErrorCode::codec_failure, "deflate: zlib compress2 failed, code " + std::to_string(rc));
  return std::size_t(out_size);
}

void deflate_decompress_exact(std::uint8_t* dst, std::size_t expected_size, const std::uint8_t* src,
                              std::size_t src_size) {
  check_fits_zlib(src_size);
  check_fits_zlib(expected_size);
  uLongf out_size = uLongf(expected_size);
  uLong in_size = uLong(src_size);
  const int rc = uncompress2(dst, &out_size, src, &in_size);
  H5SPARSE_FAIL_IF(rc != Z_OK || out_size != expected_size || in_size != src_size, ErrorCode::corrupt_data,
          "deflate: stream is corrupt or does not decode to the expected " +
              std::to_string(expected_size) + " bytes");
}

Bytes deflate_decompress(const std::uint8_t* src, std::size_t src_size, std::size_t size_hint,
                         std::size_t max_size) {
  check_fits_zlib(src_size);
  z_stream stream{};
  H5SPARSE_FAIL_IF(inflateInit(&stream) != Z_OK, ErrorCode::codec_failure, "deflate: inflateInit failed");
  Bytes out(std::max<std::size_t>(size_hint, 64));
  stream.next_in = const_cast<Bytef*>(src);
  stream.avail_in = uInt(src_size);
  int rc = Z_OK;
  while (true) {
    stream.next_out = out.data() + stream.total_out;
    stream.avail_out = uInt(std::min<std::size_t>(out.size() - stream.total_out,
                                                  std::numeric_limits<uInt>::max()));
    rc = inflate(&stream, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) break;
    if (rc == Z_OK && stream.avail_out == 0 && out.size() < max_size) {
      out.resize(std::min(max_size, out.size() * 2));
      continue;
    }
    inflateEnd(&stream);
    throw Error(ErrorCode::corrupt_data, rc == Z_OK || rc == Z_BUF_ERROR
                                             ? "deflate: stream is truncated or decodes too large"
                                             : "deflate: stream is corrupt");
  }
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

}  // namespace h5sparse
