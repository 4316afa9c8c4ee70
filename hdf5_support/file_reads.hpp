// Reads of stored chunks by address straight from the file's descriptor, for threads other
// than the one in HDF5. A chunk read through HDF5 is a copy from the page cache made on the
// calling thread, one chunk at a time; a read touching every chunk of a file (512 random rows
// of a matrix) spends a third of its time there while the workers wait. Read by address, the
// workers copy their own chunks.
//
// Only where HDF5 would read the same bytes from the same descriptor, at the same place:
// - the file uses the sec2 driver (HDF5's default; not core, family, MPI-IO or any other),
//   whose handle is its file descriptor;
// - it is open read-only and not for SWMR reading, so nothing in this process changes it and
//   no chunk moves (another process writing it without SWMR is undefined for HDF5 too);
// - the chunk index's address of a sample chunk, read from the descriptor, gives the bytes
//   HDF5's direct chunk read gives (HDF5 1.14.5 and 2.0 report addresses from the file's
//   start, userblock included; a release reporting them otherwise is read through HDF5).
// Each chunk's checksums still guard its bytes.
#pragma once

#include <H5VLconnector.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "h5sparse/engine/chunk_store.hpp"

namespace h5sparse::hdf5 {

class FileReads {
 public:
  /// The reads of the file of the dataset `under` (of the connector below), checked against
  /// HDF5's read of the chunk at `sample_origin` (stored at `sample`, filter mask 0), or
  /// nothing where only HDF5 may read its chunks. Makes HDF5 calls: on HDF5's thread.
  static std::optional<FileReads> of(void* under, hid_t under_vol_id, hid_t dxpl,
                                     const std::vector<hsize_t>& sample_origin, const ChunkLocation& sample);

  /// Reads `size` bytes at file address `address` into `into` (resized). Any thread; throws
  /// when the file is shorter or the read fails.
  void read(std::uint64_t address, std::uint64_t size, RawBytes& into) const;

 private:
  explicit FileReads(int fd) : fd_(fd) {}
  int fd_;  // HDF5's, open while the dataset is
};

}  // namespace h5sparse::hdf5
