// HDF5 filter plugin for LZF, filter ID 32000, file-compatible with h5py's built-in filter.
// cd_values, as h5py lays them out: [0] filter revision (4), [1] LZF version (0x0105),
// [2] chunk bytes (the decoded size). Compression that does not fit in the input's size
// returns 0 from an optional filter (HDF5 leaves the chunk raw with its filter-mask bit set);
// a mandatory one stores the chunk as literal runs, which h5py's decoder reads too.
#include <H5PLextern.h>

#include <string>

#include "chunk_geometry.hpp"
#include "close_release.hpp"
#include "error_stack.hpp"
#include "filter_buffer.hpp"
#include "h5sparse/codecs.hpp"
#include "h5sparse/filter_ids.hpp"
#include "plugin_entry.hpp"

namespace {

using namespace h5sparse;
using namespace h5sparse::hdf5;

constexpr unsigned kFilterRevision = 4;  // h5py's H5PY_FILTER_LZF_VERSION
constexpr unsigned kLzfVersion = 0x0105;
constexpr std::size_t kMaxValues = 8;

herr_t lzf_set_local(hid_t dcpl, hid_t type, hid_t /*space*/) {
  return call_guarded<herr_t>(Origin::filter, "lzf_set_local", -1, [&]() -> herr_t {
    release_kept_memory_at_close();  // writes keep buffers between chunks
    unsigned flags = 0;
    unsigned values[kMaxValues];
    std::size_t count = current_cd_values(dcpl, kFilterLzf, &flags, values, kMaxValues);
    if (count < 3) count = 3;  // the first three slots are ours; keep any later ones
    const ChunkGeometry g = chunk_geometry(dcpl, type);
    H5SPARSE_FAIL_IF(g.chunk_bytes > 0xFFFFFFFFu, ErrorCode::unsupported, "lzf: chunks must be under 4 GiB");
    if (values[0] == 0) values[0] = kFilterRevision;
    if (values[1] == 0) values[1] = kLzfVersion;
    values[2] = unsigned(g.chunk_bytes);
    throw_if_negative(H5Pmodify_filter(dcpl, kFilterLzf, flags, count, values),
                      "lzf: cannot store the filter's parameters");
    return 0;
  });
}

size_t lzf_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                  size_t* buf_size, void** buf) {
  return call_guarded<size_t>(Origin::filter, "lzf_filter", 0, [&]() -> size_t {
    const auto* input = static_cast<const std::uint8_t*>(*buf);
    if (flags & H5Z_FLAG_REVERSE) {
      const std::size_t expected = cd_nelmts >= 3 ? cd_values[2] : 0;
      if (expected != 0) {
        FilterOutput out(expected);
        const std::size_t size = lzf_decompress(out.data(), out.capacity(), input, nbytes);
        H5SPARSE_FAIL_IF(size != expected, ErrorCode::corrupt_data,
                "lzf: stream decodes to " + std::to_string(size) + " bytes but chunks hold " +
                    std::to_string(expected));
        return out.replace(buf, buf_size, size);
      }
      // No size recorded (files from very old writers): grow like h5py does.
      for (std::size_t capacity = 4 * nbytes + 64;; capacity *= 2) {
        FilterOutput out(capacity);
        try {
          return out.replace(buf, buf_size, lzf_decompress(out.data(), out.capacity(), input, nbytes));
        } catch (const Error& e) {
          if (e.code() != ErrorCode::buffer_too_small || capacity > (std::size_t(1) << 32)) throw;
        }
      }
    }
    const std::size_t size = compress_swapping_input(buf, buf_size, nbytes, [&](std::uint8_t* dst, std::size_t capacity) {
      return lzf_compress(dst, capacity, input, nbytes);
    });
    if (size != 0) return size;
    return output_when_compression_does_not_pay(flags, buf, buf_size, nbytes, lzf_store_bound(nbytes), "lzf",
                                                [&](std::uint8_t* dst, std::size_t capacity) {
                                                  return lzf_store(dst, capacity, input, nbytes);
                                                });
  });
}

const H5Z_class2_t kLzfClass = {
    H5Z_CLASS_T_VERS,
    static_cast<H5Z_filter_t>(kFilterLzf),
    1, 1,
    "lzf",    // h5py's name, so h5dump -p reads the same
    nullptr,
    lzf_set_local,
    lzf_filter,
};

}  // namespace

H5SPARSE_PLUGIN_ENTRY(lzf, H5PL_TYPE_FILTER, "lzf filter", &kLzfClass)
