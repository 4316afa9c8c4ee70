// The connector's object: what HDF5 holds for every file, group, dataset, attribute, datatype,
// request and blob handle opened through us. As in HDF5's H5VLpassthru.c, it holds the object
// of the connector below and that connector's ID, which a reference keeps alive; unlike it, the
// objects of one file share one reference (see Below).
#pragma once

#include <H5VLconnector.h>
#include <hdf5.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace h5sparse::vol {

class SparseDataset;
struct Below;

/// What HDF5 hands back to wrap_object / free_wrap_ctx during an API call on one of our
/// objects: the connector below (kept alive) and its own wrap context.
struct WrapContext {
  Below* below;
  void* under_wrap_ctx;
};

/// The connector below as the objects of one file (and the wrap contexts of API calls on them)
/// share it: one reference on its ID for all of them, taken with the file's first wrapper and
/// dropped with its last. H5VLpassthru.c takes one per wrapper and per wrap context; each
/// H5Iinc_ref and H5Idec_ref is a locked API call, and together they were most of what
/// forwarding cost on metadata (docs/DESIGN.md, "Performance notes").
struct Below {
  Below(hid_t under_vol_id, bool below_is_native, const H5VL_class_t* native_class) noexcept
      : id(under_vol_id), native(below_is_native), cls(native_class) {}
  const hid_t id;
  /// The connector below is the native one (names_native_connector).
  const bool native;
  /// The native connector's class table, whose callbacks the busiest forwards call directly
  /// (forward.hpp, ClassSlot); nullptr for any other connector below.
  const H5VL_class_t* const cls;
  std::atomic<std::size_t> users{0};  ///< wrappers and wrap contexts
  /// The wrap context of every API call when the connector below is native: the native
  /// connector keeps none of its own, so there is nothing to ask it for or free.
  WrapContext shared_wrap_ctx{this, nullptr};
};

/// A record of the connector `under_vol_id` below, of which `under` is an object, taking the
/// one reference on the ID; its first user (a wrapper) frees it with the last release_below;
/// nullptr when out of memory.
Below* new_below(hid_t under_vol_id, bool native, void* under) noexcept;
/// The native connector's class table, once a file of the native connector was opened through
/// us; else nullptr.
const H5VL_class_t* known_native_class() noexcept;
inline Below& retain_below(Below& below) noexcept {
  below.users.fetch_add(1, std::memory_order_relaxed);
  return below;
}
/// Drops a user; the last drops the reference on the ID (keeping the caller's error stack).
void release_below(Below& below) noexcept;

/// One user of a Below for as long as it lives.
class BelowUser {
 public:
  explicit BelowUser(Below& below) noexcept : below_(&retain_below(below)) {}
  ~BelowUser() { release_below(*below_); }
  BelowUser(const BelowUser&) = delete;
  BelowUser& operator=(const BelowUser&) = delete;
  Below& operator*() const noexcept { return *below_; }
  Below* operator->() const noexcept { return below_; }

 private:
  Below* below_;
};

/// Whether `id` names the native connector, asked of HDF5 (quietly: no record left on the
/// error stack). Never a comparison with H5VL_NATIVE: HDF5 2.x hands out a new ID for the same
/// connector on every lookup.
bool names_native_connector(hid_t id) noexcept;

/// Deletes a SparseDataset where its type is complete (sparse_dataset.cpp), so that what
/// includes Object needs no SparseDataset.
struct SparseDatasetDelete {
  SparseDatasetDelete() noexcept = default;
  SparseDatasetDelete(std::default_delete<SparseDataset>) noexcept {}  // from SparseDataset::detect
  [[gnu::cold]] void operator()(SparseDataset* dataset) const noexcept;
};

/// First word of every Object: HDF5 2.x's command-line tools hand H5VLfile_get the native file
/// object together with our connector ID; is_our_object tells such an object from ours.
constexpr std::uint64_t kObjectTag = 0x68357370617273ULL;  // "h5spars"

struct Object {
  Object(void* under_object, Below& connector_below) noexcept
      : under(under_object), below(connector_below), under_vol_id(below->id) {}
  const std::uint64_t tag = kObjectTag;  ///< first: readable in any object HDF5 may hand us
  void* under;                           ///< the object of the connector below
  /// The connector below, shared with the file's objects; declared before the dataset views,
  /// which may still call it when they are destroyed.
  const BelowUser below;
  const hid_t under_vol_id;  ///< below->id, read by every forward
  std::unique_ptr<SparseDataset, SparseDatasetDelete> sparse;  ///< set for datasets with structured chunks
};

/// A new wrapper of `under`, an object of the connector `below`; nullptr when out of memory
/// (nothing reported: the caller does).
inline Object* new_wrapper(void* under, Below& below) noexcept { return new (std::nothrow) Object(under, below); }

/// Wraps an object of the connector below; nullptr when `under` is nullptr; throws
/// std::bad_alloc when out of memory.
Object* wrap_under(void* under, Below& below);
/// Wraps the first object of a file (or a request): a new record of the connector below.
Object* wrap_under(void* under, hid_t under_vol_id, bool native);
/// Wraps an object opened through `parent`: the same connector below.
inline Object* wrap_under(void* under, const Object& parent) { return wrap_under(under, *parent.below); }

/// Frees a wrapper (not the object below); the last of a file drops the reference on the
/// connector below, preserving the current error stack.
inline void free_wrapper(Object* object) noexcept { delete object; }

/// Wraps the asynchronous request an operation below started (`*req` set).
[[gnu::cold]] void wrap_started_request(void** req, hid_t under_vol_id);

/// After an operation that may have started an asynchronous request below, wraps it. The test
/// is inline: almost no operation starts one.
inline void wrap_request(void** req, hid_t under_vol_id) {
  if (__builtin_expect(req != nullptr && *req != nullptr, 0)) wrap_started_request(req, under_vol_id);
}

inline Object* as_object(void* obj) noexcept { return static_cast<Object*>(obj); }
inline bool is_our_object(const void* obj) noexcept { return *static_cast<const std::uint64_t*>(obj) == kObjectTag; }

}  // namespace h5sparse::vol
