// The chunk store over the native dataset below (native_chunk_store.hpp).
#include "native_chunk_store.hpp"

#include "native_dataset.hpp"

namespace h5sparse::hdf5 {

const std::vector<hsize_t>& NativeChunkStore::at(const Coords& origin) {
  at_.assign(origin.begin(), origin.end());
  return at_;
}

bool NativeChunkStore::read(const Coords& origin, StoredChunk& into) {
  return read_stored_chunk_into(under_, under_vol_id_, at(origin), dxpl_, into);
}

void NativeChunkStore::read_sized(const Coords& origin, std::uint64_t size, StoredChunk& into) {
  read_stored_chunk_of_size(under_, under_vol_id_, at(origin), size, dxpl_, into);
}

void NativeChunkStore::write(const Coords& origin, ByteView bytes) {
  write_stored_chunk(under_, under_vol_id_, at(origin), bytes, dxpl_);
}

bool NativeChunkStore::list(const std::function<void(const Coords&, std::uint64_t)>& f, std::size_t limit) {
  Coords origin;
  bool complete = true;
  const std::vector<IndexEntry> entries = stored_chunk_index(under_, under_vol_id_, rank_, dxpl_, limit, &complete);
  for (const IndexEntry& e : entries) {
    origin.assign(e.origin.begin(), e.origin.end());
    f(origin, e.size);
  }
  return complete;
}

std::uint64_t NativeChunkStore::stored_size(const Coords& origin) {
  return stored_chunk_bytes(under_, under_vol_id_, at(origin), dxpl_);
}

std::string NativeChunkStore::name() const { return "dataset '" + dataset_name(under_, under_vol_id_) + "'"; }

}  // namespace h5sparse::hdf5
