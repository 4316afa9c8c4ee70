// A Hangar-style sample store: the HDF5_00 storage method of Hangar's local HDF5 backend.
//
// Each file "<uid>.hdf5" holds COLLECTION_COUNT datasets "0".."N-1" of shape
// (COLLECTION_SIZE, prod(schema shape)); a sample of any shape up to the schema shape is
// flattened (C order) into the first prod(shape) elements of one row. Chunks are one row long
// in the first dimension and at most CHUNK_MAX_NBYTES (255,000: fits L2) in the second, as
// Hangar computes them. Compression is chosen with Hangar's vocabulary. The file is opened
// SWMR for writing (latest format, H5Fstart_swmr_write) and every write is flushed, so readers
// in other processes (SWMR read) see each sample once its record is handed out.
//
// Two storage modes: dense, as Hangar: zero-initialised datasets, a sample's row is padded
// with zeros; sparse: the datasets are h5sparse sparse datasets, a write defines only the
// sample's elements and the chosen compression is section 1's (values) pipeline. Sparse
// writes need the h5sparse VOL connector; reads of both modes work with or without it.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h5sparse/compression_options.hpp"
#include "hangar/dtype.hpp"
#include "hangar/record.hpp"

namespace hangar {

enum class StorageMode { dense, sparse };
StorageMode parse_storage_mode(const std::string& name);
const char* storage_mode_name(StorageMode mode);

/// How HDF5 indexes a collection's chunks (one chunk per row). Hangar gives its collections a
/// fixed maximum shape, which HDF5 indexes with a fixed array: its one data block (an entry for
/// each of the COLLECTION_SIZE rows) is re-encoded, checksummed and rewritten by every
/// per-sample flush. An unlimited maximum along the collection axis (the extent stays
/// COLLECTION_SIZE, so readers see the same datasets) gives an extensible array instead, whose
/// flush rewrites only the small data block holding the new row's entry.
enum class ChunkIndex { fixed_array, extensible_array };
ChunkIndex parse_chunk_index(const std::string& name);  ///< "fixed" or "extensible"
const char* chunk_index_name(ChunkIndex index);
/// Dense: the fixed array, exactly as Hangar; sparse: the extensible array (docs/DESIGN.md).
ChunkIndex default_chunk_index(StorageMode mode);

/// Hangar's constants (backends/hdf5_00.py).
inline constexpr unsigned kCollectionSize = 250;
inline constexpr unsigned kCollectionCount = 100;
inline constexpr std::uint64_t kChunkMaxNbytes = 255'000;  // < 256 KB, fits L2
inline constexpr std::uint64_t kChunkMaxRdccNbytes = 100'000'000;
inline constexpr double kChunkRdccW0 = 0.75;

struct StoreOptions {
  StorageMode mode = StorageMode::dense;
  Shape schema_shape{64, 64, 3};
  Dtype dtype = Dtype::u1;
  /// Hangar vocabulary; std::nullopt: no compression (Hangar's complib None).
  std::optional<h5sparse::CompressionOptions> compression = h5sparse::CompressionOptions{};
  unsigned collection_size = kCollectionSize;
  unsigned collection_count = kCollectionCount;
  bool flush_every_write = true;  ///< Hangar flushes the dataset after each sample
  std::optional<ChunkIndex> chunk_index;  ///< unset: default_chunk_index(mode)
};

/// "none" or the text form "complib=...,complevel=...,shuffle=..." ("" = Hangar's default).
std::optional<h5sparse::CompressionOptions> parse_compression(const std::string& spec);

/// Hangar's chunk length along the flattened sample axis: floor(255000 / itemsize), at most
/// the row length.
std::uint64_t chunk_length(std::uint64_t row_length, std::size_t itemsize);

/// Hangar's raw-data chunk cache: (nbytes, nslots: next prime above ceil(nbytes/chunk)*100).
struct ChunkCache {
  std::size_t nbytes;
  std::size_t nslots;
  double w0;
};
ChunkCache chunk_cache(std::uint64_t sample_nbytes, std::uint64_t chunk_nbytes);

/// Writes samples into files of one schema; opens a new file when every collection of the
/// current one is full.
class StoreWriter {
 public:
  StoreWriter(std::string directory, StoreOptions options);
  ~StoreWriter();
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  /// Stores one C-order sample of `shape` (rank and each dimension within the schema shape)
  /// and returns its record. The sample is flushed when this returns.
  Record write(const void* data, const Shape& shape);
  /// Records the next location in the file's attributes and closes it.
  void close();

  const StoreOptions& options() const { return options_; }
  /// Paths of the files written so far.
  const std::vector<std::string>& files() const { return files_; }

 private:
  struct File;
  void create_file();
  std::string directory_;
  StoreOptions options_;
  std::uint64_t row_length_;
  std::unique_ptr<File> file_;
  std::vector<std::string> files_;
};

struct ReaderOptions {
  bool swmr = true;     ///< open SWMR read (Hangar always does)
  bool refresh = false;  ///< H5Drefresh before each read: follow a writer that is still writing
};

/// Reads samples back by record; every sample's digest is verified.
class StoreReader {
 public:
  explicit StoreReader(std::string directory, ReaderOptions options = {});
  ~StoreReader();
  StoreReader(const StoreReader&) = delete;
  StoreReader& operator=(const StoreReader&) = delete;

  struct Sample {
    Dtype dtype;
    Shape shape;
    std::vector<std::uint8_t> bytes;  ///< C order
  };
  /// Reads and verifies one sample; throws DigestMismatch when its bytes do not hash to the
  /// record's digest, StoreError (with HDF5's error stack) when HDF5 fails.
  Sample read(const Record& record);
  /// As read(), into `out` (resized); returns the dtype. Reuses the caller's buffer.
  Dtype read_into(const Record& record, std::vector<std::uint8_t>& out);

 private:
  struct File;
  File& file(const std::string& uid);
  std::string directory_;
  ReaderOptions options_;
  std::map<std::string, std::unique_ptr<File>> files_;
};

}  // namespace hangar
