// The steps of an extent change around the store's own (extent_update.hpp).
#include "h5sparse/engine/extent_update.hpp"

namespace h5sparse {
namespace {

// Above this many candidate chunks, one pass over the chunk index is cheaper than a lookup per
// candidate.
constexpr std::uint64_t kLookupLimit = 4096;

}  // namespace

ExtentUpdate::ExtentUpdate(const SparseEngine& engine, ChunkStore& store, const Coords& old_dims,
                           const Coords& new_dims)
    : engine_(engine), store_(store), change_(old_dims, new_dims, engine.params().layout.dims), old_dims_(old_dims) {
  const std::size_t es = engine.params().layout.element_size;
  for (const Coords& origin : boundary_chunks()) {
    if (engine.params().is_var()) {
      prepare_var(origin);
      continue;
    }
    StructuredChunk chunk = engine_.read_chunk(store_, origin);
    if (chunk.defined.none()) continue;  // HDF5 encodes an all-fill chunk as empty again
    if (change_.rewritten_by_hdf5(origin)) {
      rewritten_.push_back({origin, std::move(chunk), ChunkVarElements{}});
      continue;
    }
    const std::uint64_t before = chunk.defined.defined_count();
    h5sparse::erase(chunk, change_.outside_kept(origin), es);
    if (chunk.defined.defined_count() != before) engine_.write_chunk(store_, origin, chunk, 0);
  }
}

void ExtentUpdate::prepare_var(const Coords& origin) {
  ChunkVarElements chunk = engine_.read_var_chunk(store_, origin);
  if (chunk.offsets.empty()) return;
  if (change_.rewritten_by_hdf5(origin)) {
    engine_.write_var_chunk(store_, origin, ChunkVarElements{}, 0);
    rewritten_.push_back({origin, StructuredChunk{}, std::move(chunk)});
    return;
  }
  if (erase_var_elements(chunk, change_.outside_kept(origin), engine_.params().layout.var) > 0)
    engine_.write_var_chunk(store_, origin, chunk, 0);
}

std::vector<Coords> ExtentUpdate::boundary_chunks() const {
  std::vector<Coords> candidates;
  if (change_.boundary_bound() <= kLookupLimit) {
    change_.for_each_boundary_chunk([&](const Coords& o) { candidates.push_back(o); });
    return candidates;
  }
  store_.list([&](const Coords& origin, const ChunkLocation&) {
    if (origin.size() == old_dims_.size() && change_.is_boundary(origin)) candidates.push_back(origin);
  }, kEveryChunk);
  return candidates;
}

void ExtentUpdate::after(bool moved) {
  const std::size_t es = engine_.params().layout.element_size;
  for (Saved& s : rewritten_) {
    if (engine_.params().is_var()) {
      if (moved) erase_var_elements(s.var, change_.outside_kept(s.origin), engine_.params().layout.var);
      engine_.write_var_chunk(store_, s.origin, s.var, 0);
      continue;
    }
    if (moved) h5sparse::erase(s.chunk, change_.outside_kept(s.origin), es);
    engine_.write_chunk(store_, s.origin, s.chunk, 0);
  }
}

}  // namespace h5sparse
