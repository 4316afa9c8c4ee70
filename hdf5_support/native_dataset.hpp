// The native dataset operations a pass-through connector calls on the dataset of the connector
// below (queries and direct chunk I/O of the native connector, through the public H5VL API),
// as C++ functions that throw after HDF5 has pushed its error record. Calls made here never
// come back through the calling connector's own callbacks.
#pragma once

#include <H5VLconnector.h>
#include <H5VLnative.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "h5sparse/engine/chunk_store.hpp"
#include "handle.hpp"

namespace h5sparse::hdf5 {

/// The DCPL, dataspace or datatype of the dataset below (the caller owns the result).
Handle dataset_get(void* under, hid_t under_vol_id, H5VL_dataset_get_t op, hid_t dxpl);

/// One native dataset optional operation (H5VL_NATIVE_DATASET_*) on the dataset below.
herr_t native_dataset_optional(void* under, hid_t under_vol_id, int op, H5VL_native_dataset_optional_args_t* nargs,
                               hid_t dxpl);

/// The dataset's path in its file ("" when it cannot be found), for messages.
std::string dataset_name(void* under, hid_t under_vol_id);

/// Before the connector changes a dataset's stored chunks itself: fails with HDF5's "no write
/// intent on file" when the file is open read-only (a direct chunk write would get as far as
/// the file descriptor); returns whether the file is open for SWMR writing
/// (H5F_ACC_SWMR_WRITE or H5Fstart_swmr_write).
bool check_writable(void* under, hid_t under_vol_id, hid_t dxpl);

/// The file object (of the connector below) that holds the dataset.
void* file_of(void* under, hid_t under_vol_id, hid_t dxpl);

/// True when the dataset's file uses an MPI driver (parallel flavour; else always false). A
/// local probe: no communication, so datasets opened by a single rank stay usable.
bool on_mpi_file(void* under, hid_t under_vol_id);

/// The access flags of the dataset's file (H5F_ACC_RDWR, H5F_ACC_SWMR_WRITE, ...).
unsigned file_intent(void* under, hid_t under_vol_id, hid_t dxpl);

/// A stored chunk (filter mask bit i: filter i of the pipeline was skipped) with its address.
struct LocatedChunk : StoredChunk {
  haddr_t addr = HADDR_UNDEF;
};

/// Where the chunk at `origin` is stored, by H5Dget_chunk_info_by_coord (HDF5 1.14 walks the
/// whole chunk index for it): its stored size, with `chunk.addr` and `chunk.filter_mask` set and
/// no bytes read; nothing when no chunk is stored.
std::optional<hsize_t> locate_stored_chunk(void* under, hid_t under_vol_id, const hsize_t* origin, hid_t dxpl,
                                           LocatedChunk& chunk);

/// The chunk stored at `origin` (a chunk's first element) with its address, or nothing when
/// none is stored. HDF5 1.14 finds a chunk's address by coordinate by walking the whole chunk
/// index: read_stored_chunk_into is one index probe.
std::optional<LocatedChunk> read_stored_chunk(void* under, hid_t under_vol_id, const std::vector<hsize_t>& origin,
                                              hid_t dxpl);

/// The stored size of the chunk at `origin`, 0 when none is stored (one index probe).
std::uint64_t stored_chunk_bytes(void* under, hid_t under_vol_id, const std::vector<hsize_t>& origin, hid_t dxpl);

/// The chunk stored at `origin`, without its address, into `chunk`, whose buffer is reused (a loop over
/// chunks allocates and zeroes it once); false, `chunk` unchanged, when none is stored.
bool read_stored_chunk_into(void* under, hid_t under_vol_id, const std::vector<hsize_t>& origin, hid_t dxpl,
                            StoredChunk& chunk);

/// The chunk stored at `origin`, whose stored size `size` (> 0) the caller knows from the chunk
/// index, read into `chunk` (buffer reused, address HADDR_UNDEF) without a size query.
void read_stored_chunk_of_size(void* under, hid_t under_vol_id, const std::vector<hsize_t>& origin, hsize_t size,
                               hid_t dxpl, StoredChunk& chunk);

/// One chunk of the native chunk index.
struct IndexEntry {
  std::vector<hsize_t> origin;  ///< the chunk's first element
  hsize_t size;                 ///< stored bytes
  haddr_t addr;                 ///< where in the file
  unsigned filter_mask = 0;     ///< filter i of the pipeline skipped: bit i
};

/// The chunk an index entry lists, read without looking it up again.
LocatedChunk read_listed_chunk(void* under, hid_t under_vol_id, const IndexEntry& entry, hid_t dxpl);

/// Every stored chunk, in the index's order (H5Dchunk_iter; collected first, so that callers
/// may do chunk I/O of their own with the result); at most `limit` of them, `*complete` (when
/// given) telling whether that was all.
std::vector<IndexEntry> stored_chunk_index(void* under, hid_t under_vol_id, std::size_t rank, hid_t dxpl,
                                           std::size_t limit = SIZE_MAX, bool* complete = nullptr);

/// The kind of chunk index of the dataset below (H5Dget_chunk_index_type).
H5D_chunk_index_t chunk_index_type(void* under, hid_t under_vol_id, hid_t dxpl);

/// Stores `bytes` as the chunk at `origin` with `filter_mask` (H5Dwrite_chunk).
void write_stored_chunk(void* under, hid_t under_vol_id, const std::vector<hsize_t>& origin, ByteView bytes,
                        hid_t dxpl, unsigned filter_mask = 0);

}  // namespace h5sparse::hdf5
