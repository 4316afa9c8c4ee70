// Chunk operations on sparse datasets: the RFC's direct structured-chunk I/O (our dataset
// operations "h5sparse.*struct_chunk*", their arguments to and from hdf5_support's
// StructChunks) and the native ones (H5Dread_chunk, H5Dwrite_chunk, H5Dchunk_iter, ...), which
// keep their meaning, whole-chunk bytes being self-describing; only H5Dwrite_chunk needs
// checking, so that nothing unreadable is ever stored. The mapping is tabled in README.md
// ("Chunk operations") and argued in docs/DESIGN.md.
#include "sparse_dataset.hpp"

#include <H5VLnative.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "h5sparse/error.hpp"
#include "h5sparse_vol.h"
#include "object.hpp"
#include "optional_ops.hpp"
#include "struct_chunks.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::LocatedChunk;
using hdf5::StructChunks;

// The chunks of a sparse dataset for one operation (refused on a dense one).
StructChunks chunks_of(Object* o, const char* operation, hid_t dxpl) {
  H5SPARSE_FAIL_IF(!o->sparse, ErrorCode::invalid_argument,
                   std::string(operation) + ": the dataset is not sparse (its pipeline has no structured-chunk "
                                            "filter); use H5Dread_chunk/H5Dwrite_chunk on dense datasets");
  return StructChunks(o->under, o->under_vol_id, o->sparse->params().layout, operation, dxpl);
}

void describe(const std::array<SectionBytes, 2>& s, h5sparse_struct_chunk_info_t* info) {
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

void write_struct(const StructChunks& c, const H5SparseWriteStructChunkArgs& a) {
  const std::vector<hsize_t> at = c.origin(a.offset);
  const h5sparse_struct_chunk_info_t* info = a.chunk_info;
  H5SPARSE_FAIL_IF(info == nullptr || a.buf == nullptr, ErrorCode::invalid_argument,
                   c.where(at) + ": chunk_info and buf are required");
  H5SPARSE_FAIL_IF(info->num_sections != 2 || info->sections[0] != H5SPARSE_SECTION_SELECTION ||
                       info->sections[1] != H5SPARSE_SECTION_VALUES,
                   ErrorCode::invalid_argument,
                   c.where(at) + ": a sparse chunk has 2 sections, H5SPARSE_SECTION_SELECTION then "
                                 "H5SPARSE_SECTION_VALUES; chunk_info says " + std::to_string(info->num_sections));
  std::array<SectionBytes, 2> s;
  for (std::size_t i = 0; i < 2; ++i)
    s[i] = SectionBytes{static_cast<const std::uint8_t*>(a.buf[i]), info->section_size[i],
                        info->section_orig_size[i], info->filter_mask[i]};
  c.write(at, s);
}

void read_struct(const StructChunks& c, const H5SparseReadStructChunkArgs& a) {
  const std::vector<hsize_t> at = c.origin(a.offset);
  H5SPARSE_FAIL_IF(a.chunk_info == nullptr, ErrorCode::invalid_argument, c.where(at) + ": chunk_info is required");
  const std::optional<LocatedChunk> chunk = c.read(at);
  H5SPARSE_FAIL_IF(!chunk, ErrorCode::invalid_argument, c.where(at) + ": no chunk is stored there");
  const auto s = c.sections(*chunk, at);
  size_t capacity[2] = {a.chunk_info->section_size[0], a.chunk_info->section_size[1]};
  describe(s, a.chunk_info);  // also when a buffer is too small: the caller learns the sizes
  if (a.buf == nullptr) return;
  for (std::size_t i = 0; i < 2; ++i) {
    H5SPARSE_FAIL_IF(s[i].stored_size > 0 && (a.buf[i] == nullptr || capacity[i] < s[i].stored_size),
                     ErrorCode::buffer_too_small,
                     c.where(at) + ": section " + std::to_string(i) + " has " + std::to_string(s[i].stored_size) +
                         " stored bytes, its buffer " + (a.buf[i] ? std::to_string(capacity[i]) + " (chunk_info's "
                                                                     "section_size on input)" : "is NULL") +
                         "; query the sizes first with buf = NULL");
  }
  for (std::size_t i = 0; i < 2; ++i)
    if (s[i].stored_size > 0) std::memcpy(a.buf[i], s[i].data, s[i].stored_size);
}

// The chunk's description, address and stored size into the caller's (optional) outputs.
void report(const StructChunks& c, const LocatedChunk& chunk, const std::vector<hsize_t>& origin,
            h5sparse_struct_chunk_info_t* info, haddr_t* addr, hsize_t* size) {
  describe(c.sections(chunk, origin), info);
  if (addr) *addr = chunk.addr;
  if (size) *size = chunk.bytes.size();
}

void info_by_index(const StructChunks& c, const H5SparseStructChunkInfoArgs& a) {
  const std::vector<hdf5::IndexEntry> entries = c.index(a.file_space_id);
  H5SPARSE_FAIL_IF(a.chunk_index >= entries.size(), ErrorCode::invalid_argument,
                   c.context() + ": chunk index " + std::to_string(a.chunk_index) + " is out of range: " +
                       std::to_string(entries.size()) + " stored chunks meet the selection");
  const hdf5::IndexEntry& e = entries[a.chunk_index];
  report(c, c.read(e), e.origin, a.chunk_info, a.addr, a.chunk_size);
  if (a.offset) std::copy(e.origin.begin(), e.origin.end(), a.offset);
}

void info_by_coord(const StructChunks& c, const H5SparseStructChunkInfoByCoordArgs& a) {
  const std::vector<hsize_t> at = c.origin(a.offset);
  const std::optional<LocatedChunk> chunk = c.read(at);
  if (chunk) return report(c, *chunk, at, a.chunk_info, a.addr, a.chunk_size);
  // RFC: size 0, address undefined, chunk_info untouched
  if (a.addr) *a.addr = HADDR_UNDEF;
  if (a.chunk_size) *a.chunk_size = 0;
}

void iterate(const StructChunks& c, H5SparseStructChunkIterArgs& a) {
  H5SPARSE_FAIL_IF(a.op == nullptr, ErrorCode::invalid_argument, c.context() + ": no callback given");
  int rc = 0;
  for (const hdf5::IndexEntry& e : c.index()) {
    const LocatedChunk chunk = c.read(e);
    h5sparse_struct_chunk_info_t info;
    describe(c.sections(chunk, e.origin), &info);
    haddr_t addr = chunk.addr;
    hsize_t size = chunk.bytes.size();
    rc = a.op(e.origin.data(), &info, &addr, &size, a.op_data_size, a.op_data);
    H5SPARSE_FAIL_IF(rc < 0, ErrorCode::invalid_argument,
                     c.where(e.origin) + ": the iteration callback failed (returned " + std::to_string(rc) + ")");
    if (rc > 0) break;
  }
  a.result = rc;
}

/// `serve` on a sparse dataset's chunks with the arguments of our operation `name`.
template <typename Args>
herr_t serve_struct(Object* o, const char* name, hid_t dxpl, void* args, void (*serve)(const StructChunks&, Args&)) {
  serve(chunks_of(o, name, dxpl), *static_cast<Args*>(args));
  return 0;
}

}  // namespace

std::optional<herr_t> serve_chunk_operation(Object* o, H5VL_optional_args_t* args, hid_t dxpl) {
  switch (own_operation(H5VL_SUBCLS_DATASET, args->op_type)) {
    case OwnOperation::write_struct_chunk:
      return serve_struct(o, "h5sparse_dwrite_struct_chunk", dxpl, args->args, write_struct);
    case OwnOperation::read_struct_chunk:
      return serve_struct(o, "h5sparse_dread_struct_chunk", dxpl, args->args, read_struct);
    case OwnOperation::get_struct_chunk_info:
      return serve_struct(o, "h5sparse_dget_struct_chunk_info", dxpl, args->args, info_by_index);
    case OwnOperation::get_struct_chunk_info_by_coord:
      return serve_struct(o, "h5sparse_dget_struct_chunk_info_by_coord", dxpl, args->args, info_by_coord);
    case OwnOperation::struct_chunk_iter:
      return serve_struct(o, "h5sparse_dstruct_chunk_iter", dxpl, args->args, iterate);
    default: break;
  }
  // Dense datasets: every native operation as it is. On sparse ones, all but H5Dwrite_chunk
  // describe or return the stored structured chunk as a whole, which is what is stored:
  // H5Dread_chunk returns its bytes (filter mask 0); H5Dget_chunk_info(_by_coord), H5Dchunk_iter
  // and H5Dget_chunk_storage_size give its address and size (header included); H5Dget_num_chunks
  // counts stored chunks; H5Dget_offset is HADDR_UNDEF (chunked layout).
  if (!o->sparse || args->op_type != H5VL_NATIVE_DATASET_CHUNK_WRITE) return std::nullopt;
  // Direct chunk writes from several MPI ranks silently lose data (issue 7).
  H5SPARSE_FAIL_IF(o->sparse->on_mpi_file(), ErrorCode::unsupported,
                   "H5Dwrite_chunk on a sparse dataset of an MPI-IO file is refused (direct chunk writes from "
                   "several ranks lose data); write collectively with H5Dwrite");
  chunks_of(o, "H5Dwrite_chunk", dxpl)
      .check_native_write(static_cast<H5VL_native_dataset_optional_args_t*>(args->args)->chunk_write);
  return std::nullopt;  // valid: stored as given
}

}  // namespace h5sparse::vol
