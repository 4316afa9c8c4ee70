// Where the sparse engine keeps a dataset's chunks: stored chunks addressed by their first
// element, as HDF5's direct chunk operations address them. The connector implements it over the
// native dataset below (hdf5_support/native_chunk_store.*), tests over memory
// (test/unit/memory_chunk_store.hpp). The engine calls a store on the thread that called the
// engine: HDF5 is not thread-safe, so chunk I/O paces the calling thread while workers encode
// and decode. The one exception: a store that reads listed chunks by address without the
// library (reads_by_address_on_any_thread) lets the workers read them too.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "h5sparse/codecs.hpp"

namespace h5sparse {

using Coords = std::vector<std::uint64_t>;

/// A chunk as stored: its bytes and the filter mask they were stored with (bit 0 set: stored
/// around the structured-chunk filter, a dense chunk with every element defined).
struct StoredChunk {
  RawBytes bytes;  ///< read into whole: not zeroed when it grows
  unsigned filter_mask = 0;
};

/// ChunkStore::list's limit for a listing of every stored chunk.
constexpr std::size_t kEveryChunk = SIZE_MAX;

/// ChunkLocation::address of a chunk the store does not read by address.
constexpr std::uint64_t kNoAddress = UINT64_MAX;

/// A stored chunk as list() finds it.
struct ChunkLocation {
  std::uint64_t size = 0;               ///< stored bytes
  std::uint64_t address = kNoAddress;  ///< the store's, for read_listed
};

class ChunkStore {
 public:
  virtual ~ChunkStore() = default;

  /// Reads the chunk whose first element is `origin` into `into`, reusing its buffer; false,
  /// `into` unchanged, when none is stored. A failed lookup throws: it never passes for a chunk
  /// that is not stored (a write would then replace what is).
  virtual bool read(const Coords& origin, StoredChunk& into) = 0;
  /// Reads a chunk where list() found it (stored size > 0).
  virtual void read_listed(const Coords& origin, const ChunkLocation& at, StoredChunk& into) = 0;
  /// True when read_listed of chunks with an address may run on any thread, several at once,
  /// while the calling thread goes on with other calls (the bytes are read from the file by
  /// address, without the library). Asked on the calling thread, once an operation.
  virtual bool reads_by_address_on_any_thread() { return false; }
  /// Stores `bytes` as the chunk at `origin` with filter mask 0.
  virtual void write(const Coords& origin, ByteView bytes) = 0;
  /// Calls `f(origin, location)` for the first `limit` stored chunks in the index's order
  /// (kEveryChunk: all); true when that was every stored chunk. The calls come after the
  /// listing, so `f` may read and write chunks.
  virtual bool list(const std::function<void(const Coords&, const ChunkLocation&)>& f, std::size_t limit) = 0;
  /// The stored size of the chunk at `origin`, 0 when none is stored (a lookup in the index).
  virtual std::uint64_t stored_size(const Coords& origin) = 0;
  /// True when a chunk must not be rewritten with its old size (an SWMR writer would overwrite
  /// the flushed copy in place: readers and crash recovery need it intact).
  virtual bool moves_rewritten_chunks() const = 0;
  /// "dataset '/a/b'": the store's name in messages.
  virtual std::string name() const = 0;
};

}  // namespace h5sparse
