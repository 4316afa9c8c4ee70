// The engine's chunk store (core's engine/chunk_store.hpp) over the native dataset of the
// connector below a pass-through connector (native_dataset.hpp): its direct chunk operations,
// called with one transfer property list.
#pragma once

#include <H5VLconnector.h>

#include <optional>

#include "file_reads.hpp"
#include "h5sparse/engine/chunk_store.hpp"
#include "native_dataset.hpp"

namespace h5sparse::hdf5 {

class NativeChunkStore final : public ChunkStore {
 public:
  /// `rank`: the dataset's; `moves_rewritten`: the file is open for SWMR writing (check_writable).
  NativeChunkStore(void* under, hid_t under_vol_id, std::size_t rank, hid_t dxpl, bool moves_rewritten = false) noexcept
      : under_(under), under_vol_id_(under_vol_id), rank_(rank), dxpl_(dxpl), moves_rewritten_(moves_rewritten) {}

  bool read(const Coords& origin, StoredChunk& into) override;
  /// By address (FileReads) once reads_by_address_on_any_thread() said so, else through HDF5.
  void read_listed(const Coords& origin, const ChunkLocation& at, StoredChunk& into) override;
  /// Whether the file allows FileReads, checked with the first chunk of the last listing
  /// that has an address (chunks stored without the structured-chunk filter have none).
  bool reads_by_address_on_any_thread() override;
  void write(const Coords& origin, ByteView bytes) override;
  bool list(const std::function<void(const Coords&, const ChunkLocation&)>& f, std::size_t limit) override;
  std::uint64_t stored_size(const Coords& origin) override;
  bool moves_rewritten_chunks() const override { return moves_rewritten_; }
  std::string name() const override;

 private:
  const std::vector<hsize_t>& at(const Coords& origin);  // as HDF5 takes it (a reused buffer)

  void* under_;
  hid_t under_vol_id_;
  std::size_t rank_;
  hid_t dxpl_;
  bool moves_rewritten_;
  std::vector<hsize_t> at_;
  std::optional<IndexEntry> sample_;      // the first listed chunk with an address
  std::optional<FileReads> file_reads_;  // once allowed
};

}  // namespace h5sparse::hdf5
