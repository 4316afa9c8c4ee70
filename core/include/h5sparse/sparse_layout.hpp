// The parameters of a sparse dataset as the structured-chunk filter's cd_values: what makes a
// file self-describing for any reader (docs/FORMAT.md, "Filter parameters"). Users pass the
// short "request" form (options and section pipelines); set_local completes it with the
// geometry and fill value of the dataset being created.
#pragma once

#include <cstdint>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "h5sparse/structured_chunk.hpp"

namespace h5sparse {

/// Filter ID of the structured-chunk filter: from the range HDF5 leaves to unregistered
/// filters (32768-65535), pending registration with The HDF Group.
constexpr int kFilterStructuredChunk = 45100;

/// First cd_value of the complete form ("SP" + format version 1); never a valid option word.
constexpr unsigned kSparseParamsMagic = 0x53500001u;

/// Option bits (first word of the request form, second of the complete form).
enum SparseOption : unsigned {
  /// Elements equal to the fill value are not defined by a write (so `dset[...] = dense_array`
  /// from unmodified code stores only the other elements).
  kOptionFillIsUndefined = 0x1,
};
constexpr unsigned kKnownOptions = kOptionFillIsUndefined;

struct SparseParams {
  unsigned options = 0;
  ChunkLayout layout;
  Bytes fill;  ///< element_size bytes; empty means zeros

  bool fill_is_undefined() const { return options & kOptionFillIsUndefined; }
};

/// The request form: [options, n0, (id, flags, ncd, cd...) x n0, n1, (id, flags, ncd, cd...) x n1].
/// Empty means defaults. Throws Error(invalid_argument) with the position of the problem.
SparseParams parse_request(const std::vector<unsigned>& cd_values);

/// The complete form (written by set_local):
/// [magic, options, element_size, rank, dims x rank, fill_size, fill words x ceil(fill_size/4),
///  section 0 pipeline, section 1 pipeline] (pipelines as in the request form).
std::vector<unsigned> to_cd_values(const SparseParams& params);

/// Parses the complete form, as every reader does; throws corrupt_data when inconsistent.
SparseParams from_cd_values(const unsigned* cd_values, std::size_t count);

/// True when the cd_values are the complete form (start with kSparseParamsMagic).
bool is_complete_form(const unsigned* cd_values, std::size_t count);

/// The request form of a parameter set (options and pipelines only).
std::vector<unsigned> to_request(const SparseParams& params);

}  // namespace h5sparse
