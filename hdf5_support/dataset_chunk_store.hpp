// The sparse engine's chunk store over a dataset's public direct chunk API (H5Dread_chunk,
// H5Dwrite_chunk, H5Dchunk_iter, H5Dget_chunk_info_by_coord): for programs that work on the
// stored chunks without the VOL connector, such as h5sparse-tool. (The connector's own store,
// native_chunk_store.hpp, calls the native connector below it instead.)
#pragma once

#include <hdf5.h>

#include <string>

#include "h5sparse/engine/chunk_store.hpp"

namespace h5sparse::hdf5 {

class DatasetChunkStore final : public ChunkStore {
 public:
  /// `dset` stays the caller's; `path` names the dataset in messages.
  DatasetChunkStore(hid_t dset, std::string path, std::size_t rank) : dset_(dset), path_(std::move(path)), rank_(rank) {}

  bool read(const Coords& origin, StoredChunk& into) override;
  void read_listed(const Coords& origin, const ChunkLocation& at, StoredChunk& into) override;
  void write(const Coords& origin, ByteView bytes) override;
  bool list(const std::function<void(const Coords&, const ChunkLocation&)>& f, std::size_t limit) override;
  std::uint64_t stored_size(const Coords& origin) override;
  bool moves_rewritten_chunks() const override { return false; }
  std::string name() const override { return "dataset '" + path_ + "'"; }

  /// A stored chunk as H5Dchunk_iter lists it.
  struct Entry {
    Coords origin;
    unsigned filter_mask;
    haddr_t address;
    std::uint64_t size;
  };
  /// Every stored chunk, in the index's order.
  std::vector<Entry> entries() const;

 private:
  hid_t dset_;
  std::string path_;
  std::size_t rank_;
};

}  // namespace h5sparse::hdf5
