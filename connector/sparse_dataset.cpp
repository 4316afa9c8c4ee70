// Sparse dataset operations over the native dataset below (see sparse_dataset.hpp).
#include "sparse_dataset.hpp"

#include <H5VLconnector_passthru.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <optional>


#include "dcpl.hpp"
#include "error_stack.hpp"
#include "h5sparse/chunk_threads.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/fill_scan.hpp"
#include "h5sparse/stored_chunk_read.hpp"
#include "native_dataset.hpp"
#include "object.hpp"
#include "sparse_change.hpp"
#ifdef H5SPARSE_PARALLEL
#include "parallel_write.hpp"
#endif

namespace h5sparse::vol {
namespace {

using hdf5::checked;
using hdf5::Handle;
using hdf5::throw_if_negative;

}  // namespace

SparseDataset::SparseDataset(void* under, hid_t under_vol_id, SparseParams params, Handle file_type)
    : under_(under), under_vol_id_(under_vol_id), params_(std::move(params)), file_type_(std::move(file_type)) {}

std::unique_ptr<SparseDataset> SparseDataset::detect(void* under, hid_t under_vol_id, hid_t dxpl) {
  Handle dcpl = dataset_get(under, under_vol_id, H5VL_DATASET_GET_DCPL, dxpl);
  if (H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return nullptr;
  const auto values_found = hdf5::filter_values(dcpl.get(), kFilterStructuredChunk);
  if (!values_found) return nullptr;
  const std::vector<unsigned>& values = *values_found;
  // Request form: HDF5 ignored the (optional) filter at creation, so the dataset is dense.
  if (!is_complete_form(values.data(), values.size())) return nullptr;
  SparseParams params = from_cd_values(values.data(), values.size());
  Handle type = dataset_get(under, under_vol_id, H5VL_DATASET_GET_TYPE, dxpl);
  H5SPARSE_FAIL_IF(H5Tget_size(type.get()) != params.layout.element_size, ErrorCode::corrupt_data,
          "structured-chunk parameters disagree with the dataset's datatype size");
  H5D_fill_time_t fill_time = H5D_FILL_TIME_IFSET;
  throw_if_negative(H5Pget_fill_time(dcpl.get(), &fill_time), "cannot read the fill time");
  std::unique_ptr<SparseDataset> dataset(new SparseDataset(under, under_vol_id, std::move(params), std::move(type)));
  dataset->fill_never_ = fill_time == H5D_FILL_TIME_NEVER;
  // Reads and writes of it split chunks over the worker pool: threads started now are running
  // by the first one (in a new process that wait was up to a few ms of its first read).
  prestart_shared_workers(chunk_threads());
#ifdef H5SPARSE_PARALLEL
  dataset->mpi_file_ = ParallelWrite::on_mpi_file(under, under_vol_id);
#endif
  Handle dapl = dataset_get(under, under_vol_id, H5VL_DATASET_GET_DAPL, dxpl);
  std::size_t slots = 0, cache_bytes = 0;
  double w0 = 0;
  throw_if_negative(H5Pget_chunk_cache(dapl.get(), &slots, &cache_bytes, &w0), "cannot read the chunk cache settings");
  const bool swmr_reader = (file_intent(under, under_vol_id, dxpl) & H5F_ACC_SWMR_READ) != 0;
  if (cache_bytes > 0 && !swmr_reader && !dataset->mpi_file_)
    dataset->decoded_ = std::make_unique<DecodedChunkCache>(cache_bytes);
  return dataset;
}

void SparseDataset::check_create(hid_t dcpl, hid_t type) {
  if (dcpl == H5P_DEFAULT || dcpl == H5P_DATASET_CREATE_DEFAULT) return;
  if (!hdf5::filter_values(dcpl, kFilterStructuredChunk)) return;
  H5SPARSE_FAIL_IF(H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0, ErrorCode::unsupported,
          "sparse datasets do not support variable-length datatypes yet");
}

SparseDataset::Selection SparseDataset::resolve(hid_t file_space, hid_t dxpl) const {
  Handle full = dataset_get(under_, under_vol_id_, H5VL_DATASET_GET_SPACE, dxpl);
  const std::vector<std::uint64_t> dims = extent_of(full.get());
  const hid_t space = file_space == H5S_ALL ? full.get() : file_space;
  if (file_space != H5S_ALL) {
    H5SPARSE_FAIL_IF(extent_of(file_space) != dims, ErrorCode::invalid_argument,
            "the file dataspace's extent " + coords_text(extent_of(file_space)) + " differs from the dataset's " +
                coords_text(dims));
    H5SPARSE_FAIL_IF(H5Sselect_valid(file_space) <= 0, ErrorCode::invalid_argument,
            "the file selection lies outside the dataset's extent " + coords_text(dims));
  }
  const hssize_t npoints = H5Sget_select_npoints(space);
  throw_if_negative(npoints, "cannot count the selected elements");
  ChunkGrid grid(dims, params_.layout.dims);
  return Selection{std::move(full), space, std::move(grid), npoints};
}

std::vector<std::uint64_t> SparseDataset::extent(hid_t dxpl) const {
  return extent_of(dataset_get(under_, under_vol_id_, H5VL_DATASET_GET_SPACE, dxpl).get());
}

bool selects_everything(hid_t space, const ChunkGrid& grid, std::uint64_t npoints) {
  const H5S_sel_type type = H5Sget_select_type(space);
  throw_if_negative(type, "cannot read the selection type");
  if (type == H5S_SEL_ALL) return true;
  if (type != H5S_SEL_HYPERSLABS) return false;
  std::uint64_t total = 1;
  for (std::uint64_t d : grid.dataset_dims()) total *= d;
  return npoints == total;
}

std::vector<ChunkPiece> selection_pieces(hid_t space, const ChunkGrid& grid) {
  std::vector<ChunkPiece> pieces;
  // Every element (a whole-dataset write): each chunk's rows follow from its position, in the
  // order split and group_by_chunk would give them (a fifth as many instructions).
  const hssize_t npoints = H5Sget_select_npoints(space);
  throw_if_negative(npoints, "cannot count the selected elements");
  if (selects_everything(space, grid, std::uint64_t(npoints))) {
    for (std::uint64_t chunk = 0, chunks = grid.chunk_count(); chunk < chunks; ++chunk)
      grid.whole_chunk_pieces(chunk, pieces);
    return pieces;
  }
  // Default iteration order: the order in which H5Dwrite pairs memory and file elements.
  Handle iter = checked(H5Ssel_iter_create(space, 1, 0), "cannot iterate the selection");
  constexpr std::size_t kBatch = 4096;
  // Uninitialised: zeroing 64 KiB per call was a tenth of a one-row write (Hangar's samples).
  const std::unique_ptr<hsize_t[]> offsets(new hsize_t[kBatch]);
  const std::unique_ptr<std::size_t[]> lengths(new std::size_t[kBatch]);
  std::uint64_t source = 0;
  while (true) {
    std::size_t nseq = 0, nelem = 0;
    throw_if_negative(H5Ssel_iter_get_seq_list(iter.get(), kBatch, SIZE_MAX, &nseq, &nelem, offsets.get(),
                                               lengths.get()),
                      "cannot iterate the selection");
    if (nseq == 0) break;
    for (std::size_t i = 0; i < nseq; ++i) {
      grid.split(offsets[i], lengths[i], source, pieces);
      source += lengths[i];
    }
  }
  // Group by chunk, keeping selection order inside a chunk (later duplicates win).
  group_by_chunk(pieces);
  return pieces;
}

std::uint64_t chunks_of(const std::vector<ChunkPiece>& pieces) {
  std::uint64_t chunks = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) chunks += i == 0 || pieces[i].chunk != pieces[i - 1].chunk;
  return chunks;
}

std::vector<std::size_t> chunk_group_starts(const std::vector<ChunkPiece>& pieces) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < pieces.size(); ++i)
    if (i == 0 || pieces[i].chunk != pieces[i - 1].chunk) starts.push_back(i);
  starts.push_back(pieces.size());
  return starts;
}

std::string SparseDataset::where(const std::vector<std::uint64_t>& origin) const {
  return "dataset '" + dataset_name(under_, under_vol_id_) + "', chunk at " + coords_text(origin);
}

StructuredChunk SparseDataset::read_chunk(const std::vector<std::uint64_t>& origin, hid_t dxpl,
                                          std::size_t* stored_size) const {
  const std::optional<StoredChunk> stored =
      read_stored_chunk(under_, under_vol_id_, std::vector<hsize_t>(origin.begin(), origin.end()), dxpl, false);
  if (stored && stored_size != nullptr) *stored_size = stored->bytes.size();
  return decode_stored(origin, stored ? &*stored : nullptr);
}

StructuredChunk SparseDataset::decode_stored(const std::vector<std::uint64_t>& origin,
                                             const StoredChunk* stored) const {
  if (stored == nullptr) return StructuredChunk::empty(params_.layout);
  try {
    return decode_stored_chunk(stored->bytes.data(), stored->bytes.size(), stored->filter_mask, params_.layout);
  } catch (const Error& e) {
    throw Error(e.code(), where(origin) + ": " + e.what());
  }
}

void SparseDataset::rethrow_naming_chunk(const IndexedFailure& failure, const std::vector<std::uint64_t>& origin) const {
  try {
    std::rethrow_exception(failure.error);
  } catch (const Error& e) {
    throw Error(e.code(), where(origin) + ": " + e.what());
  }
}

void SparseDataset::write_chunk(const std::vector<std::uint64_t>& origin, const StructuredChunk& chunk, hid_t dxpl,
                                std::size_t avoid_size) const {
  const Bytes stored = encode_chunk(chunk, params_.layout);
  write_stored(origin, {stored.data(), stored.size()}, dxpl, avoid_size);
}

void SparseDataset::write_stored(const std::vector<std::uint64_t>& origin, ByteView stored, hid_t dxpl,
                                 std::size_t avoid_size) const {
  const std::vector<hsize_t> at(origin.begin(), origin.end());
  if (stored.size != avoid_size) {
    write_stored_chunk(under_, under_vol_id_, at, stored, dxpl);
    return;
  }
  Bytes padded(stored.data, stored.data + stored.size);
  avoid_chunk_size(padded, avoid_size, params_.layout);
  write_stored_chunk(under_, under_vol_id_, at, padded, dxpl);
}

const std::uint8_t* SparseDataset::file_values(hid_t mem_type, hid_t mspace, std::size_t n, hid_t dxpl,
                                               const void* buf, Bytes& values) const {
  const std::size_t es = params_.layout.element_size;
  const std::size_t mem_size = H5Tget_size(mem_type);
  H5SPARSE_FAIL_IF(mem_size == 0, ErrorCode::invalid_argument, "invalid memory datatype");
  const htri_t same = H5Tequal(mem_type, file_type_.get());
  // The caller's buffer is already the selection in order, in the file type: read it in place.
  if (same > 0 && H5Sget_select_type(mspace) == H5S_SEL_ALL) return static_cast<const std::uint8_t*>(buf);
  values.resize(n * std::max(mem_size, es));
  throw_if_negative(H5Dgather(mspace, buf, mem_type, n * mem_size, values.data(), nullptr, nullptr),
                    "cannot gather the memory selection");
  if (same <= 0) {
    Bytes background(n * es, 0);
    if (!params_.fill.empty())
      for (std::size_t i = 0; i < n; ++i) std::memcpy(&background[i * es], params_.fill.data(), es);
    throw_if_negative(H5Tconvert(mem_type, file_type_.get(), n, values.data(), background.data(), dxpl),
                      "cannot convert the data to the dataset's datatype");
  }
  return values.data();
}

hid_t SparseDataset::memory_space(hid_t mem_space, const Selection& sel) const {
  const hid_t mspace = mem_space == H5S_ALL ? sel.space : mem_space;
  const hssize_t mem_points = H5Sget_select_npoints(mspace);
  throw_if_negative(mem_points, "cannot count the selected memory elements");
  H5SPARSE_FAIL_IF(mem_points != sel.npoints, ErrorCode::invalid_argument,
          "memory selection has " + std::to_string(mem_points) + " elements, file selection " +
              std::to_string(sel.npoints));
  return mspace;
}

void SparseDataset::write(hid_t mem_type, hid_t mem_space, hid_t file_space, hid_t dxpl, const void* buf) {
  const SparseChange change;
  // An SWMR writer never frees a chunk it replaces, but rewrites one of unchanged size in
  // place: change the size, so the flushed copy stays intact for readers and crashes.
  const bool relocate = check_writable(under_, under_vol_id_, dxpl);
#ifdef H5SPARSE_PARALLEL
  if (mpi_file_) return ParallelWrite::write(*this, mem_type, mem_space, file_space, dxpl, buf);
#endif
  const Selection sel = resolve(file_space, dxpl);
  const hid_t mspace = memory_space(mem_space, sel);
  if (sel.npoints == 0) return;
  H5SPARSE_FAIL_IF(buf == nullptr, ErrorCode::invalid_argument, "no data buffer to write from");

  const std::size_t es = params_.layout.element_size;
  Bytes values;
  const std::uint8_t* source = file_values(mem_type, mspace, std::size_t(sel.npoints), dxpl, buf, values);

  const std::vector<ChunkPiece> pieces = selection_pieces(sel.space, sel.grid);
  const std::uint64_t chunk_elements = params_.layout.element_count();
  const Bytes zeros(es, 0);
  const std::uint8_t* fill = params_.fill.empty() ? zeros.data() : params_.fill.data();
  const bool skip_fill = params_.fill_is_undefined();
  std::unique_ptr<std::uint8_t[]> staging;  // only for unordered or repeated elements (uninitialised)
  // Values are packed where encode_chunk_in_place wants them: a new chunk is then encoded
  // around them without copying them again.
  const std::size_t values_offset = values_offset_in_place(params_.layout);
  const std::size_t packed_size = values_offset + chunk_elements * es + kPackSlack;
  // Chunks are scanned in bands of consecutive chunks, a piece of each in turn: the rows of a
  // chunk in a dense array are short and far apart (1 KiB, 16 KiB apart in the density sweep),
  // while the same rows of neighbouring chunks are contiguous, which the hardware prefetchers
  // follow (a 64 MiB scan: 12 ms chunk by chunk, 8 ms by bands of 16). Up to 16 chunks and
  // 8 MiB of packed values per band; a chunk whose pieces need staging is a band of its own.
  // A band's stored chunks are read (HDF5, this thread), then its chunks are scanned, merged
  // and encoded on up to `threads` threads (each a run of neighbouring chunks of the band,
  // interleaved as above), then stored in chunk order up to the first that failed (HDF5, this
  // thread). With several threads this thread stores a band while the workers encode the next
  // (two bands of half the size: the same memory).
  struct Slot {
    std::unique_ptr<std::uint8_t[]> packed;  // uninitialised: zeroing cost more than small writes
    ChunkSelection written;
    std::uint8_t* out = nullptr;
    std::size_t begin = 0, end = 0;  // the chunk's pieces
    bool ordered = true;             // ascending and disjoint inside the chunk: scanned in place
    StoredChunk replaced;            // what was stored before (its buffer reused from band to band)
    bool had_stored = false;
    std::size_t replaced_size = 0;   // the size the new chunk must not have (SWMR), or 0
    Bytes encoded;                   // the new chunk, unless encoded in `packed`
    ByteView result{nullptr, 0};     // the new chunk to store (size 0: nothing to store)
    std::exception_ptr failure;      // why it could not be encoded
  };
  struct Band {
    std::vector<Slot> slots;  // the first `count` are this band's (buffers kept from band to band)
    std::size_t count = 0;
    std::size_t per_run = 1;              // chunks per run of neighbours
    std::optional<IndexedFailure> failed;  // a run that threw outside encode (allocation)
  };
  const int threads = chunk_threads_for(chunks_of(pieces), std::uint64_t(sel.npoints) * es);
  const std::size_t band_limit = std::max<std::size_t>(
      1, std::min<std::size_t>(16, (std::size_t(8) << 20) / packed_size) / (threads > 1 ? 2 : 1));
  auto scan = [&](Slot& slot, const std::uint8_t* src, std::uint64_t length, std::uint64_t start) {
    if (!skip_fill) {  // every written element is defined: one copy, one range
      std::memcpy(slot.out, src, length * es);
      slot.out += length * es;
      slot.written.set_range(start, length);
      return;
    }
    slot.out = pack_differing(src, length, start, fill, es, slot.written, slot.out);
  };
  auto covered = [&](const Slot& slot) {  // the chunk's selected elements; most writes never need them
    ChunkSelection selected(chunk_elements);
    for (std::size_t i = slot.begin; i < slot.end; ++i) selected.set_range(pieces[i].in_chunk_start, pieces[i].length);
    return selected;
  };
  // The new stored form of a scanned chunk (core work only: runs on any thread).
  auto encode = [&](Slot& slot) {
    std::uint8_t* const values_start = slot.packed.get() + values_offset;
    StructuredChunk chunk = slot.had_stored ? decode_stored_chunk(slot.replaced.bytes.data(), slot.replaced.bytes.size(),
                                                                  slot.replaced.filter_mask, params_.layout)
                                            : StructuredChunk::empty(params_.layout);
    if (chunk.defined.none()) {
      if (slot.written.none()) return;  // only fill values written (fill-is-undefined) where nothing was defined
      slot.result = encode_chunk_in_place(slot.written, slot.packed.get(), std::size_t(slot.out - values_start),
                                          params_.layout, slot.encoded);
      return;
    }
    merge_write(chunk, slot.written, values_start, es);
    if (skip_fill) {  // written fill values are undefined (otherwise every selected element is written)
      ChunkSelection undefined = covered(slot);
      undefined.subtract(slot.written);
      if (!undefined.none()) h5sparse::erase(chunk, undefined, es);
    }
    slot.encoded = encode_chunk(chunk, params_.layout);
    slot.result = slot.encoded;
  };
  // Scans and encodes slots [first, last) of a band; a chunk that fails stops its run.
  auto scan_and_encode = [&](std::vector<Slot>& band, std::size_t first, std::size_t last) {
    if (!band[first].ordered) {  // unordered or repeated elements: the last write of an element wins
      Slot& slot = band[first];
      if (!staging) staging.reset(new std::uint8_t[chunk_elements * es]);
      for (std::size_t i = slot.begin; i < slot.end; ++i)
        std::memcpy(&staging[pieces[i].in_chunk_start * es], source + pieces[i].source * es, pieces[i].length * es);
      covered(slot).for_each_run([&](std::uint64_t start, std::uint64_t length) { scan(slot, &staging[start * es], length, start); });
    } else {
      for (std::size_t k = 0, more = 1; more; ++k) {
        more = 0;
        for (std::size_t b = first; b < last; ++b) {
          const std::size_t i = band[b].begin + k;
          if (i >= band[b].end) continue;
          scan(band[b], source + pieces[i].source * es, pieces[i].length, pieces[i].in_chunk_start);
          more = 1;
        }
      }
    }
    for (std::size_t b = first; b < last; ++b) {
      try {
        encode(band[b]);
      } catch (...) {
        band[b].failure = std::current_exception();
        return;
      }
    }
  };
  std::size_t group = 0;  // the first piece of the next band
  // The next chunks into `band`, with what they replace read; false when none are left.
  auto form = [&](Band& band) {
    band.count = 0;
    band.failed.reset();
    while (band.count < band_limit && group < pieces.size()) {
      std::size_t end = group;
      bool ordered = true;
      std::uint64_t next = 0;
      while (end < pieces.size() && pieces[end].chunk == pieces[group].chunk) {
        ordered = ordered && pieces[end].in_chunk_start >= next;
        next = pieces[end].in_chunk_start + pieces[end].length;
        ++end;
      }
      if (!ordered && band.count > 0) break;  // staged alone, in the next band
      if (band.slots.size() == band.count) band.slots.emplace_back();
      Slot& slot = band.slots[band.count++];
      if (!slot.packed) slot.packed.reset(new std::uint8_t[packed_size]);
      slot.written = ChunkSelection(chunk_elements);
      slot.out = slot.packed.get() + values_offset;
      slot.begin = group;
      slot.end = end;
      slot.ordered = ordered;
      slot.result = ByteView(nullptr, 0);
      slot.failure = nullptr;
      group = end;
      if (!ordered) break;
    }
    for (std::size_t b = 0; b < band.count; ++b) {
      Slot& slot = band.slots[b];
      const std::vector<std::uint64_t> origin = sel.grid.chunk_origin(pieces[slot.begin].chunk);
      slot.had_stored = read_stored_chunk_into(under_, under_vol_id_, std::vector<hsize_t>(origin.begin(), origin.end()),
                                               dxpl, slot.replaced);
      slot.replaced_size = slot.had_stored && relocate ? slot.replaced.bytes.size() : 0;
    }
    // Runs of per_run neighbouring chunks, none empty (4 chunks on 3 threads: 2 runs of 2).
    band.per_run = (band.count + std::size_t(threads) - 1) / std::size_t(threads);
    return band.count > 0;
  };
  // Scans and encodes a band on the threads; `lead` (HDF5 calls) runs meanwhile on this thread.
  auto encode_band = [&](Band& band, auto&& lead, std::exception_ptr* lead_error) {
    const std::size_t runs = (band.count + band.per_run - 1) / band.per_run;
    band.failed = parallel_for(
        runs, int(std::min<std::size_t>(std::size_t(threads), runs + 1)),
        [&](std::size_t run, int) {
          scan_and_encode(band.slots, run * band.per_run, std::min(band.count, (run + 1) * band.per_run));
        },
        lead, lead_error);
  };
  // Stores a band's chunks in chunk order up to the first failure, as a serial loop would have.
  auto store = [&](Band& band) {
    const std::size_t stop = band.failed ? band.failed->index * band.per_run : band.count;
    for (std::size_t b = 0; b < stop; ++b) {
      Slot& slot = band.slots[b];
      const std::vector<std::uint64_t> origin = sel.grid.chunk_origin(pieces[slot.begin].chunk);
      if (slot.failure) rethrow_naming_chunk(IndexedFailure{b, slot.failure}, origin);
      if (slot.result.size) write_stored(origin, slot.result, dxpl, slot.replaced_size);
    }
    if (band.failed) rethrow_naming_chunk(*band.failed, sel.grid.chunk_origin(pieces[band.slots[stop].begin].chunk));
  };
  std::array<Band, 2> bands;
  Band* current = &bands[0];
  Band* previous = nullptr;  // encoded, not yet stored
  while (form(*current)) {
    if (threads == 1) {  // the serial path: read, encode, store
      encode_band(*current, [] {}, nullptr);
      store(*current);
      continue;
    }
    std::exception_ptr store_error;
    encode_band(*current, [&] { if (previous) store(*previous); }, &store_error);
    if (store_error) std::rethrow_exception(store_error);
    previous = current;
    current = current == &bands[0] ? &bands[1] : &bands[0];
  }
  if (previous) store(*previous);
}

hid_t SparseDataset::get_defined(hid_t file_space, hid_t dxpl) {
  const Selection sel = resolve(file_space, dxpl);
  Handle result = checked(H5Scopy(sel.full.get()), "cannot create the result dataspace");
  throw_if_negative(H5Sselect_none(result.get()), "cannot clear the result selection");
  const std::vector<ChunkPiece> pieces = selection_pieces(sel.space, sel.grid);
  std::vector<std::uint64_t> linear;  // defined elements as linear dataset offsets
  const std::vector<std::uint64_t>& dims = sel.grid.dataset_dims();
  for (std::size_t begin = 0; begin < pieces.size();) {
    std::size_t end = begin;
    while (end < pieces.size() && pieces[end].chunk == pieces[begin].chunk) ++end;
    const StructuredChunk chunk = read_chunk(sel.grid.chunk_origin(pieces[begin].chunk), dxpl);
    for (std::size_t i = begin; i < end && !chunk.defined.none(); ++i) {
      const ChunkPiece& p = pieces[i];
      for (std::uint64_t k = p.in_chunk_start; k < p.in_chunk_start + p.length; ++k) {
        if (!chunk.defined.test(k)) continue;
        std::uint64_t offset = 0;
        const std::vector<std::uint64_t> c = sel.grid.element_coords(p.chunk, k);
        for (std::size_t d = 0; d < dims.size(); ++d) offset = offset * dims[d] + c[d];
        linear.push_back(offset);
      }
    }
    begin = end;
  }
  std::sort(linear.begin(), linear.end());
  linear.erase(std::unique(linear.begin(), linear.end()), linear.end());
  if (!linear.empty()) {
    const std::size_t rank = dims.size();
    std::vector<hsize_t> coords(linear.size() * rank);
    for (std::size_t i = 0; i < linear.size(); ++i) {
      std::uint64_t rest = linear[i];
      for (std::size_t d = rank; d-- > 0;) {
        coords[i * rank + d] = rest % dims[d];
        rest /= dims[d];
      }
    }
    throw_if_negative(H5Sselect_elements(result.get(), H5S_SELECT_SET, linear.size(), coords.data()),
                      "cannot select the defined elements");
  }
  return result.release();
}

void SparseDataset::diagnose_read(hid_t file_space, hid_t dxpl) const {
  const Selection sel = resolve(file_space, dxpl);
  const std::vector<ChunkPiece> pieces = selection_pieces(sel.space, sel.grid);
  for (std::size_t i = 0; i < pieces.size(); ++i)
    if (i == 0 || pieces[i].chunk != pieces[i - 1].chunk) read_chunk(sel.grid.chunk_origin(pieces[i].chunk), dxpl);
}

void SparseDataset::erase(hid_t file_space, hid_t dxpl) {
  const SparseChange change;
  const bool relocate = check_writable(under_, under_vol_id_, dxpl);  // see write()
#ifdef H5SPARSE_PARALLEL
  if (mpi_file_) return ParallelWrite::erase(*this, file_space, dxpl);
#endif
  const Selection sel = resolve(file_space, dxpl);
  const std::vector<ChunkPiece> pieces = selection_pieces(sel.space, sel.grid);
  const std::uint64_t chunk_elements = params_.layout.element_count();
  for (std::size_t begin = 0; begin < pieces.size();) {
    std::size_t end = begin;
    while (end < pieces.size() && pieces[end].chunk == pieces[begin].chunk) ++end;
    const std::vector<std::uint64_t> origin = sel.grid.chunk_origin(pieces[begin].chunk);
    std::size_t replaced_size = 0;
    StructuredChunk chunk = read_chunk(origin, dxpl, &replaced_size);
    if (!chunk.defined.none()) {
      ChunkSelection erased(chunk_elements);
      for (std::size_t i = begin; i < end; ++i) erased.set_range(pieces[i].in_chunk_start, pieces[i].length);
      h5sparse::erase(chunk, erased, params_.layout.element_size);
      write_chunk(origin, chunk, dxpl, relocate ? replaced_size : 0);
    }
    begin = end;
  }
}

void SparseDatasetDelete::operator()(SparseDataset* dataset) const noexcept { delete dataset; }

void attach_sparse(Object* dataset, hid_t dxpl) {
  try {
    dataset->sparse = SparseDataset::detect(dataset->under, dataset->under_vol_id, dxpl);
  } catch (...) {
    H5VLdataset_close(dataset->under, dataset->under_vol_id, dxpl, nullptr);
    free_wrapper(dataset);
    throw;
  }
}

}  // namespace h5sparse::vol
