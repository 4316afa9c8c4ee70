// The caller's side of a transfer (memory_selection.hpp).
#include "memory_selection.hpp"

#include <algorithm>
#include <cstring>

#include "error_stack.hpp"
#include "handle.hpp"
#include "h5sparse/error.hpp"
#include "var_values.hpp"

namespace h5sparse::hdf5 {
namespace {

// Calls visit(offset in bytes, length in bytes) for each run of the selection, in order.
template <typename Visit>
void for_each_run(hid_t space, std::size_t element_size, Visit&& visit) {
  Handle iter = checked(H5Ssel_iter_create(space, element_size, 0), "cannot iterate the memory selection");
  constexpr std::size_t kBatch = 1024;
  hsize_t offsets[kBatch];
  std::size_t lengths[kBatch];
  while (true) {
    std::size_t nseq = 0, nbytes = 0;
    throw_if_negative(H5Ssel_iter_get_seq_list(iter.get(), kBatch, SIZE_MAX, &nseq, &nbytes, offsets, lengths),
                      "cannot iterate the memory selection");
    if (nseq == 0) break;
    for (std::size_t i = 0; i < nseq; ++i) visit(offsets[i], lengths[i]);
  }
}

// The byte offset of the memory selection when it is one contiguous run of `count` elements,
// or -1.
std::int64_t contiguous_offset(hid_t space, std::size_t element_size, std::uint64_t count) {
  Handle iter = checked(H5Ssel_iter_create(space, element_size, 0), "cannot iterate the memory selection");
  hsize_t offset = 0;
  std::size_t length = 0, nseq = 0, nbytes = 0;
  throw_if_negative(H5Ssel_iter_get_seq_list(iter.get(), 1, SIZE_MAX, &nseq, &nbytes, &offset, &length),
                    "cannot iterate the memory selection");
  return nseq == 1 && length == count * element_size ? std::int64_t(offset) : -1;
}

void scatter_to_memory(hid_t space, const std::uint8_t* source, std::size_t element_size, std::uint8_t* buf) {
  for_each_run(space, element_size, [&](hsize_t offset, std::size_t length) {
    std::memcpy(buf + offset, source, length);
    source += length;
  });
}

}  // namespace

bool has_data_transform(hid_t dxpl) {
  if (dxpl == H5P_DEFAULT || dxpl == H5P_DATASET_XFER_DEFAULT) return false;
  ssize_t length = -1;
  H5E_BEGIN_TRY { length = H5Pget_data_transform(dxpl, nullptr, 0); }  // fails when none is set
  H5E_END_TRY
  return length > 0;
}

const std::uint8_t* values_in_file_type(hid_t mem_type, hid_t mem_space, std::size_t n, hid_t file_type,
                                        const Bytes& fill, hid_t dxpl, const void* buf, Bytes& values) {
  const std::size_t es = H5Tget_size(file_type);
  const std::size_t mem_size = H5Tget_size(mem_type);
  H5SPARSE_FAIL_IF(mem_size == 0, ErrorCode::invalid_argument, "invalid memory datatype");
  const htri_t same = H5Tequal(mem_type, file_type);
  // The caller's buffer is already the selection in order, in the file type: read it in place.
  if (same > 0 && H5Sget_select_type(mem_space) == H5S_SEL_ALL) return static_cast<const std::uint8_t*>(buf);
  values.resize(n * std::max(mem_size, es));
  throw_if_negative(H5Dgather(mem_space, buf, mem_type, n * mem_size, values.data(), nullptr, nullptr),
                    "cannot gather the memory selection");
  if (same <= 0) {
    Bytes background(n * es, 0);
    if (!fill.empty())
      for (std::size_t i = 0; i < n; ++i) std::memcpy(&background[i * es], fill.data(), es);
    throw_if_negative(H5Tconvert(mem_type, file_type, n, values.data(), background.data(), dxpl),
                      "cannot convert the data to the dataset's datatype");
  }
  return values.data();
}

const std::uint8_t* values_in_file_type(hid_t mem_type, std::size_t count, hid_t file_type, const Bytes& fill,
                                        hid_t dxpl, const void* buf, Bytes& storage) {
  const hsize_t n = count;
  const Handle row = checked(H5Screate_simple(1, &n, nullptr), "cannot describe the values");
  return values_in_file_type(mem_type, row.get(), count, file_type, fill, dxpl, buf, storage);
}

void write_coordinate_values(const SparseEngine& engine, ChunkStore& store, const ChunkGrid& grid,
                             const std::uint64_t* coords, std::size_t n, hid_t mem_type, hid_t file_type, hid_t dxpl,
                             const void* buf) {
  if (engine.params().is_var())
    return write_var_coordinates(engine, store, grid, coords, n, mem_type, file_type, dxpl, buf);
  Bytes storage;
  engine.write_coordinates(store, grid, coords, n,
                           values_in_file_type(mem_type, n, file_type, engine.params().fill, dxpl, buf, storage));
}

ValuesToMemory::ValuesToMemory(hid_t file_type, hid_t mem_type, bool var, hid_t dxpl)
    : file_type_(file_type), mem_type_(mem_type), dxpl_(dxpl), file_size_(var ? 8 : H5Tget_size(file_type)),
      mem_size_(H5Tget_size(mem_type)) {
  H5SPARSE_FAIL_IF(mem_size_ == 0, ErrorCode::invalid_argument, "invalid memory datatype");
  if (var) var_ = std::make_unique<VarMemoryValues>(mem_type, file_type, dxpl);
  const htri_t same = var ? 0 : H5Tequal(mem_type, file_type);
  throw_if_negative(same, "cannot compare the memory and file datatypes");
  convert_ = same == 0;
}

ValuesToMemory::~ValuesToMemory() = default;

const void* ValuesToMemory::convert(const CoordinateBatch& batch, const void* values, void* out, bool hand_over) {
  if (var_) {
    var_->put(*batch.var_values, static_cast<const std::uint64_t*>(values), batch.count, out, hand_over);
    return out;
  }
  converted_.resize(batch.count * std::max(file_size_, mem_size_));
  std::memcpy(converted_.data(), values, batch.count * file_size_);
  background_.assign(batch.count * mem_size_, 0);
  throw_if_negative(H5Tconvert(file_type_, mem_type_, batch.count, converted_.data(), background_.data(), dxpl_),
                    "cannot convert the values to the memory datatype");
  return converted_.data();
}

const void* ValuesToMemory::operator()(const CoordinateBatch& batch) {
  if (!convert_ || batch.count == 0) return batch.values;
  if (var_) staged_.resize(batch.count * mem_size_);
  return convert(batch, batch.values, staged_.data(), false);
}

std::uint8_t* ValuesToMemory::place_for(std::size_t count, void* room) {
  H5SPARSE_FAIL_IF(count && !room, ErrorCode::invalid_argument,
                   "no memory was given for the values of a batch of " + std::to_string(count) + " elements");
  room_ = room;
  if (!convert_) return static_cast<std::uint8_t*>(room);
  staged_.resize(count * file_size_);
  return staged_.data();
}

void* ValuesToMemory::land(const CoordinateBatch& batch) {
  if (!convert_ || batch.count == 0) return room_;
  const void* converted = convert(batch, staged_.data(), room_, true);
  if (converted != room_) std::memcpy(room_, converted, batch.count * mem_size_);
  return room_;
}

MemoryDestination::MemoryDestination(hid_t space, std::size_t element_size, std::uint64_t count, void* buf)
    : space_(space), element_size_(element_size), buf_(static_cast<std::uint8_t*>(buf)) {
  const std::int64_t offset = contiguous_offset(space, element_size, count);
  dest_ = buf_ + (offset < 0 ? 0 : offset);
  if (offset >= 0) return;
  staging_.resize(std::size_t(count) * element_size);
  dest_ = staging_.data();
}

void MemoryDestination::finish() {
  if (!in_place()) scatter_to_memory(space_, staging_.data(), element_size_, buf_);
}

namespace {

// The bounding box [lo, lo + box) of the chunks' parts inside the extent.
void bounding_box(const ChunkGrid& grid, const std::vector<const OwnedChunk*>& chunks, std::vector<std::uint64_t>& lo,
                  std::vector<std::uint64_t>& box) {
  const std::size_t rank = grid.rank();
  std::vector<std::uint64_t> hi(rank, 0);
  lo.assign(rank, 0);
  box.assign(rank, 1);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const std::vector<std::uint64_t> origin = grid.chunk_origin(chunks[c]->chunk);
    for (std::size_t j = 0; j < rank; ++j) {
      const std::uint64_t end = std::min(origin[j] + grid.chunk_dims()[j], grid.dataset_dims()[j]);
      lo[j] = c == 0 ? origin[j] : std::min(lo[j], origin[j]);
      hi[j] = c == 0 ? end : std::max(hi[j], end);
    }
  }
  for (std::size_t j = 0; j < rank && !chunks.empty(); ++j) box[j] = hi[j] - lo[j];
}

}  // namespace

ImageBox image_box(const ChunkGrid& grid, const std::vector<const OwnedChunk*>& chunks, std::size_t es) {
  const std::size_t rank = grid.rank();
  const std::vector<std::uint64_t>& cdims = grid.chunk_dims();
  std::vector<std::uint64_t> lo, box;
  bounding_box(grid, chunks, lo, box);
  std::size_t box_elements = 1;
  for (std::size_t j = 0; j < rank && !chunks.empty(); ++j) box_elements *= std::size_t(box[j]);
  const std::vector<hsize_t> box_dims(box.begin(), box.end());
  ImageBox m{checked(H5Screate_simple(int(rank), box_dims.data(), nullptr), "cannot create the memory dataspace"),
             std::unique_ptr<std::uint8_t[]>(new std::uint8_t[box_elements * es])};
  throw_if_negative(H5Sselect_none(m.space.get()), "cannot clear the memory selection");
  std::vector<std::uint64_t> at(rank), count(rank);
  for (const OwnedChunk* o : chunks) {
    const std::vector<std::uint64_t> origin = grid.chunk_origin(o->chunk);
    for (std::size_t j = 0; j < rank; ++j) {
      at[j] = origin[j] - lo[j];
      count[j] = std::min(cdims[j], grid.dataset_dims()[j] - origin[j]);
    }
    const std::vector<hsize_t> start(at.begin(), at.end()), block(count.begin(), count.end());
    throw_if_negative(H5Sselect_hyperslab(m.space.get(), H5S_SELECT_OR, start.data(), nullptr, block.data(), nullptr),
                      "cannot select a chunk in memory");
    copy_image_into_box(o->dense.data(), cdims, count, at, box, es, m.bytes.get());
  }
  return m;
}

}  // namespace h5sparse::hdf5
