// HDF5 filter plugin for Blosc, filter ID 32001, file-compatible with hdf5-blosc (PyTables,
// hdf5plugin, h5py users). cd_values, as hdf5-blosc lays them out:
//   [0] filter revision (2)   [1] blosc format (2)   [2] typesize   [3] chunk bytes
//   [4] clevel 0-9 (default 5)   [5] shuffle 0 none, 1 byte, 2 bit (default 1)
//   [6] compressor 0 blosclz, 1 lz4, 2 lz4hc, 3 snappy, 4 zlib, 5 zstd (default 0)
// Like the peer, compression that does not fit in the input's size returns 0 from an optional
// filter (HDF5 leaves the chunk raw with its filter-mask bit set); unlike the peer, which fails,
// a mandatory one stores c-blosc's copied frame (the input behind a 16-byte header).
#include <H5PLextern.h>

#include <string>

#include "chunk_geometry.hpp"
#include "close_release.hpp"
#include "error_stack.hpp"
#include "filter_buffer.hpp"
#include "h5sparse/blosc_cd_values.hpp"
#include "h5sparse/codecs.hpp"
#include "h5sparse/filter_ids.hpp"
#include "plugin_entry.hpp"

namespace {

using namespace h5sparse;
using namespace h5sparse::hdf5;

constexpr unsigned kFilterRevision = 2;  // hdf5-blosc's FILTER_BLOSC_VERSION
constexpr unsigned kBloscFormat = 2;     // BLOSC_VERSION_FORMAT of c-blosc 1.x
constexpr std::size_t kMaxValues = 8;

// HDF5 runs filters one at a time: several c-blosc threads come from its global pool, kept
// between chunks as the peer's are (codecs.hpp, BloscPool).
BloscParams params_from(std::size_t cd_nelmts, const unsigned cd_values[]) {
  BloscParams p = blosc_params_from_cd_values(cd_nelmts, cd_values);
  p.nthreads = blosc_threads_from_environment();
  p.pool = BloscPool::global;
  return p;
}

herr_t blosc_set_local(hid_t dcpl, hid_t type, hid_t /*space*/) {
  return call_guarded<herr_t>(Origin::filter, "blosc_set_local", -1, [&]() -> herr_t {
    release_kept_memory_at_close();  // writes keep buffers between chunks
    unsigned flags = 0;
    unsigned values[kMaxValues];
    std::size_t count = current_cd_values(dcpl, kFilterBlosc, &flags, values, kMaxValues);
    if (count < 4) count = 4;  // the first four slots are ours to fill
    const ChunkGeometry g = chunk_geometry(dcpl, type);
    H5SPARSE_FAIL_IF(g.chunk_bytes > 0xFFFFFFFFu, ErrorCode::unsupported, "blosc: chunks must be under 4 GiB");
    values[0] = kFilterRevision;
    values[1] = kBloscFormat;
    values[2] = unsigned(g.base_type_size > 255 ? 1 : g.base_type_size);
    values[3] = unsigned(g.chunk_bytes);
    BloscParams p = params_from(count, values);  // reject bad options at create time
    H5SPARSE_FAIL_IF(!blosc_compressor_available(p.compressor), ErrorCode::unsupported,
            std::string("blosc: compressor '") + blosc_compressor_name(p.compressor) +
                "' is not available in this build");
    throw_if_negative(H5Pmodify_filter(dcpl, kFilterBlosc, flags, count, values),
                      "blosc: cannot store the filter's parameters");
    return 0;
  });
}

size_t blosc_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                    size_t* buf_size, void** buf) {
  return call_guarded<size_t>(Origin::filter, "blosc_filter", 0, [&]() -> size_t {
    const BloscParams p = params_from(cd_nelmts, cd_values);
    const auto* input = static_cast<const std::uint8_t*>(*buf);
    if (flags & H5Z_FLAG_REVERSE) {
      const std::size_t decoded = blosc_decoded_size(input, nbytes);
      H5SPARSE_FAIL_IF(cd_values[3] != 0 && decoded != cd_values[3], ErrorCode::corrupt_data,
              "blosc: frame decodes to " + std::to_string(decoded) + " bytes but chunks hold " +
                  std::to_string(cd_values[3]));
      FilterOutput out(decoded);
      blosc_decompress(out.data(), out.capacity(), input, nbytes, p.nthreads, p.pool);
      return out.replace(buf, buf_size, decoded);
    }
    const std::size_t size = compress_swapping_input(buf, buf_size, nbytes, [&](std::uint8_t* dst, std::size_t capacity) {
      return blosc_compress(dst, capacity, input, nbytes, p);
    });
    if (size != 0) return size;
    return output_when_compression_does_not_pay(flags, buf, buf_size, nbytes, blosc_compress_bound(nbytes), "blosc",
                                                [&](std::uint8_t* dst, std::size_t capacity) {
                                                  return blosc_store(dst, capacity, input, nbytes, p);
                                                });
  });
}

const H5Z_class2_t kBloscClass = {
    H5Z_CLASS_T_VERS,
    static_cast<H5Z_filter_t>(kFilterBlosc),
    1,        // encoder present
    1,        // decoder present
    "blosc",  // the peer's name, so h5dump -p reads the same
    nullptr,  // can_apply: every type can be blosc'ed
    blosc_set_local,
    blosc_filter,
};

}  // namespace

H5SPARSE_PLUGIN_ENTRY(blosc, H5PL_TYPE_FILTER, "blosc filter", &kBloscClass)
