// encode_coordinates: SparseEngine::write_coordinates over a store that holds the chunks the
// caller brought and keeps what the engine writes, so that chunks made here are byte for byte
// those write_coordinates would store in the file.
#include "h5sparse/engine/chunk_encoder.hpp"

#include <map>
#include <string>

#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

class CarriedChunks final : public ChunkStore {
 public:
  CarriedChunks(const std::vector<ChunkAt>& stored, bool moves) : moves_(moves) {
    for (const ChunkAt& c : stored) {
      const bool added = stored_.emplace(c.origin, &c.chunk).second;
      H5SPARSE_FAIL_IF(!added, ErrorCode::invalid_argument, where(c.origin) + " was given twice");
    }
  }

  bool read(const Coords& origin, StoredChunk& into) override {
    const auto it = stored_.find(origin);
    if (it == stored_.end()) return false;
    into.bytes.assign(it->second->bytes.begin(), it->second->bytes.end());
    into.filter_mask = it->second->filter_mask;
    return true;
  }
  void read_listed(const Coords& origin, const ChunkLocation& at, StoredChunk& into) override {
    H5SPARSE_FAIL_IF(!read(origin, into) || into.bytes.size() != at.size, ErrorCode::invalid_argument,
                     where(origin) + " is not stored in that size");
  }
  void write(const Coords& origin, ByteView bytes) override {
    written_[origin] = Bytes(bytes.data, bytes.data + bytes.size);
  }
  bool list(const std::function<void(const Coords&, const ChunkLocation&)>& f, std::size_t limit) override {
    std::size_t listed = 0;
    for (const auto& [origin, chunk] : stored_) {
      if (listed++ == limit) return false;
      f(origin, ChunkLocation{chunk->bytes.size()});
    }
    return true;
  }
  std::uint64_t stored_size(const Coords& origin) override {
    const auto it = stored_.find(origin);
    return it == stored_.end() ? 0 : it->second->bytes.size();
  }
  bool moves_rewritten_chunks() const override { return moves_; }
  std::string name() const override { return "the chunks to encode"; }

  std::vector<ChunkAt> take_written() {
    std::vector<ChunkAt> out;
    out.reserve(written_.size());
    for (auto& [origin, bytes] : written_) {
      ChunkAt c{origin, {}};
      c.chunk.bytes.assign(bytes.begin(), bytes.end());
      out.push_back(std::move(c));
    }
    written_.clear();
    return out;
  }

 private:
  static std::string where(const Coords& origin) {
    std::string s = "the stored chunk at (";
    for (std::size_t d = 0; d < origin.size(); ++d) s += (d ? ", " : "") + std::to_string(origin[d]);
    return s + ")";
  }

  std::map<Coords, const StoredChunk*> stored_;
  std::map<Coords, Bytes> written_;  // by origin: the engine's chunk order is row-major too
  bool moves_;
};

}  // namespace

std::vector<ChunkAt> encode_coordinates(const EncodeRequest& request, const std::uint64_t* coords, std::size_t n,
                                        const std::uint8_t* values) {
  const SparseParams& params = request.params;
  H5SPARSE_FAIL_IF(params.is_var(), ErrorCode::unsupported,
                   "chunks of variable-length datasets are not encoded away from the file");
  H5SPARSE_FAIL_IF(request.dims.size() != params.layout.dims.size(), ErrorCode::invalid_argument,
                   "the extent has " + std::to_string(request.dims.size()) + " dimensions, the chunks " +
                       std::to_string(params.layout.dims.size()));
  CarriedChunks store(request.stored, request.moves_rewritten_chunks);
  const ChunkGrid grid(request.dims, params.layout.dims);
  SparseEngine(params, 0).write_coordinates(store, grid, coords, n, values);
  return store.take_written();
}

}  // namespace h5sparse
