// Section pipelines over the core codecs (see section_pipeline.hpp for the semantics).
#include "h5sparse/section_pipeline.hpp"

#include <algorithm>

#include "h5sparse/error.hpp"
#include "h5sparse/filter_ids.hpp"

namespace h5sparse {
namespace {

constexpr std::size_t kMaxFilters = 32;  // H5Z_MAX_NFILTERS

BloscParams blosc_params(const SectionFilter& f, std::size_t element_size) {
  BloscParams p;
  p.typesize = element_size;
  if (f.cd_values.size() > 4) p.clevel = int(f.cd_values[4]);
  if (f.cd_values.size() > 5) p.shuffle = Shuffle(f.cd_values[5]);
  if (f.cd_values.size() > 6) p.compressor = BloscCompressor(f.cd_values[6]);
  p.nthreads = blosc_threads_from_environment();
  return p;
}

// Bound for intermediate sizes when compressors are chained: no codec here expands its input
// by more than this, so a larger result is corrupt data, not a valid stream.
std::size_t expansion_bound(std::size_t size) { return size + size / 16 + 1024; }

// Grows `out` to at least `size` bytes; never shrinks it, so a buffer reused between chunks is
// zeroed (by vector growth) only the first time.
std::uint8_t* room(Bytes& out, std::size_t size) {
  if (out.size() < size) out.resize(size);
  return out.data();
}

// One filter forward from `in` into `out` (grown as needed); returns the bytes produced, 0
// when a compressor cannot make its output fit (the filter does not pay).
std::size_t forward_one(const SectionFilter& f, const std::uint8_t* in, std::size_t size, std::size_t element_size,
                        Bytes& out) {
  switch (f.id) {
    case kFilterShuffle:
      shuffle_bytes(room(out, size), in, size, element_size);
      return size;
    case kFilterDeflate: {
      const std::size_t capacity = expansion_bound(size);
      const int level = f.cd_values.empty() ? 6 : int(f.cd_values[0]);
      return deflate_compress(room(out, capacity), capacity, in, size, level);
    }
    case kFilterLzf:
      return lzf_compress(room(out, size), size, in, size);
    case kFilterBlosc:
      return blosc_compress(room(out, size), size, in, size, blosc_params(f, element_size));
  }
  throw Error(ErrorCode::invalid_argument, "section filter " + std::to_string(f.id) + " is not supported");
}

// A mandatory compressor's output when compression does not fit in the input's size: the input
// in the codec's stored form (LZF literal runs, a copied Blosc frame), a little larger, so that
// the filter runs as HDF5's mandatory filters do; 0 where the codec has none (deflate, whose
// attempt already had room for its worst case).
std::size_t store_one(const SectionFilter& f, const std::uint8_t* in, std::size_t size, std::size_t element_size,
                      Bytes& out) {
  switch (f.id) {
    case kFilterLzf: {
      const std::size_t capacity = lzf_store_bound(size);
      return lzf_store(room(out, capacity), capacity, in, size);
    }
    case kFilterBlosc: {
      const std::size_t capacity = blosc_compress_bound(size);
      return blosc_store(room(out, capacity), capacity, in, size, blosc_params(f, element_size));
    }
  }
  return 0;
}

// One filter backward from `in` into `out` (grown as needed, never shrunk: a buffer reused
// between chunks is zeroed by its growth only, not per chunk); returns the bytes produced.
std::size_t reverse_one(const SectionFilter& f, ByteView in, std::size_t element_size, std::size_t final_size,
                        bool last, Bytes& out) {
  switch (f.id) {
    case kFilterShuffle:
      unshuffle_bytes(room(out, in.size), in.data, in.size, element_size);
      return in.size;
    case kFilterDeflate:
      if (last) {
        deflate_decompress_exact(room(out, final_size), final_size, in.data, in.size);
        return final_size;
      }
      out = deflate_decompress(in.data, in.size, final_size, expansion_bound(final_size));
      return out.size();
    case kFilterLzf: {
      const std::size_t capacity = last ? final_size : expansion_bound(final_size);
      return lzf_decompress(room(out, capacity), capacity, in.data, in.size);
    }
    case kFilterBlosc: {
      const std::size_t size = blosc_decoded_size(in.data, in.size);
      H5SPARSE_FAIL_IF(size > expansion_bound(final_size), ErrorCode::corrupt_data, "blosc frame decodes too large");
      blosc_decompress(room(out, size), size, in.data, in.size, blosc_threads_from_environment());
      return size;
    }
  }
  throw Error(ErrorCode::corrupt_data, "section filter " + std::to_string(f.id) + " is not supported");
}

}  // namespace

void validate_pipeline(const SectionPipeline& pipeline) {
  H5SPARSE_FAIL_IF(pipeline.size() > kMaxFilters, ErrorCode::invalid_argument, "a section pipeline holds at most 32 filters");
  for (const SectionFilter& f : pipeline) {
    switch (f.id) {
      case kFilterShuffle:
      case kFilterLzf:
        break;
      case kFilterDeflate:
        H5SPARSE_FAIL_IF(!f.cd_values.empty() && f.cd_values[0] > 9, ErrorCode::invalid_argument,
                "deflate level must be 0-9, got " + std::to_string(f.cd_values[0]));
        break;
      case kFilterBlosc: {
        const auto& cd = f.cd_values;
        H5SPARSE_FAIL_IF(cd.size() > 4 && cd[4] > 9, ErrorCode::invalid_argument,
                "blosc clevel must be 0-9, got " + std::to_string(cd.size() > 4 ? cd[4] : 0));
        H5SPARSE_FAIL_IF(cd.size() > 5 && cd[5] > 2, ErrorCode::invalid_argument,
                "blosc shuffle must be 0 (none), 1 (byte) or 2 (bit)");
        H5SPARSE_FAIL_IF(cd.size() > 6 && (cd[6] > 5 || !blosc_compressor_available(BloscCompressor(cd[6]))),
                ErrorCode::invalid_argument,
                "blosc compressor must be 0 blosclz, 1 lz4, 2 lz4hc, 4 zlib or 5 zstd");
        break;
      }
      default:
        throw Error(ErrorCode::invalid_argument,
                    "section filter " + std::to_string(f.id) +
                        " is not supported; section pipelines run 1 (deflate), 2 (shuffle), 32000 (lzf), "
                        "32001 (blosc)");
    }
  }
}

ByteView apply_pipeline_to(const SectionPipeline& pipeline, const std::uint8_t* data, std::size_t size,
                           std::size_t element_size, std::uint32_t* filter_mask, std::array<Bytes, 2>& scratch) {
  *filter_mask = 0;
  ByteView current{data, size};
  std::size_t next = 0;  // the scratch buffer the next filter writes
  for (std::size_t i = 0; i < pipeline.size(); ++i) {
    const SectionFilter& f = pipeline[i];
    if (current.size == 0) {  // nothing to filter: record the filter as skipped
      *filter_mask |= 1u << i;
      continue;
    }
    std::size_t produced = forward_one(f, current.data, current.size, element_size, scratch[next]);
    const bool compressor = f.id != kFilterShuffle;
    if (compressor && (produced == 0 || produced >= current.size)) {
      if (f.flags & kFilterFlagOptional) {  // does not pay: skipped
        *filter_mask |= 1u << i;
        continue;
      }
      if (produced == 0) produced = store_one(f, current.data, current.size, element_size, scratch[next]);
      H5SPARSE_FAIL_IF(produced == 0, ErrorCode::codec_failure,
              "mandatory section filter " + std::to_string(f.id) + " cannot store this section of " +
                  std::to_string(current.size) + " bytes");
    }
    current = ByteView{scratch[next].data(), produced};
    next ^= 1;
  }
  return current;
}

Bytes apply_pipeline(const SectionPipeline& pipeline, Bytes data, std::size_t element_size,
                     std::uint32_t* filter_mask) {
  std::array<Bytes, 2> scratch;
  const ByteView out = apply_pipeline_to(pipeline, data.data(), data.size(), element_size, filter_mask, scratch);
  if (out.data == data.data()) return data;
  return Bytes(out.data, out.data + out.size);
}

ByteView reverse_pipeline_to(const SectionPipeline& pipeline, ByteView data, std::uint32_t filter_mask,
                             std::size_t element_size, std::size_t unfiltered_size, std::array<Bytes, 2>& scratch) {
  H5SPARSE_FAIL_IF(pipeline.size() < 32 && (filter_mask >> pipeline.size()) != 0, ErrorCode::corrupt_data,
          "filter mask names filters the section pipeline does not have");
  std::size_t last_active = 0;  // the lowest unmasked index runs last on read
  while (last_active < pipeline.size() && (filter_mask >> last_active & 1)) ++last_active;
  ByteView current = data;
  std::size_t next = 0;  // the scratch buffer the next filter writes
  for (std::size_t i = pipeline.size(); i-- > 0;) {
    if (filter_mask >> i & 1) continue;
    const std::size_t produced =
        reverse_one(pipeline[i], current, element_size, unfiltered_size, i == last_active, scratch[next]);
    current = ByteView{scratch[next].data(), produced};
    next ^= 1;
  }
  H5SPARSE_FAIL_IF(current.size != unfiltered_size, ErrorCode::corrupt_data,
          "section decodes to " + std::to_string(current.size) + " bytes, expected " + std::to_string(unfiltered_size));
  return current;
}

Bytes reverse_pipeline(const SectionPipeline& pipeline, ByteView data, std::uint32_t filter_mask,
                       std::size_t element_size, std::size_t unfiltered_size) {
  std::array<Bytes, 2> scratch;
  return detach_result(reverse_pipeline_to(pipeline, data, filter_mask, element_size, unfiltered_size, scratch),
                       scratch);
}

Bytes detach_result(ByteView result, std::array<Bytes, 2>& scratch) {
  for (Bytes& b : scratch)
    if (!b.empty() && b.data() == result.data) {  // handed over, not copied
      b.resize(result.size);
      return std::move(b);
    }
  return Bytes(result.data, result.data + result.size);
}

std::string describe_pipeline(const SectionPipeline& pipeline) {
  if (pipeline.empty()) return "none";
  static const char* const kShuffles[] = {"noshuffle", "shuffle", "bitshuffle"};
  std::string text;
  for (const SectionFilter& f : pipeline) {
    if (!text.empty()) text += ", ";
    switch (f.id) {
      case kFilterShuffle: text += "shuffle"; break;
      case kFilterDeflate: text += "deflate(" + std::to_string(f.cd_values.empty() ? 6 : f.cd_values[0]) + ")"; break;
      case kFilterLzf: text += "lzf"; break;
      case kFilterBlosc: {
        const auto& cd = f.cd_values;
        text += std::string("blosc(") + blosc_compressor_name(BloscCompressor(cd.size() > 6 ? cd[6] : 0)) + ", " +
                std::to_string(cd.size() > 4 ? cd[4] : 5) + ", " + kShuffles[cd.size() > 5 && cd[5] <= 2 ? cd[5] : 1] + ")";
        break;
      }
      default: text += "filter " + std::to_string(f.id);
    }
  }
  return text;
}

}  // namespace h5sparse
