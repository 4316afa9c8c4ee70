// See pre_encoded_chunks.hpp.
#include "pre_encoded_chunks.hpp"

#include "h5sparse/checksum.hpp"

#include <algorithm>
#include <cstring>

namespace h5sparse::hdf5 {
namespace {

PreEncodedChunks* g_active = nullptr;

}  // namespace

PreEncodedChunks::PreEncodedChunks(std::vector<unsigned> cd_values) : cd_values_(std::move(cd_values)) {}

void PreEncodedChunks::add(const std::uint8_t* dense, std::size_t size, Bytes encoded) {
  by_hash_.emplace(xxh3_64(dense, size), entries_.size());
  entries_.push_back(Entry{dense, size, std::move(encoded), false});
}

const Bytes* PreEncodedChunks::take(const unsigned* cd_values, std::size_t cd_count, const std::uint8_t* dense,
                                    std::size_t size) {
  if (cd_count != cd_values_.size() || !std::equal(cd_values_.begin(), cd_values_.end(), cd_values)) return nullptr;
  const auto [first, last] = by_hash_.equal_range(xxh3_64(dense, size));
  for (auto it = first; it != last; ++it) {
    Entry& e = entries_[it->second];
    if (e.taken || e.size != size || std::memcmp(e.dense, dense, size) != 0) continue;
    e.taken = true;
    return &e.encoded;
  }
  ++misses_;
  return nullptr;
}

std::size_t PreEncodedChunks::pending() const {
  return std::size_t(std::count_if(entries_.begin(), entries_.end(), [](const Entry& e) { return !e.taken; }));
}

PreEncodedChunks* PreEncodedChunks::active() { return g_active; }

PreEncodedChunks::Activation::Activation(PreEncodedChunks& set) { g_active = &set; }
PreEncodedChunks::Activation::~Activation() { g_active = nullptr; }

}  // namespace h5sparse::hdf5
