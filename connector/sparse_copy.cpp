// H5Ocopy of sparse datasets (docs/DESIGN.md, "Copies"). HDF5 copies stored chunks byte for
// byte, so a copy is sparse with the same defined sets; but a chunk it finds in the source's
// chunk cache it copies from there, decoded, and encodes again through the filter, which
// defines every element. Chunks get there only through reads the native path serves (the
// connector decodes the others itself), so the datasets that had such reads are remembered
// and, before a copy, their chunks are read directly once: a direct read drops the chunk from
// the cache (writing it first if it is dirty).
#include <mutex>
#include <set>

#include "native_dataset.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {
namespace {

std::mutex marked_mutex;
std::set<const SparseDataset*> marked;  // datasets whose chunks HDF5 may cache decoded

}  // namespace

void SparseDataset::note_native_read() const {
  std::lock_guard<std::mutex> lock(marked_mutex);
  marked.insert(this);
}

SparseDataset::~SparseDataset() {
  std::lock_guard<std::mutex> lock(marked_mutex);
  marked.erase(this);
}

void evict_decoded_chunks(hid_t dxpl) {
  if (dxpl == H5P_DEFAULT) dxpl = H5P_DATASET_XFER_DEFAULT;
  std::set<const SparseDataset*> datasets;
  {
    std::lock_guard<std::mutex> lock(marked_mutex);
    datasets.swap(marked);
  }
  for (auto it = datasets.begin(); it != datasets.end(); ++it) {
    try {
      (*it)->evict_cached_chunks(dxpl);
    } catch (...) {  // the copy fails; datasets not evicted yet stay marked
      std::lock_guard<std::mutex> lock(marked_mutex);
      marked.insert(it, datasets.end());
      throw;
    }
  }
}

void SparseDataset::evict_cached_chunks(hid_t dxpl) const {
  StoredChunk chunk;
  for (const hdf5::IndexEntry& e : hdf5::stored_chunk_index(under_, under_vol_id_, params().layout.dims.size(), dxpl)) {
    // The size again, just before the read: it changes if HDF5 writes a dirty cached copy.
    hdf5::read_stored_chunk_into(under_, under_vol_id_, e.origin, dxpl, chunk);
  }
}

}  // namespace h5sparse::vol
