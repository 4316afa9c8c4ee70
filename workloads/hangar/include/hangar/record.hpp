// Hangar's HDF5_00 record string and its checksum.
//
//   00:<file uid>:<xxhash64 hex>:<dataset number>:<collection index>:<shape>
//
// e.g. "00:rlUK3C:8067007c0f05c359:16:105:10 10". The checksum is what Hangar's
// xxhash.xxh64_hexdigest(array) gives: XXH64 with seed 0 over the sample's raw C-order bytes,
// printed as 16 lowercase hex digits (the canonical big-endian form).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hangar {

using Shape = std::vector<std::uint64_t>;

/// Number of elements of a shape (1 for rank 0, as numpy).
std::uint64_t element_count(const Shape& shape);

/// Hangar's xxh64_hexdigest of `size` raw bytes.
std::string xxh64_hexdigest(const void* data, std::size_t size);

struct Record {
  std::string uid;        ///< file uid: the file is "<uid>.hdf5" in the store directory
  std::string digest;     ///< xxh64_hexdigest of the sample's bytes
  unsigned dataset = 0;   ///< dataset number, "0" .. COLLECTION_COUNT-1
  std::uint64_t index = 0;  ///< collection index (row of the dataset)
  Shape shape;            ///< the sample's shape

  /// The record string, format code "00".
  std::string str() const;
  /// Parses a record string; throws std::invalid_argument saying what is wrong.
  static Record parse(const std::string& text);
};

}  // namespace hangar
