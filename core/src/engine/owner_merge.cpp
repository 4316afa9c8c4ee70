// The parallel write's owner merge (owner_merge.hpp).
#include "h5sparse/engine/owner_merge.hpp"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "h5sparse/checksum.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

void put_u64(Bytes& out, std::uint64_t v) {
  const std::size_t at = out.size();
  out.resize(at + 8);
  std::memcpy(&out[at], &v, 8);
}

std::uint64_t get_u64(const std::uint8_t*& p, const std::uint8_t* end) {
  H5SPARSE_FAIL_IF(end - p < 8, ErrorCode::corrupt_data, "truncated exchange message");
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  p += 8;
  return v;
}

void append_message(Bytes& out, const ChunkPiece* first, const ChunkPiece* last, const std::uint8_t* values,
                    std::size_t element_size) {
  put_u64(out, first->chunk);
  put_u64(out, std::uint64_t(last - first));
  for (const ChunkPiece* p = first; p != last; ++p) {
    put_u64(out, p->in_chunk_start);
    put_u64(out, p->length);
  }
  if (values == nullptr) return;
  for (const ChunkPiece* p = first; p != last; ++p)
    out.insert(out.end(), values + p->source * element_size, values + (p->source + p->length) * element_size);
}

// Reads one chunk's contribution from a message; `values` point into it.
std::uint64_t read_contribution(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t chunk_count,
                                std::size_t element_size, OwnerOp op, Contribution& c) {
  const std::uint64_t chunk = get_u64(p, end);
  const std::uint64_t count = get_u64(p, end);
  H5SPARSE_FAIL_IF(chunk >= chunk_count || count > std::uint64_t(end - p) / 16, ErrorCode::corrupt_data,
                   "malformed exchange message");
  std::uint64_t elements = 0;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t start = get_u64(p, end), length = get_u64(p, end);
    c.pieces.push_back(ChunkPiece{chunk, start, length, elements});
    elements += length;
  }
  if (op == OwnerOp::write) {
    H5SPARSE_FAIL_IF(std::uint64_t(end - p) / element_size < elements, ErrorCode::corrupt_data,
                     "truncated exchange message");
    c.values = p;
    p += elements * element_size;
  }
  return chunk;
}

}  // namespace

std::size_t chunk_owner(std::uint64_t chunk, std::uint64_t chunk_count, std::size_t ranks) {
  return std::size_t((static_cast<unsigned __int128>(chunk) * ranks) / chunk_count);
}

RoutedPieces route_to_owners(const std::vector<ChunkPiece>& pieces, const std::uint8_t* values,
                             std::size_t element_size, std::uint64_t chunk_count, std::size_t ranks,
                             std::size_t self) {
  RoutedPieces routed;
  routed.messages.resize(ranks);
  for (std::size_t begin = 0; begin < pieces.size();) {
    std::size_t end = begin;
    while (end < pieces.size() && pieces[end].chunk == pieces[begin].chunk) ++end;
    const std::size_t owner = chunk_owner(pieces[begin].chunk, chunk_count, ranks);
    if (owner == self) {
      routed.own.push_back(Contribution{{pieces.begin() + std::ptrdiff_t(begin), pieces.begin() + std::ptrdiff_t(end)},
                                        values});
    } else {
      append_message(routed.messages[owner], &pieces[begin], pieces.data() + end, values, element_size);
    }
    begin = end;
  }
  return routed;
}

std::map<std::uint64_t, std::vector<Contribution>> gather_contributions(const std::vector<ByteView>& received,
                                                                        std::vector<Contribution> own,
                                                                        std::size_t self, std::uint64_t chunk_count,
                                                                        std::size_t element_size, OwnerOp op) {
  std::map<std::uint64_t, std::vector<Contribution>> work;
  for (std::size_t r = 0; r < received.size(); ++r) {
    if (r == self)  // in rank order like the others
      for (Contribution& c : own) work[c.pieces.front().chunk].push_back(std::move(c));
    const std::uint8_t* p = received[r].data;
    const std::uint8_t* end = p + received[r].size;
    while (p < end) {
      Contribution c;
      const std::uint64_t chunk = read_contribution(p, end, chunk_count, element_size, op, c);
      work[chunk].push_back(std::move(c));
    }
  }
  return work;
}

std::optional<OwnedChunk> merge_contributions(const SparseParams& params, const ChunkGrid& grid, std::uint64_t index,
                                              StructuredChunk chunk, bool stored,
                                              const std::vector<Contribution>& contributions, OwnerOp op,
                                              bool zero_new_edges, PieceMerger& merger) {
  for (const Contribution& c : contributions) {
    if (op == OwnerOp::write) merger.write(chunk, c.pieces.data(), c.pieces.data() + c.pieces.size(), c.values);
    else merger.erase(chunk, c.pieces.data(), c.pieces.data() + c.pieces.size());
  }
  if (!stored && chunk.defined.none()) return std::nullopt;  // nothing was there, nothing is now
  const std::size_t es = params.layout.element_size;
  const std::uint64_t chunk_elements = params.layout.element_count();
  OwnedChunk o{index, Bytes(chunk_elements * es), encode_chunk(chunk, params.layout), 0};
  expand_to_dense(chunk, params.layout, params.fill.empty() ? nullptr : params.fill.data(), o.dense.data());
  if (!stored && zero_new_edges)
    for (std::uint64_t k = 0; k < chunk_elements; ++k)
      if (!grid.inside_extent(index, k)) std::memset(&o.dense[k * es], 0, es);
  return o;
}

int assign_rounds(std::vector<OwnedChunk>& owned) {
  std::unordered_multimap<std::uint64_t, std::size_t> by_image;
  int rounds = owned.empty() ? 0 : 1;
  for (std::size_t i = 0; i < owned.size(); ++i) {
    const std::uint64_t h = xxh3_64(owned[i].dense.data(), owned[i].dense.size());
    std::vector<int> taken;  // rounds holding the same image with another encoding
    bool same_as_earlier = false;
    const auto [first, last] = by_image.equal_range(h);
    for (auto it = first; it != last && !same_as_earlier; ++it) {
      const OwnedChunk& other = owned[it->second];
      if (other.dense != owned[i].dense) continue;
      if (other.encoded == owned[i].encoded) {
        owned[i].round = other.round;
        same_as_earlier = true;
      } else {
        taken.push_back(other.round);
      }
    }
    if (!same_as_earlier) {
      int r = 0;
      while (std::find(taken.begin(), taken.end(), r) != taken.end()) ++r;
      owned[i].round = r;
    }
    rounds = std::max(rounds, owned[i].round + 1);
    by_image.emplace(h, i);
  }
  return rounds;
}

void copy_image_into_box(const std::uint8_t* image, const std::vector<std::uint64_t>& chunk_dims,
                         const std::vector<std::uint64_t>& count, const std::vector<std::uint64_t>& at,
                         const std::vector<std::uint64_t>& box, std::size_t element_size, std::uint8_t* dest) {
  const std::size_t rank = chunk_dims.size();
  for (std::size_t j = 0; j < rank; ++j)
    if (count[j] == 0) return;
  std::vector<std::uint64_t> i(rank, 0);  // odometer over all dimensions but the last
  const std::size_t row = std::size_t(count[rank - 1]) * element_size;
  while (true) {
    std::size_t src = 0, dst = 0;
    for (std::size_t j = 0; j < rank; ++j) {
      src = src * chunk_dims[j] + i[j];
      dst = dst * box[j] + at[j] + i[j];
    }
    std::memcpy(&dest[dst * element_size], &image[src * element_size], row);
    std::size_t j = rank - 1;
    while (j-- > 0 && ++i[j] == count[j]) i[j] = 0;
    if (j == SIZE_MAX) return;
  }
}

}  // namespace h5sparse
