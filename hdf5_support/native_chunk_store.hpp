// The engine's chunk store (core's engine/chunk_store.hpp) over the native dataset of the
// connector below a pass-through connector (native_dataset.hpp): its direct chunk operations,
// called with one transfer property list.
#pragma once

#include <H5VLconnector.h>

#include "h5sparse/engine/chunk_store.hpp"

namespace h5sparse::hdf5 {

class NativeChunkStore final : public ChunkStore {
 public:
  /// `rank`: the dataset's; `moves_rewritten`: the file is open for SWMR writing (check_writable).
  NativeChunkStore(void* under, hid_t under_vol_id, std::size_t rank, hid_t dxpl, bool moves_rewritten = false) noexcept
      : under_(under), under_vol_id_(under_vol_id), rank_(rank), dxpl_(dxpl), moves_rewritten_(moves_rewritten) {}

  bool read(const Coords& origin, StoredChunk& into) override;
  void read_sized(const Coords& origin, std::uint64_t size, StoredChunk& into) override;
  void write(const Coords& origin, ByteView bytes) override;
  bool list(const std::function<void(const Coords&, std::uint64_t)>& f, std::size_t limit) override;
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
};

}  // namespace h5sparse::hdf5
