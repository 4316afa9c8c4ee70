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

void NativeChunkStore::read_listed(const Coords& origin, const ChunkLocation& location, StoredChunk& into) {
  if (file_reads_ && location.address != kNoAddress) {
    file_reads_->read(location.address, location.size, into.bytes);
    into.filter_mask = 0;
    return;
  }
  read_stored_chunk_of_size(under_, under_vol_id_, at(origin), location.size, dxpl_, into);
}

bool NativeChunkStore::reads_by_address_on_any_thread() {
  if (!file_reads_ && sample_) {
    const ChunkLocation sample{sample_->size, sample_->addr};
    file_reads_ = FileReads::of(under_, under_vol_id_, dxpl_, sample_->origin, sample);
  }
  return file_reads_.has_value();
}

void NativeChunkStore::write(const Coords& origin, ByteView bytes) {
  write_stored_chunk(under_, under_vol_id_, at(origin), bytes, dxpl_);
}

// Chunks stored around the structured-chunk filter (filter mask bit 0) get no address: a read
// by address could not give their mask.
bool NativeChunkStore::list(const std::function<void(const Coords&, const ChunkLocation&)>& f, std::size_t limit) {
  Coords origin;
  bool complete = true;
  const std::vector<IndexEntry> entries = stored_chunk_index(under_, under_vol_id_, rank_, dxpl_, limit, &complete);
  for (const IndexEntry& e : entries) {
    const bool addressed = e.filter_mask == 0 && e.addr != HADDR_UNDEF;
    if (addressed && !sample_) sample_ = e;
    origin.assign(e.origin.begin(), e.origin.end());
    f(origin, ChunkLocation{e.size, addressed ? std::uint64_t(e.addr) : kNoAddress});
  }
  return complete;
}

std::uint64_t NativeChunkStore::stored_size(const Coords& origin) {
  return stored_chunk_bytes(under_, under_vol_id_, at(origin), dxpl_);
}

std::string NativeChunkStore::name() const { return "dataset '" + dataset_name(under_, under_vol_id_) + "'"; }

}  // namespace h5sparse::hdf5
