// Chunk operations on sparse datasets (see sparse_chunk_io.hpp). A stored chunk of a sparse
// dataset is one structured chunk behind filter mask 0; its sections are found by the chunk's
// own header, so whole-chunk bytes are self-describing and the native operations keep their
// meaning; only H5Dwrite_chunk needs checking, so that nothing unreadable is ever stored.
#include "sparse_chunk_io.hpp"

#include <H5VLnative.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "error_stack.hpp"
#include "h5sparse/direct_chunk.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse_vol.h"
#include "native_dataset.hpp"
#include "object.hpp"
#include "optional_ops.hpp"
#include "sparse_dataset.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::Handle;
using hdf5::throw_if_negative;

/// One sparse dataset's chunks, seen by one operation.
class ChunkAccess {
 public:
  // H5VLdataset_optional_op hands over H5P_DEFAULT as it was given; the native connector
  // below needs a real DXPL (HDF5 fails popping its API context otherwise).
  ChunkAccess(Object* o, const char* operation, hid_t dxpl)
      : o_(o), operation_(operation), dxpl_(dxpl == H5P_DEFAULT ? H5P_DATASET_XFER_DEFAULT : dxpl) {
    H5SPARSE_FAIL_IF(!o->sparse, ErrorCode::invalid_argument,
                     std::string(operation) + ": the dataset is not sparse (its pipeline has no structured-chunk "
                                              "filter); use H5Dread_chunk/H5Dwrite_chunk on dense datasets");
    layout_ = &o->sparse->params().layout;
    Handle space = dataset_get(o->under, o->under_vol_id, H5VL_DATASET_GET_SPACE, dxpl_);
    dims_ = extent_of(space.get());
  }

  /// The chunk origin `offset` names, or an error saying why it names none.
  std::vector<hsize_t> origin(const hsize_t* offset) const {
    H5SPARSE_FAIL_IF(offset == nullptr, ErrorCode::invalid_argument, context() + ": no chunk offset given");
    std::vector<hsize_t> o(offset, offset + dims_.size());
    bool ok = true;
    for (std::size_t d = 0; d < dims_.size(); ++d) ok = ok && o[d] % layout_->dims[d] == 0 && o[d] < dims_[d];
    H5SPARSE_FAIL_IF(!ok, ErrorCode::invalid_argument,
                     context() + ": offset " + coords_text({o.begin(), o.end()}) +
                         " is not the first element of a chunk inside the extent " + coords_text(dims_) +
                         " (chunks " + coords_text(layout_->dims) + ")");
    return o;
  }

  std::string where(const std::vector<hsize_t>& origin) const {
    return context() + ", chunk at " + coords_text({origin.begin(), origin.end()});
  }

  /// Every chunk of the index, in the index's order (collected first, so that callbacks
  /// may do chunk I/O of their own).
  std::vector<IndexEntry> index() const {
    return stored_chunk_index(o_->under, o_->under_vol_id, dims_.size(), dxpl_);
  }

  std::optional<LocatedChunk> read(const std::vector<hsize_t>& origin) const {
    return read_stored_chunk(o_->under, o_->under_vol_id, origin, dxpl_);
  }

  LocatedChunk read(const IndexEntry& e) const { return read_listed_chunk(o_->under, o_->under_vol_id, e, dxpl_); }

  /// The sections of a stored chunk (header and stored checksums verified).
  std::array<SectionBytes, 2> sections(const StoredChunk& chunk, const std::vector<hsize_t>& origin) const {
    H5SPARSE_FAIL_IF(chunk.filter_mask != 0, ErrorCode::unsupported,
                     where(origin) + ": stored with filter mask " + std::to_string(chunk.filter_mask) +
                         " (the structured-chunk filter skipped), so it holds no sections; read it with H5Dread_chunk");
    try {
      return split_chunk(chunk.bytes.data(), chunk.bytes.size(), *layout_);
    } catch (const Error& e) {
      throw Error(e.code(), where(origin) + ": " + e.what());
    }
  }

  static void describe(const std::array<SectionBytes, 2>& s, h5sparse_struct_chunk_info_t* info) {
    if (info == nullptr) return;
    *info = h5sparse_struct_chunk_info_t{};
    info->num_sections = 2;
    info->sections[0] = H5SPARSE_SECTION_SELECTION;
    info->sections[1] = H5SPARSE_SECTION_VALUES;
    for (std::size_t i = 0; i < 2; ++i) {
      info->filter_mask[i] = s[i].filter_mask;
      info->section_size[i] = s[i].stored_size;
      info->section_orig_size[i] = s[i].unfiltered_size;
    }
  }

  void write_struct(const H5SparseWriteStructChunkArgs& a) const {
    const std::vector<hsize_t> at = origin(a.offset);
    const h5sparse_struct_chunk_info_t* info = a.chunk_info;
    H5SPARSE_FAIL_IF(info == nullptr || a.buf == nullptr, ErrorCode::invalid_argument,
                     where(at) + ": chunk_info and buf are required");
    H5SPARSE_FAIL_IF(info->num_sections != 2 || info->sections[0] != H5SPARSE_SECTION_SELECTION ||
                         info->sections[1] != H5SPARSE_SECTION_VALUES,
                     ErrorCode::invalid_argument,
                     where(at) + ": a sparse chunk has 2 sections, H5SPARSE_SECTION_SELECTION then "
                                 "H5SPARSE_SECTION_VALUES; chunk_info says " + std::to_string(info->num_sections));
    std::array<SectionBytes, 2> s;
    for (std::size_t i = 0; i < 2; ++i)
      s[i] = SectionBytes{static_cast<const std::uint8_t*>(a.buf[i]), info->section_size[i],
                          info->section_orig_size[i], info->filter_mask[i]};
    Bytes stored;
    try {
      stored = assemble_chunk(s, *layout_);
    } catch (const Error& e) {
      throw Error(e.code(), where(at) + ": " + e.what());
    }
    // A read-only file fails here; an SWMR writer must not overwrite a flushed chunk in place
    // (see SparseEngine::write_stored).
    if (check_writable(o_->under, o_->under_vol_id, dxpl_))
      if (const std::optional<LocatedChunk> old = read(at)) avoid_chunk_size(stored, old->bytes.size(), *layout_);
    write_stored_chunk(o_->under, o_->under_vol_id, at, stored, dxpl_);
  }

  void read_struct(const H5SparseReadStructChunkArgs& a) const {
    const std::vector<hsize_t> at = origin(a.offset);
    H5SPARSE_FAIL_IF(a.chunk_info == nullptr, ErrorCode::invalid_argument, where(at) + ": chunk_info is required");
    const std::optional<LocatedChunk> chunk = read(at);
    H5SPARSE_FAIL_IF(!chunk, ErrorCode::invalid_argument, where(at) + ": no chunk is stored there");
    const auto s = sections(*chunk, at);
    size_t capacity[2] = {a.chunk_info->section_size[0], a.chunk_info->section_size[1]};
    describe(s, a.chunk_info);  // also when a buffer is too small: the caller learns the sizes
    if (a.buf == nullptr) return;
    for (std::size_t i = 0; i < 2; ++i) {
      H5SPARSE_FAIL_IF(s[i].stored_size > 0 && (a.buf[i] == nullptr || capacity[i] < s[i].stored_size),
                       ErrorCode::buffer_too_small,
                       where(at) + ": section " + std::to_string(i) + " has " + std::to_string(s[i].stored_size) +
                           " stored bytes, its buffer " + (a.buf[i] ? std::to_string(capacity[i]) + " (chunk_info's "
                                                                       "section_size on input)" : "is NULL") +
                           "; query the sizes first with buf = NULL");
    }
    for (std::size_t i = 0; i < 2; ++i)
      if (s[i].stored_size > 0) std::memcpy(a.buf[i], s[i].data, s[i].stored_size);
  }

  void info_by_index(const H5SparseStructChunkInfoArgs& a) const {
    const hid_t space = a.file_space_id;
    if (space != H5S_ALL) {
      H5SPARSE_FAIL_IF(extent_of(space) != dims_, ErrorCode::invalid_argument,
                       context() + ": the selection's extent " + coords_text(extent_of(space)) + " differs from " +
                           coords_text(dims_));
      H5SPARSE_FAIL_IF(H5Sselect_valid(space) <= 0, ErrorCode::invalid_argument,
                       context() + ": the selection lies outside the extent " + coords_text(dims_));
    }
    hsize_t seen = 0;
    for (const IndexEntry& e : index()) {
      if (space != H5S_ALL) {
        std::vector<hsize_t> last(e.origin.size());
        for (std::size_t d = 0; d < last.size(); ++d)
          last[d] = std::min<hsize_t>(e.origin[d] + layout_->dims[d], dims_[d]) - 1;
        const htri_t meets = H5Sselect_intersect_block(space, e.origin.data(), last.data());
        throw_if_negative(meets, "cannot intersect the selection with a chunk");
        if (!meets) continue;
      }
      if (seen++ != a.chunk_index) continue;
      const LocatedChunk chunk = read(e);
      describe(sections(chunk, e.origin), a.chunk_info);
      if (a.offset) std::copy(e.origin.begin(), e.origin.end(), a.offset);
      if (a.addr) *a.addr = chunk.addr;
      if (a.chunk_size) *a.chunk_size = chunk.bytes.size();
      return;
    }
    throw Error(ErrorCode::invalid_argument, context() + ": chunk index " + std::to_string(a.chunk_index) +
                                                 " is out of range: " + std::to_string(seen) +
                                                 " stored chunks meet the selection");
  }

  void info_by_coord(const H5SparseStructChunkInfoByCoordArgs& a) const {
    const std::vector<hsize_t> at = origin(a.offset);
    const std::optional<LocatedChunk> chunk = read(at);
    if (!chunk) {  // RFC: size 0, address undefined, chunk_info untouched
      if (a.addr) *a.addr = HADDR_UNDEF;
      if (a.chunk_size) *a.chunk_size = 0;
      return;
    }
    describe(sections(*chunk, at), a.chunk_info);
    if (a.addr) *a.addr = chunk->addr;
    if (a.chunk_size) *a.chunk_size = chunk->bytes.size();
  }

  int iterate(const H5SparseStructChunkIterArgs& a) const {
    H5SPARSE_FAIL_IF(a.op == nullptr, ErrorCode::invalid_argument, context() + ": no callback given");
    for (const IndexEntry& e : index()) {
      const LocatedChunk chunk = read(e);
      h5sparse_struct_chunk_info_t info;
      describe(sections(chunk, e.origin), &info);
      haddr_t addr = chunk.addr;
      hsize_t size = chunk.bytes.size();
      const int rc = a.op(e.origin.data(), &info, &addr, &size, a.op_data_size, a.op_data);
      H5SPARSE_FAIL_IF(rc < 0, ErrorCode::invalid_argument,
                       where(e.origin) + ": the iteration callback failed (returned " + std::to_string(rc) + ")");
      if (rc > 0) return rc;
    }
    return 0;
  }

  /// H5Dwrite_chunk on a sparse dataset stores only what its readers can read.
  void check_native_write(const H5VL_native_dataset_chunk_write_t& w) const {
    const std::vector<hsize_t> at = origin(w.offset);
    H5SPARSE_FAIL_IF(w.filters != 0, ErrorCode::invalid_argument,
                     where(at) + ": H5Dwrite_chunk with filter mask " + std::to_string(w.filters) +
                         " refused: every chunk of a sparse dataset is a structured chunk (filter mask 0)");
    H5SPARSE_FAIL_IF(w.buf == nullptr, ErrorCode::invalid_argument, where(at) + ": H5Dwrite_chunk without a buffer");
    try {
      decode_chunk(static_cast<const std::uint8_t*>(w.buf), w.size, *layout_);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::out_of_memory) throw;
      throw Error(ErrorCode::invalid_argument,
                  where(at) + ": H5Dwrite_chunk refused: the bytes are not a structured chunk this dataset can read (" +
                      e.what() + "); h5sparse_dwrite_struct_chunk writes a chunk from its sections");
    }
  }

 private:
  std::string context() const {
    return std::string(operation_) + " on dataset '" + dataset_name(o_->under, o_->under_vol_id) + "'";
  }

  Object* o_;
  const char* operation_;
  hid_t dxpl_;
  const ChunkLayout* layout_;
  std::vector<std::uint64_t> dims_;
};

}  // namespace

std::optional<herr_t> serve_chunk_operation(Object* o, H5VL_optional_args_t* args, hid_t dxpl) {
  switch (own_operation(H5VL_SUBCLS_DATASET, args->op_type)) {
    case OwnOperation::write_struct_chunk:
      ChunkAccess(o, "h5sparse_dwrite_struct_chunk", dxpl)
          .write_struct(*static_cast<H5SparseWriteStructChunkArgs*>(args->args));
      return 0;
    case OwnOperation::read_struct_chunk:
      ChunkAccess(o, "h5sparse_dread_struct_chunk", dxpl)
          .read_struct(*static_cast<H5SparseReadStructChunkArgs*>(args->args));
      return 0;
    case OwnOperation::get_struct_chunk_info:
      ChunkAccess(o, "h5sparse_dget_struct_chunk_info", dxpl)
          .info_by_index(*static_cast<H5SparseStructChunkInfoArgs*>(args->args));
      return 0;
    case OwnOperation::get_struct_chunk_info_by_coord:
      ChunkAccess(o, "h5sparse_dget_struct_chunk_info_by_coord", dxpl)
          .info_by_coord(*static_cast<H5SparseStructChunkInfoByCoordArgs*>(args->args));
      return 0;
    case OwnOperation::struct_chunk_iter: {
      auto* a = static_cast<H5SparseStructChunkIterArgs*>(args->args);
      a->result = ChunkAccess(o, "h5sparse_dstruct_chunk_iter", dxpl).iterate(*a);
      return 0;
    }
    default: break;
  }
  if (!o->sparse) return std::nullopt;  // dense datasets: every native operation as it is
  switch (args->op_type) {
    case H5VL_NATIVE_DATASET_CHUNK_WRITE:
      // Direct chunk writes from several MPI ranks silently lose data (issue 7).
      H5SPARSE_FAIL_IF(o->sparse->on_mpi_file(), ErrorCode::unsupported,
              "H5Dwrite_chunk on a sparse dataset of an MPI-IO file is refused (direct chunk writes from "
              "several ranks lose data); write collectively with H5Dwrite");
      ChunkAccess(o, "H5Dwrite_chunk", dxpl)
          .check_native_write(static_cast<H5VL_native_dataset_optional_args_t*>(args->args)->chunk_write);
      return std::nullopt;  // valid: stored as given
    // The rest describe or return the stored structured chunk as a whole, which is what is
    // stored: H5Dread_chunk returns its bytes (filter mask 0); H5Dget_chunk_info(_by_coord),
    // H5Dchunk_iter and H5Dget_chunk_storage_size give its address and size (header included);
    // H5Dget_num_chunks counts stored chunks; H5Dget_offset is HADDR_UNDEF (chunked layout).
    default: return std::nullopt;
  }
}

}  // namespace h5sparse::vol
