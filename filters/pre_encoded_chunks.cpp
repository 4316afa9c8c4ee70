// See pre_encoded_chunks.hpp.
#include "pre_encoded_chunks.hpp"

#include "h5sparse/checksum.hpp"

#include <H5PLextern.h>
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "error_stack.hpp"
#include "h5sparse/error.hpp"

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

const H5Z_class2_t* loaded_plugin_filter_class(H5Z_filter_t id) {
  std::vector<std::string> libraries;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* names) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(names)->emplace_back(info->dlpi_name);
        return 0;
      },
      &libraries);
  // In load order, as HDF5 loaded them: the first plugin for `id` is the one it registered.
  for (const std::string& name : libraries) {
    void* library = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) continue;
    const auto type = reinterpret_cast<H5PL_type_t (*)()>(dlsym(library, "H5PLget_plugin_type"));
    const auto info = reinterpret_cast<const void* (*)()>(dlsym(library, "H5PLget_plugin_info"));
    const auto* cls = type != nullptr && info != nullptr && type() == H5PL_TYPE_FILTER
                          ? static_cast<const H5Z_class2_t*>(info())
                          : nullptr;
    dlclose(library);  // still loaded: HDF5 holds its own handle
    if (cls != nullptr && cls->id == id) return cls;
  }
  return nullptr;
}

StructuredChunkClassOverride::StructuredChunkClassOverride(const H5Z_class2_t* ours) : plugin_(nullptr) {
  // Loads the plugin if HDF5 has not yet.
  throw_if_negative(H5Zfilter_avail(ours->id), "cannot look up the structured-chunk filter");
  plugin_ = loaded_plugin_filter_class(ours->id);
  H5SPARSE_FAIL_IF(plugin_ == nullptr, ErrorCode::unsupported,
                   "filter " + std::to_string(ours->id) +
                       " is not provided by a loaded filter plugin (HDF5_PLUGIN_PATH): a parallel sparse write "
                       "hands it pre-encoded chunks through the plugin's class and must restore that class");
  throw_if_negative(H5Zregister(ours), "cannot register the structured-chunk filter for the collective write");
}

StructuredChunkClassOverride::~StructuredChunkClassOverride() {
  preserving_error_stack([this] { H5Zregister(plugin_); });
}

}  // namespace h5sparse::hdf5
