// Fuzz target: the decode path of our Blosc wrapper (codecs.hpp: blosc_decompress, its header
// checks in front of c-blosc 1.21's blosc_decompress_ctx) against c-blosc called directly.
// Input: one byte choosing the output capacity and the threads, then a frame. Properties: no
// crash or out-of-bounds access; only Error(corrupt_data) escapes (or unsupported, for a codec
// this c-blosc was built without); when c-blosc decodes the frame (returns its declared size)
// so do we, the same bytes, with one thread and with two; when c-blosc refuses it, so do we
// (our header checks refuse nothing c-blosc would decode).
#include <blosc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "h5sparse/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace h5sparse;
  if (size < 1 + BLOSC_MIN_HEADER_LENGTH) return 0;
  const std::uint8_t* frame = data + 1;
  const std::size_t n = size - 1;
  std::size_t declared = 0;
  if (blosc_cbuffer_validate(frame, n, &declared) != 0) return 0;  // both refuse: blosc_decoded_size's check
  if (declared > (std::size_t(1) << 22)) return 0;                  // keep the fuzzer's memory small
  // capacity: the declared size or a little more (c-blosc checks the block size against it)
  const std::size_t capacity = declared + (data[0] & 1 ? (data[0] >> 1) & 63 : 0);
  const int nthreads = data[0] & 0x80 ? 2 : 1;

  std::vector<std::uint8_t> theirs(capacity + 1, 0xA5), ours(capacity + 1, 0x5A);
  const int rc = blosc_decompress_ctx(frame, theirs.data(), capacity, 1);
  const bool they_decode = declared == 0 ? rc == 0 : rc == int(declared);
  bool we_decode = true;
  try {
    if (blosc_decompress(ours.data(), capacity, frame, n, nthreads) != declared) std::abort();
  } catch (const Error& e) {
    // unsupported: a codec c-blosc names but was built without (it answers -5 then)
    if (e.code() != ErrorCode::corrupt_data && !(e.code() == ErrorCode::unsupported && rc == -5)) std::abort();
    we_decode = false;
  }
  if (they_decode != we_decode) std::abort();
  if (we_decode && std::memcmp(ours.data(), theirs.data(), declared) != 0) std::abort();
  return 0;
}
