// H5Dread of a sparse dataset, decoded by the connector straight into the caller's buffer.
// The native path (the structured-chunk filter expanding each chunk into a dense chunk that
// HDF5 then copies out) costs two passes over every chunk whatever its density; here the
// destination elements are written once each (a chunk's values or the fill value), and the
// values of an unfiltered chunk are scattered straight from the bytes read. Calls this path does not cover (datatype conversion, data transforms, fill
// time "never") take the native path, which gives the same values.
#include <H5VLconnector_passthru.h>

#include <cstring>

#include "error_stack.hpp"
#include "h5sparse/chunk_scatter.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/stream_store.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::checked;
using hdf5::Handle;
using hdf5::throw_if_negative;

constexpr std::size_t kKeptStoredChunkBytes = std::size_t(16) << 20;

bool has_data_transform(hid_t dxpl) {
  if (dxpl == H5P_DEFAULT || dxpl == H5P_DATASET_XFER_DEFAULT) return false;
  ssize_t length = -1;
  H5E_BEGIN_TRY { length = H5Pget_data_transform(dxpl, nullptr, 0); }  // fails when none is set
  H5E_END_TRY
  return length > 0;
}

// The byte offset of the memory selection when it is one contiguous run of `count` elements
// (H5S_ALL, a whole array, a full row block), or -1.
std::int64_t contiguous_offset(hid_t space, std::size_t element_size, std::uint64_t count) {
  Handle iter = checked(H5Ssel_iter_create(space, element_size, 0), "cannot iterate the memory selection");
  hsize_t offset = 0;
  std::size_t length = 0, nseq = 0, nbytes = 0;
  throw_if_negative(H5Ssel_iter_get_seq_list(iter.get(), 1, SIZE_MAX, &nseq, &nbytes, &offset, &length),
                    "cannot iterate the memory selection");
  return nseq == 1 && length == count * element_size ? std::int64_t(offset) : -1;
}

// Copies `source` (the selection's elements in order) to their places in the memory selection.
void scatter_to_memory(hid_t space, const std::uint8_t* source, std::size_t element_size, std::uint8_t* buf) {
  Handle iter = checked(H5Ssel_iter_create(space, element_size, 0), "cannot iterate the memory selection");
  constexpr std::size_t kBatch = 1024;
  hsize_t offsets[kBatch];
  std::size_t lengths[kBatch];
  while (true) {
    std::size_t nseq = 0, nbytes = 0;
    throw_if_negative(H5Ssel_iter_get_seq_list(iter.get(), kBatch, SIZE_MAX, &nseq, &nbytes, offsets, lengths),
                      "cannot iterate the memory selection");
    if (nseq == 0) break;
    for (std::size_t i = 0; i < nseq; ++i) {
      std::memcpy(buf + offsets[i], source, lengths[i]);
      source += lengths[i];
    }
  }
}

}  // namespace

bool SparseDataset::read(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, void* buf) const {
  if (fill_never_) return false;
  const htri_t same = H5Tequal(mem_type, file_type_.get());
  throw_if_negative(same, "cannot compare the memory and file datatypes");
  if (same == 0 || has_data_transform(dxpl)) return false;

  const Selection sel = resolve(file_space, dxpl);
  const hid_t mspace = memory_space(mem_space, sel);
  if (sel.npoints == 0) return true;
  H5SPARSE_FAIL_IF(buf == nullptr, ErrorCode::invalid_argument, "no buffer to read into");

  const std::uint64_t n = std::uint64_t(sel.npoints);
  const std::size_t es = params_.layout.element_size;
  const std::int64_t offset = contiguous_offset(mspace, es, n);
  Bytes staging;  // selection order, when the memory selection is not one run
  std::uint8_t* dest = static_cast<std::uint8_t*>(buf) + (offset < 0 ? 0 : offset);
  if (offset < 0) {
    staging.resize(std::size_t(n) * es);
    dest = staging.data();
  }
  const std::uint8_t* fill = params_.fill.empty() ? nullptr : params_.fill.data();
  // A destination larger than the caches gets streaming stores (stream_store.hpp).
  const bool streaming = std::size_t(n) * es >= kStreamingMinBytes;

  // One buffer for every chunk, kept by the thread between reads: a fresh one per call costs
  // zeroing and page faults of a whole chunk, which dominates small reads (single elements).
  thread_local StoredChunk stored;
  struct Trim {  // ...unless it grew large
    ~Trim() {
      if (stored.bytes.capacity() > kKeptStoredChunkBytes) Bytes().swap(stored.bytes);
    }
  } trim;
  // Decoded values of filtered chunks, also kept: a fresh buffer per chunk was allocated and
  // zeroed before every decode (64 MiB of zeroing in a full read of a 64 MiB dataset).
  thread_local std::array<Bytes, 2> values_scratch;
  struct TrimScratch {
    ~TrimScratch() {
      for (Bytes& b : values_scratch)
        if (b.capacity() > kKeptStoredChunkBytes) Bytes().swap(b);
    }
  } trim_scratch;
  struct Fence {  // streamed stores are ordered before the call returns, or throws
    bool streaming;
    ~Fence() {
      if (streaming) stream_fence();
    }
  } fence{streaming};
  Bytes dense;  // one chunk, for pieces in arbitrary order (points)
  // Each destination element is written once: a chunk's pieces get its values and the fill
  // value (scatter_chunk), a chunk not stored gets the fill value.
  auto read_pieces = [&](const ChunkPiece* first, std::size_t count) {
    const std::vector<std::uint64_t> origin = sel.grid.chunk_origin(first->chunk);
    if (!read_stored_chunk_into(under_, under_vol_id_, std::vector<hsize_t>(origin.begin(), origin.end()), dxpl,
                                stored)) {
      fill_pieces(first, count, es, fill, dest, streaming);
      return;
    }
    const bool ascending = pieces_ascending(first, count);
    if (ascending && stored.filter_mask == 0) {
      const ChunkView view = view_stored(origin, stored, values_scratch);
      scatter_chunk(view.defined, view.values, view.values_size, first, count, es, fill, dest, streaming);
      return;
    }
    const StructuredChunk chunk = decode_stored(origin, &stored);  // written around the filter
    if (ascending) {
      scatter_chunk(chunk.defined, chunk.values.data(), chunk.values.size(), first, count, es, fill, dest, streaming);
    } else {
      dense.resize(std::size_t(params_.layout.element_count()) * es);
      expand_to_dense(chunk, params_.layout, fill, dense.data());
      for (std::size_t i = 0; i < count; ++i)
        std::memcpy(dest + first[i].source * es, &dense[first[i].in_chunk_start * es], first[i].length * es);
    }
  };
  std::vector<ChunkPiece> pieces;
  if (selects_everything(sel.space, sel.grid, n)) {
    // Every element in row-major order: each chunk's pieces follow from its position (splitting
    // the selection into 65,536 pieces and grouping them was a fifth of a full read).
    for (std::uint64_t chunk = 0, chunks = sel.grid.chunk_count(); chunk < chunks; ++chunk) {
      pieces.clear();
      sel.grid.whole_chunk_pieces(chunk, pieces);
      read_pieces(pieces.data(), pieces.size());
    }
  } else {
    pieces = pieces_of(sel.space, sel.grid);
    for (std::size_t begin = 0; begin < pieces.size();) {
      std::size_t end = begin;
      while (end < pieces.size() && pieces[end].chunk == pieces[begin].chunk) ++end;
      read_pieces(&pieces[begin], end - begin);
      begin = end;
    }
  }
  fence.streaming = false;
  if (streaming) stream_fence();
  if (offset < 0) scatter_to_memory(mspace, staging.data(), es, static_cast<std::uint8_t*>(buf));
  return true;
}

ChunkView SparseDataset::view_stored(const std::vector<std::uint64_t>& origin, const StoredChunk& stored,
                                     std::array<Bytes, 2>& values_scratch) const {
  try {
    return decode_chunk_view(stored.bytes.data(), stored.bytes.size(), params_.layout, &values_scratch);
  } catch (const Error& e) {
    throw Error(e.code(), where(origin) + ": " + e.what());
  }
}

}  // namespace h5sparse::vol
