// The engine's chunk store over the public direct chunk API (dataset_chunk_store.hpp).
#include "dataset_chunk_store.hpp"

#include <algorithm>

#include "error_stack.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse::hdf5 {
namespace {

struct Listing {
  std::size_t rank;
  std::vector<DatasetChunkStore::Entry>* entries;
};

int collect_entry(const hsize_t* offset, unsigned filter_mask, haddr_t addr, hsize_t size, void* data) {
  auto* listing = static_cast<Listing*>(data);
  try {
    listing->entries->push_back({Coords(offset, offset + listing->rank), filter_mask, addr, size});
  } catch (...) {
    return H5_ITER_ERROR;  // out of memory: the iteration fails, HDF5 reports it
  }
  return H5_ITER_CONT;
}

}  // namespace

bool DatasetChunkStore::read(const Coords& origin, StoredChunk& into) {
  const std::uint64_t size = stored_size(origin);
  if (size == 0) return false;
  read_listed(origin, ChunkLocation{size}, into);
  return true;
}

void DatasetChunkStore::read_listed(const Coords& origin, const ChunkLocation& location, StoredChunk& into) {
  const std::vector<hsize_t> at(origin.begin(), origin.end());
  into.bytes.resize(location.size);
  std::uint32_t mask = 0;
  throw_if_negative(H5Dread_chunk(dset_, H5P_DEFAULT, at.data(), &mask, into.bytes.data()),
                    "cannot read chunk " + coords_text(origin) + " of " + name());
  into.filter_mask = mask;
}

void DatasetChunkStore::write(const Coords& origin, ByteView bytes) {
  H5SPARSE_FAIL_IF(bytes.size > 0xFFFFFFFFu, ErrorCode::unsupported, "a stored chunk is limited to 4 GiB");
  const std::vector<hsize_t> at(origin.begin(), origin.end());
  throw_if_negative(H5Dwrite_chunk(dset_, H5P_DEFAULT, 0, at.data(), bytes.size, bytes.data),
                    "cannot write chunk " + coords_text(origin) + " of " + name());
}

std::vector<DatasetChunkStore::Entry> DatasetChunkStore::entries() const {
  std::vector<Entry> entries;
  Listing listing{rank_, &entries};
  throw_if_negative(H5Dchunk_iter(dset_, H5P_DEFAULT, collect_entry, &listing),
                    "cannot list the stored chunks of " + name());
  return entries;
}

bool DatasetChunkStore::list(const std::function<void(const Coords&, const ChunkLocation&)>& f, std::size_t limit) {
  const std::vector<Entry> all = entries();
  const std::size_t n = std::min(limit, all.size());
  for (std::size_t i = 0; i < n; ++i) f(all[i].origin, ChunkLocation{all[i].size});
  return n == all.size();
}

std::uint64_t DatasetChunkStore::stored_size(const Coords& origin) {
  const std::vector<hsize_t> at(origin.begin(), origin.end());
  unsigned mask = 0;
  haddr_t address = HADDR_UNDEF;
  hsize_t size = 0;
  throw_if_negative(H5Dget_chunk_info_by_coord(dset_, at.data(), &mask, &address, &size),
                    "cannot look up chunk " + coords_text(origin) + " of " + name());
  return address == HADDR_UNDEF ? 0 : size;  // a chunk is never stored in 0 bytes
}

}  // namespace h5sparse::hdf5
