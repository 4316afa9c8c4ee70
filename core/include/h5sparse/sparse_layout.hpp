// The parameters of a sparse dataset as the structured-chunk filter's cd_values: what makes a
// file self-describing for any reader (docs/FORMAT.md, "Filter parameters"). Users pass the
// short "request" form (options and section pipelines); set_local completes it with the
// geometry and fill value of the dataset being created. Variable-length datasets have
// parameters version 2 (four pipelines, the element's parts and the true datatype's bytes).
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
/// First cd_value of the complete form of a variable-length dataset (parameters version 2).
constexpr unsigned kVarParamsMagic = 0x53500002u;
/// The size of a variable-length dataset's carrier type (opaque, as big as a heap ID).
constexpr std::size_t kVarCarrierSize = 16;
/// At most this many variable-length members per element (docs/FORMAT.md).
constexpr std::size_t kMaxVarSlots = 64;

/// What a variable-length slot holds (docs/FORMAT.md, parameters version 2).
enum class SlotKind : std::uint8_t { sequence = 0, ascii = 1, utf8 = 2 };

/// Option bits (first word of the request form, second of the complete form).
enum SparseOption : unsigned {
  /// Elements equal to the fill value are not defined by a write (so `dset[...] = dense_array`
  /// from unmodified code stores only the other elements).
  kOptionFillIsUndefined = 0x1,
  /// Request form only: section 3's pipeline is chosen from the datatype when a
  /// variable-length dataset is created (choose_var_data_pipeline); never stored.
  kOptionVarDataByType = 0x2,
};
constexpr unsigned kKnownOptions = kOptionFillIsUndefined;  ///< those a complete form may hold
constexpr unsigned kKnownRequestOptions = kOptionFillIsUndefined | kOptionVarDataByType;

struct SparseParams {
  unsigned options = 0;
  ChunkLayout layout;
  Bytes fill;  ///< element_size bytes; empty means zeros
  /// Variable-length datasets only (layout.var has slots): each slot's kind, and the true
  /// file datatype as H5Tencode writes it.
  std::vector<SlotKind> slot_kinds;
  Bytes true_type;

  bool fill_is_undefined() const { return options & kOptionFillIsUndefined; }
  bool is_var() const { return layout.is_var(); }
};

/// The request form: [options, n0, (id, flags, ncd, cd...) x n0, n1, (id, flags, ncd, cd...) x n1]
/// and, for variable-length datasets, the pipelines of sections 2 and 3 in the same form.
/// Empty means defaults. Throws Error(invalid_argument) with the position of the problem.
SparseParams parse_request(const std::vector<unsigned>& cd_values);

/// The complete form (written by set_local):
/// [magic, options, element_size, rank, dims x rank, fill_size, fill words x ceil(fill_size/4),
///  section 0 pipeline, section 1 pipeline] (pipelines as in the request form); version 2 for
/// a variable-length layout: [kVarParamsMagic, options, 16, rank, dims x rank, 0, pipelines
/// 0-3, fixed size, slot count, (kind, base size) x slots, type bytes t, words x ceil(t/4)].
std::vector<unsigned> to_cd_values(const SparseParams& params);

/// Parses the complete form, as every reader does; throws corrupt_data when inconsistent.
SparseParams from_cd_values(const unsigned* cd_values, std::size_t count);

/// True when the cd_values are a complete form (start with kSparseParamsMagic or kVarParamsMagic).
bool is_complete_form(const unsigned* cd_values, std::size_t count);

/// Section 3's pipeline for these slots when a request leaves it to the datatype: Blosc zstd,
/// byte shuffle, level 1 when every slot is a string, else 3 (docs/DESIGN.md, "Variable-length
/// data").
SectionPipeline var_data_pipeline(const std::vector<SlotKind>& slot_kinds);

/// Applies kOptionVarDataByType to a variable-length request whose slot kinds are known: sets
/// section 3's pipeline and clears the bit.
void choose_var_data_pipeline(SparseParams& params);

/// The request form of a parameter set (options and pipelines only: four for a
/// variable-length layout or when sections 2-3 have pipelines).
std::vector<unsigned> to_request(const SparseParams& params);

}  // namespace h5sparse
