// Store options: storage modes, compression text, Hangar's chunk and chunk-cache sizes.
#include <cmath>
#include <stdexcept>

#include "hangar/sample_store.hpp"

namespace hangar {

StorageMode parse_storage_mode(const std::string& name) {
  if (name == "dense") return StorageMode::dense;
  if (name == "sparse") return StorageMode::sparse;
  throw std::invalid_argument("unknown storage mode '" + name + "' (valid: dense, sparse)");
}

const char* storage_mode_name(StorageMode mode) { return mode == StorageMode::dense ? "dense" : "sparse"; }

ChunkIndex parse_chunk_index(const std::string& name) {
  if (name == "fixed") return ChunkIndex::fixed_array;
  if (name == "extensible") return ChunkIndex::extensible_array;
  throw std::invalid_argument("unknown chunk index '" + name + "' (valid: fixed, extensible)");
}

const char* chunk_index_name(ChunkIndex index) { return index == ChunkIndex::fixed_array ? "fixed" : "extensible"; }

ChunkIndex default_chunk_index(StorageMode mode) {
  return mode == StorageMode::dense ? ChunkIndex::fixed_array : ChunkIndex::extensible_array;
}

std::optional<h5sparse::CompressionOptions> parse_compression(const std::string& spec) {
  if (spec == "none" || spec == "complib=none" || spec == "complib=None") return std::nullopt;
  return h5sparse::parse_compression_spec(spec);  // "" gives Hangar's default
}

std::uint64_t chunk_length(std::uint64_t row_length, std::size_t itemsize) {
  const std::uint64_t fit = kChunkMaxNbytes / itemsize;
  return std::max<std::uint64_t>(1, std::min(fit, row_length));
}

namespace {
bool is_prime(std::size_t n) {
  if (n < 2) return false;
  for (std::size_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}
}  // namespace

ChunkCache chunk_cache(std::uint64_t sample_nbytes, std::uint64_t chunk_nbytes) {
  std::uint64_t nbytes = sample_nbytes * kCollectionSize;
  nbytes = std::min(std::max(nbytes, kChunkMaxNbytes), kChunkMaxRdccNbytes);
  std::size_t nslots = std::size_t((nbytes + chunk_nbytes - 1) / chunk_nbytes) * 100;
  while (!is_prime(nslots)) ++nslots;  // Hangar's find_next_prime
  return {std::size_t(nbytes), nslots, kChunkRdccW0};
}

}  // namespace hangar
