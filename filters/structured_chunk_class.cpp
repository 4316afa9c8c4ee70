// The structured-chunk filter (ID 45100), shared by its plugin and the parallel connector. It
// makes sparse datasets readable and writable by any HDF5 client that has only HDF5_PLUGIN_PATH:
//  - decode: a structured chunk becomes the dense chunk, undefined elements = fill value;
//  - encode: a dense chunk becomes a structured chunk (every element defined, or, with the
//    fill-is-undefined option, every element that differs from the fill value). A chunk made
//    only of fill values (HDF5 writes those when it allocates chunks early) becomes empty.
// set_local completes the user's request form of cd_values with the dataset's geometry and
// fill value (docs/FORMAT.md, "Filter parameters").
// Variable-length datasets (parameters version 2, an opaque carrier) hold values no dense
// chunk can carry: decoding refuses any chunk holding values (the empty chunk gives zeros),
// encoding takes only the all-zero chunk HDF5 writes as fill, stored as the empty chunk (docs/DESIGN.md, "Variable-length data").
#include <algorithm>
#include <string>
#include <vector>

#include "structured_chunk_class.hpp"

#include "chunk_geometry.hpp"
#include "close_release.hpp"
#include "error_stack.hpp"
#include "filter_buffer.hpp"
#include "h5sparse/fill_scan.hpp"
#include "h5sparse/sparse_layout.hpp"
#include "h5sparse/structured_chunk.hpp"
#include "h5sparse/var_chunk.hpp"
#include "pre_encoded_chunks.hpp"

namespace h5sparse::hdf5 {
namespace {

// H5Pget_filter_by_id2 refuses to return more than 256 cd_values ("probable uninitialized
// *cd_nelmts"), so the complete form must fit in 256 values (docs/FORMAT.md).
constexpr std::size_t kMaxValues = 256;

herr_t structured_set_local(hid_t dcpl, hid_t type, hid_t /*space*/) {
  return call_guarded<herr_t>(Origin::filter, "structured_chunk_set_local", -1, [&]() -> herr_t {
    release_kept_memory_at_close();  // writes keep buffers between chunks
    H5SPARSE_FAIL_IF(H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0, ErrorCode::unsupported,
            "sparse datasets do not support variable-length datatypes yet");
    H5SPARSE_FAIL_IF(H5Tget_class(type) == H5T_REFERENCE && H5Tequal(type, H5T_STD_REF) > 0, ErrorCode::unsupported,
            "sparse datasets do not support H5R_ref_t references; use H5T_STD_REF_OBJ");
    unsigned flags = 0;
    std::vector<unsigned> values(kMaxValues);
    const std::size_t count = current_cd_values(dcpl, kFilterStructuredChunk, &flags, values.data(), kMaxValues);
    values.resize(count);
    SparseParams params = is_complete_form(values.data(), values.size())
                              ? from_cd_values(values.data(), values.size())
                              : parse_request(values);
    // A variable-length dataset's complete form comes from the connector, which chose the carrier.
    H5SPARSE_FAIL_IF(params.is_var() && (H5Tget_class(type) != H5T_OPAQUE || H5Tget_size(type) != kVarCarrierSize),
                     ErrorCode::invalid_argument,
                     "variable-length structured-chunk parameters on a datatype other than the 16-byte opaque carrier");
    const ChunkGeometry g = chunk_geometry(dcpl, type);
    hsize_t dims[H5S_MAX_RANK];
    const int rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, dims);
    params.layout.element_size = g.type_size;
    params.layout.dims.assign(dims, dims + rank);
    params.fill.clear();
    H5D_fill_value_t fill_status;
    throw_if_negative(H5Pfill_value_defined(dcpl, &fill_status), "cannot tell whether a fill value is set");
    if (fill_status == H5D_FILL_VALUE_USER_DEFINED && !params.is_var()) {
      params.fill.resize(g.type_size);
      throw_if_negative(H5Pget_fill_value(dcpl, type, params.fill.data()), "cannot read the fill value");
      // An all-zero fill value is the default: store none (also keeps big types in bounds).
      if (std::all_of(params.fill.begin(), params.fill.end(), [](std::uint8_t b) { return b == 0; }))
        params.fill.clear();
    }
    const std::vector<unsigned> complete = to_cd_values(params);
    H5SPARSE_FAIL_IF(complete.size() > kMaxValues, ErrorCode::unsupported,
            "structured-chunk parameters need " + std::to_string(complete.size()) +
                " cd_values, HDF5 allows 256: use shorter section pipelines or a smaller non-zero fill value");
    // Mandatory: a reader without this filter must fail, never see structured bytes as data.
    throw_if_negative(H5Pmodify_filter(dcpl, kFilterStructuredChunk, H5Z_FLAG_MANDATORY, complete.size(),
                                       complete.data()),
                      "cannot store the structured-chunk parameters");
    return 0;
  });
}

// An encoded chunk as the filter's output. Over the input when it fits, so HDF5's buffer keeps
// its size: H5Ocopy reuses one buffer for every chunk and copies chunks from the source's
// chunk cache into it at their dense size without growing it, so a buffer shrunk to a
// structured chunk would overflow.
size_t hand_over(const Bytes& stored, size_t* buf_size, void** buf) {
  if (stored.size() <= *buf_size) {
    std::copy(stored.begin(), stored.end(), static_cast<std::uint8_t*>(*buf));
    return stored.size();
  }
  FilterOutput out(stored.size());
  std::copy(stored.begin(), stored.end(), out.data());
  return out.replace(buf, buf_size, stored.size());
}

// A variable-length dataset's chunk through HDF5's dense path (see the top of this file).
size_t var_filter(unsigned flags, const ChunkLayout& layout, size_t nbytes, size_t* buf_size, void** buf) {
  const std::size_t dense_size = layout.element_count() * layout.element_size;
  const auto* input = static_cast<const std::uint8_t*>(*buf);
  if (flags & H5Z_FLAG_REVERSE) {
    // Only the empty chunk has a dense form (zeros): what an extent change has HDF5 rewrite.
    H5SPARSE_FAIL_IF(!decode_var_chunk(input, nbytes, layout).offsets.empty(), ErrorCode::unsupported,
                     "a variable-length sparse dataset is read through the h5sparse VOL connector "
                     "(HDF5_VOL_CONNECTOR=h5sparse); its chunks have no dense form");
    FilterOutput out(dense_size);
    std::fill(out.data(), out.data() + dense_size, std::uint8_t(0));
    return out.replace(buf, buf_size, dense_size);
  }
  H5SPARSE_FAIL_IF(nbytes != dense_size || !std::all_of(input, input + nbytes, [](std::uint8_t b) { return b == 0; }),
                   ErrorCode::unsupported,
                   "a variable-length sparse dataset is written through the h5sparse VOL connector: "
                   "its dense carrier takes no values");
  return hand_over(encode_var_chunk(ChunkVarElements{}, layout), buf_size, buf);
}

size_t structured_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[], size_t nbytes,
                         size_t* buf_size, void** buf) {
  return call_guarded<size_t>(Origin::filter, "structured_chunk_filter", 0, [&]() -> size_t {
    const SparseParams params = from_cd_values(cd_values, cd_nelmts);
    const ChunkLayout& layout = params.layout;
    if (params.is_var()) return var_filter(flags, layout, nbytes, buf_size, buf);
    const std::size_t dense_size = layout.element_count() * layout.element_size;
    const std::uint8_t* fill = params.fill.empty() ? nullptr : params.fill.data();
    const auto* input = static_cast<const std::uint8_t*>(*buf);
    if (flags & H5Z_FLAG_REVERSE) {
      const StructuredChunk chunk = decode_chunk(input, nbytes, layout);
      FilterOutput out(dense_size);
      expand_to_dense(chunk, layout, fill, out.data());
      return out.replace(buf, buf_size, dense_size);
    }
    H5SPARSE_FAIL_IF(nbytes != dense_size, ErrorCode::invalid_argument,
            "dense chunk of " + std::to_string(nbytes) + " bytes, expected " + std::to_string(dense_size));
    if (PreEncodedChunks* pre = PreEncodedChunks::active()) {
      // A collective write of the parallel connector: the chunk it encoded for this image.
      if (const Bytes* encoded = pre->take(cd_values, cd_nelmts, input, nbytes)) {
        FilterOutput out(encoded->size());
        std::copy(encoded->begin(), encoded->end(), out.data());
        return out.replace(buf, buf_size, encoded->size());
      }
    }
    const Bytes zeros(fill ? 0 : layout.element_size, 0);
    const std::uint8_t* fill_bytes = fill ? fill : zeros.data();
    // Without fill-is-undefined a chunk is either wholly defined or, when every element is the
    // fill value, not defined at all.
    StructuredChunk chunk =
        params.fill_is_undefined() ? from_dense(input, layout, fill_bytes)
        : all_elements_equal(input, layout.element_count(), fill_bytes, layout.element_size)
            ? StructuredChunk::empty(layout)
            : from_dense(input, layout, nullptr);
    return hand_over(encode_chunk(chunk, layout), buf_size, buf);
  });
}

const H5Z_class2_t kStructuredChunkClass = {
    H5Z_CLASS_T_VERS,
    static_cast<H5Z_filter_t>(kFilterStructuredChunk),
    1, 1,
    "h5sparse structured chunk",
    nullptr,
    structured_set_local,
    structured_filter,
};

}  // namespace

const H5Z_class2_t* structured_chunk_class() { return &kStructuredChunkClass; }

}  // namespace h5sparse::hdf5
