// Stored structured chunks for direct structured-chunk I/O (struct_chunks.hpp).
#include "struct_chunks.hpp"

#include <H5VLnative.h>

#include <algorithm>

#include "error_stack.hpp"
#include "file_selection.hpp"
#include "h5sparse/direct_chunk.hpp"
#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "transfer_properties.hpp"

namespace h5sparse::hdf5 {
namespace {

// Runs `step`; an Error it throws gets `where` in front of its message.
template <typename Step>
auto naming(const std::string& where, Step&& step) {
  try {
    return step();
  } catch (const Error& e) {
    throw Error(e.code(), where + ": " + e.what());
  }
}

}  // namespace

// H5VLdataset_optional_op hands over H5P_DEFAULT as it was given; the native connector below
// needs a real DXPL (HDF5 fails popping its API context otherwise).
StructChunks::StructChunks(void* under, hid_t under_vol_id, const ChunkLayout& layout, const char* operation,
                           hid_t dxpl)
    : under_(under),
      under_vol_id_(under_vol_id),
      layout_(layout),
      operation_(operation),
      dxpl_(dxpl == H5P_DEFAULT ? H5P_DATASET_XFER_DEFAULT : dxpl),
      dims_(extent_of(dataset_get(under, under_vol_id, H5VL_DATASET_GET_SPACE, dxpl_).get())) {}

std::vector<hsize_t> StructChunks::origin(const hsize_t* offset) const {
  H5SPARSE_FAIL_IF(offset == nullptr, ErrorCode::invalid_argument, context() + ": no chunk offset given");
  std::vector<hsize_t> o(offset, offset + dims_.size());
  bool ok = true;
  for (std::size_t d = 0; d < dims_.size(); ++d) ok = ok && o[d] % layout_.dims[d] == 0 && o[d] < dims_[d];
  H5SPARSE_FAIL_IF(!ok, ErrorCode::invalid_argument,
                   context() + ": offset " + coords_text({o.begin(), o.end()}) +
                       " is not the first element of a chunk inside the extent " + coords_text(dims_) + " (chunks " +
                       coords_text(layout_.dims) + ")");
  return o;
}

std::string StructChunks::context() const {
  return std::string(operation_) + " on dataset '" + dataset_name(under_, under_vol_id_) + "'";
}

std::string StructChunks::where(const std::vector<hsize_t>& origin) const {
  return context() + ", chunk at " + coords_text({origin.begin(), origin.end()});
}

std::optional<LocatedChunk> StructChunks::read(const std::vector<hsize_t>& origin) const {
  return read_stored_chunk(under_, under_vol_id_, origin, dxpl_);
}

LocatedChunk StructChunks::read(const IndexEntry& e) const { return read_listed_chunk(under_, under_vol_id_, e, dxpl_); }

std::vector<IndexEntry> StructChunks::index(hid_t space) const {
  if (space != H5S_ALL) check_file_selection(space, dims_, context() + ": ");
  std::vector<IndexEntry> entries = stored_chunk_index(under_, under_vol_id_, dims_.size(), dxpl_);
  if (space == H5S_ALL) return entries;
  std::vector<hsize_t> last(dims_.size());
  const auto misses = [&](const IndexEntry& e) {
    for (std::size_t d = 0; d < last.size(); ++d)
      last[d] = std::min<hsize_t>(e.origin[d] + layout_.dims[d], dims_[d]) - 1;
    const htri_t meets = H5Sselect_intersect_block(space, e.origin.data(), last.data());
    throw_if_negative(meets, "cannot intersect the selection with a chunk");
    return meets == 0;
  };
  entries.erase(std::remove_if(entries.begin(), entries.end(), misses), entries.end());
  return entries;
}

std::array<SectionBytes, 2> StructChunks::sections(const StoredChunk& chunk, const std::vector<hsize_t>& origin) const {
  H5SPARSE_FAIL_IF(chunk.filter_mask != 0, ErrorCode::unsupported,
                   where(origin) + ": stored with filter mask " + std::to_string(chunk.filter_mask) +
                       " (the structured-chunk filter skipped), so it holds no sections; read it with H5Dread_chunk");
  return naming(where(origin), [&] { return split_chunk(chunk.bytes.data(), chunk.bytes.size(), layout_); });
}

void StructChunks::write(const std::vector<hsize_t>& at, const std::array<SectionBytes, 2>& sections) const {
  Bytes stored = naming(where(at), [&] { return assemble_chunk(sections, layout_); });
  if (check_writable(under_, under_vol_id_, dxpl_))
    if (const std::optional<LocatedChunk> old = read(at)) avoid_chunk_size(stored, old->bytes.size(), layout_);
  write_stored_chunk(under_, under_vol_id_, at, stored, dxpl_);
}

void StructChunks::check_native_write(const H5VL_native_dataset_chunk_write_t& w) const {
  const std::vector<hsize_t> at = origin(w.offset);
  H5SPARSE_FAIL_IF(w.filters != 0, ErrorCode::invalid_argument,
                   where(at) + ": H5Dwrite_chunk with filter mask " + std::to_string(w.filters) +
                       " refused: every chunk of a sparse dataset is a structured chunk (filter mask 0)");
  H5SPARSE_FAIL_IF(w.buf == nullptr, ErrorCode::invalid_argument, where(at) + ": H5Dwrite_chunk without a buffer");
  const bool checksums_only = chunk_write_check(dxpl_) == ChunkWriteCheck::checksums;
  try {
    const auto* bytes = static_cast<const std::uint8_t*>(w.buf);
    if (checksums_only) {
      split_chunk(bytes, w.size, layout_);  // a chunk of our encoder's: intact, for this layout
      return;
    }
    // Everything a reader checks, at a cost that follows the defined elements: a chunk's
    // bitmap (32 MiB for 16384^2 elements) only where offsets do not fit 32 bits.
    if (layout_.element_count() <= (std::uint64_t(1) << 32))
      decode_chunk_elements(bytes, w.size, layout_);
    else
      decode_chunk(bytes, w.size, layout_);
  } catch (const Error& e) {
    if (e.code() == ErrorCode::out_of_memory) throw;
    throw Error(ErrorCode::invalid_argument,
                where(at) + ": H5Dwrite_chunk refused: the bytes are not a structured chunk this dataset can read (" +
                    e.what() + "); h5sparse_dwrite_struct_chunk writes a chunk from its sections");
  }
}

}  // namespace h5sparse::hdf5
