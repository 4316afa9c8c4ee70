// Chunks the parallel connector encoded itself, waiting for HDF5's collective filtered write.
//
// Under MPI-IO the connector cannot store a structured chunk directly (H5Dwrite_chunk from
// several ranks loses data). Instead each chunk's owner rank merges the chunk, encodes it, and
// writes the chunk's dense image (defined values, fill elsewhere) with a collective H5Dwrite;
// HDF5 hands that image to the structured-chunk filter, which returns the pre-encoded chunk
// registered for exactly that image (byte for byte, same dataset parameters). The connector
// makes images unambiguous per write round (two chunks with the same image but different
// encodings go into different rounds) and checks afterwards that every registered chunk, and
// nothing else, was taken (docs/DESIGN.md, "Parallel HDF5").
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "h5sparse/codecs.hpp"

namespace h5sparse::hdf5 {

class PreEncodedChunks {
 public:
  /// `cd_values`: the dataset's complete structured-chunk parameters; other datasets' chunks
  /// are never matched.
  explicit PreEncodedChunks(std::vector<unsigned> cd_values);

  /// Registers `encoded` for the dense image [dense, dense + size), which must outlive this set.
  void add(const std::uint8_t* dense, std::size_t size, Bytes encoded);
  /// The encoded chunk registered for this dense image (taken: each registration serves one
  /// chunk), or nullptr. A call for this dataset that matches nothing is counted as a miss.
  const Bytes* take(const unsigned* cd_values, std::size_t cd_count, const std::uint8_t* dense, std::size_t size);

  std::size_t misses() const { return misses_; }
  /// Registrations not taken.
  std::size_t pending() const;

  /// The set HDF5's filter calls consult (one API call runs at a time in HDF5), if any.
  static PreEncodedChunks* active();

  /// Makes a set active for one scope.
  class Activation {
   public:
    explicit Activation(PreEncodedChunks& set);
    ~Activation();
    Activation(const Activation&) = delete;
    Activation& operator=(const Activation&) = delete;
  };

 private:
  struct Entry {
    const std::uint8_t* dense;
    std::size_t size;
    Bytes encoded;
    bool taken;
  };
  std::vector<unsigned> cd_values_;
  std::vector<Entry> entries_;
  std::unordered_multimap<std::uint64_t, std::size_t> by_hash_;
  std::size_t misses_ = 0;
};

/// The narrow hook through which a set reaches HDF5's filter calls. Each .so that links this
/// file (the filter plugin, the connector) has its own active set, and HDF5 calls the class
/// registered for 45100, normally the plugin's. For its lifetime, this registers the caller's
/// copy of the class in its place and, when it ends, the class of the filter plugin HDF5 loaded
/// again, so that other datasets and later calls never see the caller's copy. Construct and
/// destroy it inside one HDF5 callback (HDF5's lock is held: no other thread's call runs with
/// the caller's copy). Throws Error when no loaded filter plugin provides 45100: the class to
/// restore would be unknown, so nothing is replaced.
class StructuredChunkClassOverride {
 public:
  explicit StructuredChunkClassOverride(const H5Z_class2_t* ours);
  ~StructuredChunkClassOverride();
  StructuredChunkClassOverride(const StructuredChunkClassOverride&) = delete;
  StructuredChunkClassOverride& operator=(const StructuredChunkClassOverride&) = delete;

 private:
  const H5Z_class2_t* plugin_;
};

/// The class a loaded HDF5 filter plugin provides for `id` (asked of the plugin's
/// H5PLget_plugin_info), or nullptr when no loaded library does.
const H5Z_class2_t* loaded_plugin_filter_class(H5Z_filter_t id);

}  // namespace h5sparse::hdf5
