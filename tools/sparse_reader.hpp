// Reading a sparse dataset the way any HDF5 1.14 program can: its parameters from the
// structured-chunk filter's cd_values in the DCPL, its stored chunks with H5Dchunk_iter and
// H5Dread_chunk on the native connector (hdf5_support's DatasetChunkStore), decoded by the
// sparse engine as the connector decodes them. No VOL connector is involved,
// so this works on files from anywhere and never depends on how a connector answers chunk
// queries for sparse datasets.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dataset_chunk_store.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/selection_codec.hpp"
#include "h5sparse/sparse_layout.hpp"
#include "h5sparse/structured_chunk.hpp"
#include "h5sparse/var_chunk.hpp"
#include "handle.hpp"

namespace h5sparse::tool {

/// One stored chunk, as H5Dchunk_iter reports it (filter mask bit 0 set: stored without the
/// structured-chunk filter).
using ChunkEntry = hdf5::DatasetChunkStore::Entry;

/// What one chunk holds, beyond its decoded content (for per-chunk reports).
struct ChunkAnatomy {
  std::vector<SectionInfo> sections;    ///< sizes, masks, checksums: 2 sections, 4 when variable-length
  SelectionEncoding encoding{};         ///< section 0's encoding tag
  std::uint64_t defined_in_extent = 0;  ///< defined elements inside the current extent
};

/// Paths of every sparse dataset in the file, in list_datasets() order.
std::vector<std::string> sparse_dataset_paths(hid_t file);

class SparseReader {
 public:
  /// True when the dataset's pipeline holds the structured-chunk filter in its complete form.
  static bool is_sparse(hid_t dset);

  /// Reads the parameters; throws Error(invalid_argument) when the dataset is not sparse
  /// (naming its layout) and Error(corrupt_data) when its parameters do not parse.
  SparseReader(hid_t dset, std::string path);

  hid_t id() const noexcept { return dset_; }
  const std::string& path() const noexcept { return path_; }
  const SparseParams& params() const noexcept { return engine_->params(); }
  const ChunkLayout& layout() const noexcept { return params().layout; }
  std::size_t rank() const noexcept { return dims_.size(); }
  const std::vector<std::uint64_t>& dims() const noexcept { return dims_; }
  /// Bytes of the fill value in the file type (params' fill, or zeros).
  const Bytes& fill() const noexcept { return fill_; }

  /// Every stored chunk, in the order of HDF5's chunk index.
  std::vector<ChunkEntry> stored_chunks() const;
  /// The chunk's stored bytes and filter mask (H5Dread_chunk).
  StoredChunk read_raw(const ChunkEntry& chunk) const;
  /// Whether the dataset holds variable-length values (decode_var, not decode).
  bool is_var() const noexcept { return params().is_var(); }
  /// The true datatype: the dataset's own, or a variable-length dataset's (its carrier's
  /// parameters), as the connector presents it.
  hdf5::Handle true_type() const;

  /// Decodes and verifies a fixed-size chunk, as the engine does; errors name the dataset and
  /// the chunk. A chunk stored without the filter (mask bit 0) is a dense chunk: every element
  /// defined. Error(unsupported) for a variable-length dataset.
  StructuredChunk decode(const ChunkEntry& chunk, const StoredChunk& raw) const;
  /// decode for a variable-length dataset's chunk (format version 3).
  ChunkVarElements decode_var(const ChunkEntry& chunk, const StoredChunk& raw) const;
  /// The defined elements of a chunk of either kind of dataset, decoded and verified.
  ChunkSelection defined(const ChunkEntry& chunk, const StoredChunk& raw) const;
  /// Header, selection encoding and defined count of a chunk already decoded.
  ChunkAnatomy anatomy(const ChunkEntry& chunk, const StoredChunk& raw, const ChunkSelection& defined) const;

  /// Calls f(row, first, length, value_index) for every run of defined elements inside the
  /// extent, along the last dimension: `row` holds the other rank-1 coordinates (dataset
  /// coordinates), `value_index` is the index among the chunk's defined elements (its values)
  /// of the run's first element.
  using RunVisitor = std::function<void(const std::uint64_t* row, std::uint64_t first, std::uint64_t length,
                                        std::uint64_t value_index)>;
  void for_each_defined_run(const ChunkEntry& chunk, const ChunkSelection& defined, const RunVisitor& f) const;

  /// "(16,0)": how errors and reports name a chunk.
  std::string chunk_name(const ChunkEntry& chunk) const;

 private:
  hid_t dset_;
  std::string path_;
  std::unique_ptr<SparseEngine> engine_;
  mutable hdf5::DatasetChunkStore store_;
  std::vector<std::uint64_t> dims_;
  Bytes fill_;
};

}  // namespace h5sparse::tool
