// An extent change of a sparse dataset (docs/DESIGN.md, "Extent changes"): the store changes
// the extent itself (HDF5's H5Dset_extent); around that change the engine keeps the defined set
// equal to the model, in which only elements inside both the old and the new extent (the kept
// box, extent_change.hpp) keep their meaning:
//  - a shrink makes HDF5 read each stored chunk straddling the new extent through the filter,
//    overwrite the cut part with the fill value and encode the chunk again, which would define
//    every element (or drop defined elements equal to the fill value). Those chunks are read
//    before the change and written back after it with the cut part erased;
//  - a grow leaves stored chunks alone, so whatever a chunk holds outside the old extent (only
//    writers without the connector put anything there) would become visible: it is erased
//    before the change.
// Variable-length chunks have no dense form for HDF5 to rewrite: a chunk HDF5 would rewrite is
// saved and replaced by the empty chunk (which the filter expands to zeros) before the change.
#pragma once

#include <vector>

#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/extent_change.hpp"

namespace h5sparse {

class ExtentUpdate {
 public:
  /// The step before the store changes the extent from `old_dims` to `new_dims`.
  ExtentUpdate(const SparseEngine& engine, ChunkStore& store, const Coords& old_dims, const Coords& new_dims);
  /// The step after: `moved` tells whether the extent is now the new one (a failed change may
  /// have moved it or not). Writes back what the extent in force says the rewritten chunks hold.
  void after(bool moved);

 private:
  struct Saved {
    Coords origin;
    StructuredChunk chunk;
    ChunkVarElements var;  ///< a variable-length dataset's chunk
  };
  std::vector<Coords> boundary_chunks() const;
  void prepare_var(const Coords& origin);

  const SparseEngine& engine_;
  ChunkStore& store_;
  ExtentChange change_;
  Coords old_dims_;
  std::vector<Saved> rewritten_;
};

}  // namespace h5sparse
