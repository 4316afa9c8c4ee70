// Per-section filter pipelines of a structured chunk. A pipeline is a list of HDF5-style
// filters (ID, flags, cd_values), run by the core's own codecs because HDF5 has no public
// API to apply a filter to a buffer. Semantics follow H5Pset_filter2: filters run in order on
// write and in reverse on read; an optional filter that does not pay is skipped and its bit
// set in the section's filter mask; a mandatory one that fails fails the write.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "h5sparse/codecs.hpp"

namespace h5sparse {

constexpr unsigned kFilterFlagOptional = 0x0001;  // H5Z_FLAG_OPTIONAL

struct SectionFilter {
  int id = 0;
  unsigned flags = 0;
  std::vector<unsigned> cd_values;
  bool operator==(const SectionFilter& o) const {
    return id == o.id && flags == o.flags && cd_values == o.cd_values;
  }
};

using SectionPipeline = std::vector<SectionFilter>;

/// Throws Error(invalid_argument) naming the problem for a filter the core cannot run
/// (supported: 1 deflate, 2 shuffle, 32000 lzf, 32001 blosc) or invalid parameters.
void validate_pipeline(const SectionPipeline& pipeline);

/// Runs the pipeline forward. `element_size` drives shuffle and blosc's typesize.
/// Sets bit i of `*filter_mask` for each optional filter i that was skipped.
Bytes apply_pipeline(const SectionPipeline& pipeline, Bytes data, std::size_t element_size,
                     std::uint32_t* filter_mask);

/// apply_pipeline over borrowed bytes: the result is `data` itself when no filter changed it
/// (empty pipeline, every filter skipped), else the front of one of `scratch`'s buffers. The
/// buffers only grow, so scratch reused between chunks is allocated and zeroed once, not per
/// chunk (which cost a pass over the values for every chunk).
ByteView apply_pipeline_to(const SectionPipeline& pipeline, const std::uint8_t* data, std::size_t size,
                           std::size_t element_size, std::uint32_t* filter_mask, std::array<Bytes, 2>& scratch);

/// Runs the pipeline backward, skipping filters whose mask bit is set; the result must be
/// exactly `unfiltered_size` bytes (else corrupt_data).
Bytes reverse_pipeline(const SectionPipeline& pipeline, ByteView data, std::uint32_t filter_mask,
                       std::size_t element_size, std::size_t unfiltered_size);

/// reverse_pipeline into reused buffers (as apply_pipeline_to): the result is `data` itself
/// when every filter was skipped, else the front of one of `scratch`'s buffers.
ByteView reverse_pipeline_to(const SectionPipeline& pipeline, ByteView data, std::uint32_t filter_mask,
                             std::size_t element_size, std::size_t unfiltered_size, std::array<Bytes, 2>& scratch);

/// The bytes of a *_pipeline_to result as a vector of their own: the scratch buffer holding
/// them is handed over, other bytes (the input itself) are copied.
Bytes detach_result(ByteView result, std::array<Bytes, 2>& scratch);

/// Human-readable form, e.g. "shuffle, blosc(zstd, 5, bitshuffle)".
std::string describe_pipeline(const SectionPipeline& pipeline);

}  // namespace h5sparse
