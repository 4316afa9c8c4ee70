// A sparse dataset's stored structured chunks as the RFC's direct structured-chunk I/O sees
// them, below a pass-through connector (native_dataset.hpp), without the C argument structs
// of the connector's operations: chunk offsets checked against the extent, stored chunks split
// into their sections (header and checksums verified) or assembled from sections, and
// H5Dwrite_chunk's bytes checked to be a chunk the dataset can read. A stored chunk of a sparse
// dataset is one structured chunk behind filter mask 0; its sections are found by the chunk's
// own header. Errors name the operation, the dataset and the chunk.
#pragma once

#include <H5VLconnector.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "h5sparse/direct_chunk.hpp"
#include "native_dataset.hpp"

namespace h5sparse::hdf5 {

class StructChunks {
 public:
  /// The chunks of the dataset `under` (of the connector `under_vol_id`) for one operation,
  /// named `operation` in messages.
  StructChunks(void* under, hid_t under_vol_id, const ChunkLayout& layout, const char* operation, hid_t dxpl);

  /// The chunk origin `offset` names, or an error saying why it names none.
  std::vector<hsize_t> origin(const hsize_t* offset) const;
  /// "<operation> on dataset '<name>'" and ", chunk at (..)": how messages start.
  std::string context() const;
  std::string where(const std::vector<hsize_t>& origin) const;

  /// The chunk stored at `origin`, or nothing.
  std::optional<LocatedChunk> read(const std::vector<hsize_t>& origin) const;
  LocatedChunk read(const IndexEntry& e) const;
  /// Every stored chunk in the index's order that meets the file selection `space` (H5S_ALL:
  /// every one); collected first, so that callers may do chunk I/O of their own.
  std::vector<IndexEntry> index(hid_t space = H5S_ALL) const;
  /// The sections of a stored chunk (header and stored checksums verified).
  std::array<SectionBytes, 2> sections(const StoredChunk& chunk, const std::vector<hsize_t>& origin) const;

  /// Stores the chunk made of `sections` at `origin` (assemble_chunk's checks first). A
  /// read-only file fails; an SWMR writer never overwrites a flushed chunk in place (see
  /// SparseEngine::write_stored).
  void write(const std::vector<hsize_t>& origin, const std::array<SectionBytes, 2>& sections) const;
  /// H5Dwrite_chunk on a sparse dataset stores only what its readers can read: every section
  /// decoded, or with the DXPL's ChunkWriteCheck::checksums the header and stored checksums.
  void check_native_write(const H5VL_native_dataset_chunk_write_t& w) const;

 private:
  void* under_;
  hid_t under_vol_id_;
  const ChunkLayout& layout_;
  const char* operation_;
  hid_t dxpl_;
  std::vector<std::uint64_t> dims_;
};

}  // namespace h5sparse::hdf5
