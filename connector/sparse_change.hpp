// The generation of sparse data in this process: a counter that every change of a sparse
// dataset's stored chunks or extent advances (before and after, so that a failure half-way
// leaves nothing cached either). Decoded chunks are cached per dataset handle
// (decoded_chunk_cache.hpp) and valid only at the generation they were decoded at, so a
// change through any handle of any sparse dataset makes every cache start over: coarse, but
// nothing to track, and a handle cannot miss a change made through another one.
#pragma once

#include <cstdint>

namespace h5sparse::vol {

std::uint64_t sparse_generation() noexcept;
void note_sparse_change() noexcept;

/// Advances the generation when made and again when destroyed.
class SparseChange {
 public:
  SparseChange() noexcept { note_sparse_change(); }
  ~SparseChange() { note_sparse_change(); }
  SparseChange(const SparseChange&) = delete;
  SparseChange& operator=(const SparseChange&) = delete;
};

}  // namespace h5sparse::vol
