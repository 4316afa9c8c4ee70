// A sparse dataset's chunks made away from its file: elements are written over the stored
// chunks the caller brings, exactly as SparseEngine::write_coordinates writes them into a file,
// and the chunks to store come out as bytes. This is what the workers of a cluster run while
// one process, the only one with the file open, places the bytes with direct chunk writes
// (python/h5sparse/cluster.py); the format needs no HDF5 for any of it.
#pragma once

#include <cstdint>
#include <vector>

#include "h5sparse/engine/chunk_store.hpp"
#include "h5sparse/sparse_layout.hpp"

namespace h5sparse {

/// A chunk at `origin` (its first element) as stored, or as it is to be stored (filter mask 0).
struct ChunkAt {
  Coords origin;
  StoredChunk chunk;
};

struct EncodeRequest {
  const SparseParams& params;
  const Coords& dims;  ///< the dataset's extent
  /// What is stored now in chunks the elements may touch (others count as not stored).
  const std::vector<ChunkAt>& stored;
  /// The file's writer moves rewritten chunks (SWMR): a chunk must not keep its stored size.
  bool moves_rewritten_chunks = false;
};

/// The chunks that writing `n` elements at `coords` (n x rank, row-major, inside the extent)
/// with `values` (in the dataset's element type) stores, in chunk order: only chunks the
/// elements touch, merged with what `request.stored` holds of them. Fixed-size datasets only.
/// Throws Error as write_coordinates does (a coordinate outside the extent, a stored chunk
/// that does not decode), naming the chunk.
std::vector<ChunkAt> encode_coordinates(const EncodeRequest& request, const std::uint64_t* coords, std::size_t n,
                                        const std::uint8_t* values);

}  // namespace h5sparse
