// Define-by-write (SparseEngine::write): each touched chunk is read, merged with the written
// elements and encoded again. Chunks go in bands of neighbours: a band's stored chunks are read
// (store, calling thread), its chunks scanned, merged and encoded on the workers (each a run of
// neighbouring chunks of the band), then stored in chunk order up to the first that failed
// (store, calling thread). With several threads, the calling thread stores one band while the
// workers encode the next.
//
// Why bands: the rows of a chunk in a dense array are short and far apart, while the same rows
// of neighbouring chunks are contiguous, which hardware prefetchers follow; a band scans a piece
// of each of its chunks in turn. Up to 16 chunks and 8 MiB of packed values per band (two bands
// of half that with workers: the same memory); a chunk whose pieces are out of order or repeat
// is staged alone in a band of its own.
#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <optional>

#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/fill_scan.hpp"
#include "h5sparse/stored_chunk_read.hpp"

namespace h5sparse {
namespace {

std::uint64_t chunks_of(const std::vector<ChunkPiece>& pieces) {
  std::uint64_t chunks = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) chunks += i == 0 || pieces[i].chunk != pieces[i - 1].chunk;
  return chunks;
}

// One chunk of a band: the written elements packed where encode_chunk_in_place wants them (a
// new chunk is then encoded around them without copying them again), what it replaces, and
// the result.
struct Slot {
  std::unique_ptr<std::uint8_t[]> packed;  // uninitialised: zeroing cost more than small writes
  ChunkSelection written;
  std::uint8_t* out = nullptr;
  std::size_t begin = 0, end = 0;  // the chunk's pieces
  bool ordered = true;             // ascending and disjoint inside the chunk: scanned in place
  StoredChunk replaced;            // what was stored before (its buffer reused from band to band)
  bool had_stored = false;
  std::size_t replaced_size = 0;
  Bytes encoded;                  // the new chunk, unless encoded in `packed`
  ByteView result{nullptr, 0};    // the new chunk to store (size 0: nothing to store)
  std::exception_ptr failure;     // why it could not be encoded
};

struct Band {
  std::vector<Slot> slots;  // the first `count` are this band's (buffers kept from band to band)
  std::size_t count = 0;
  std::size_t per_run = 1;               // chunks per run of neighbours
  std::optional<IndexedFailure> failed;  // a run that threw outside encode (allocation)
};

class BandedWrite {
 public:
  BandedWrite(const SparseEngine& engine, ChunkStore& store, const ChunkGrid& grid,
              const std::vector<ChunkPiece>& pieces, const std::uint8_t* values)
      : engine_(engine), params_(engine.params()), store_(store), grid_(grid), pieces_(pieces), source_(values) {
    es_ = params_.layout.element_size;
    chunk_elements_ = params_.layout.element_count();
    fill_ = params_.fill.empty() ? Bytes(es_, 0) : params_.fill;
    skip_fill_ = params_.fill_is_undefined();
    values_offset_ = values_offset_in_place(params_.layout);
    packed_size_ = values_offset_ + chunk_elements_ * es_ + kPackSlack;
    std::uint64_t elements = 0;
    for (const ChunkPiece& p : pieces) elements += p.length;
    threads_ = chunk_threads_for(chunks_of(pieces), elements * es_);
    band_limit_ = std::max<std::size_t>(
        1, std::min<std::size_t>(16, (std::size_t(8) << 20) / packed_size_) / (threads_ > 1 ? 2 : 1));
  }

  void run() {
    std::array<Band, 2> bands;
    Band* current = &bands[0];
    Band* previous = nullptr;  // encoded, not yet stored
    while (form(*current)) {
      if (threads_ == 1) {
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

 private:
  Coords origin_of(const Slot& slot) const { return grid_.chunk_origin(pieces_[slot.begin].chunk); }

  // The next chunks into `band`, with what they replace read; false when none are left.
  bool form(Band& band) {
    band.count = 0;
    band.failed.reset();
    while (band.count < band_limit_ && next_ < pieces_.size()) {
      std::size_t end = next_;
      bool ordered = true;
      for (std::uint64_t after = 0; end < pieces_.size() && pieces_[end].chunk == pieces_[next_].chunk; ++end) {
        ordered = ordered && pieces_[end].in_chunk_start >= after;
        after = pieces_[end].in_chunk_start + pieces_[end].length;
      }
      if (!ordered && band.count > 0) break;  // staged alone, in the next band
      if (band.slots.size() == band.count) band.slots.emplace_back();
      start_slot(band.slots[band.count++], next_, end, ordered);
      next_ = end;
      if (!ordered) break;
    }
    for (std::size_t b = 0; b < band.count; ++b) {
      Slot& slot = band.slots[b];
      slot.had_stored = store_.read(origin_of(slot), slot.replaced);
      slot.replaced_size = slot.had_stored ? slot.replaced.bytes.size() : 0;
    }
    // Runs of per_run neighbouring chunks, none empty (4 chunks on 3 threads: 2 runs of 2).
    band.per_run = (band.count + std::size_t(threads_) - 1) / std::size_t(threads_);
    return band.count > 0;
  }

  void start_slot(Slot& slot, std::size_t begin, std::size_t end, bool ordered) {
    if (!slot.packed) slot.packed.reset(new std::uint8_t[packed_size_]);
    slot.written = ChunkSelection(chunk_elements_);
    slot.out = slot.packed.get() + values_offset_;
    slot.begin = begin;
    slot.end = end;
    slot.ordered = ordered;
    slot.result = ByteView(nullptr, 0);
    slot.failure = nullptr;
  }

  // Scans and encodes a band on the threads; `lead` (store calls) runs meanwhile on this thread.
  template <typename Lead>
  void encode_band(Band& band, Lead&& lead, std::exception_ptr* lead_error) {
    const std::size_t runs = (band.count + band.per_run - 1) / band.per_run;
    band.failed = parallel_for(
        runs, int(std::min<std::size_t>(std::size_t(threads_), runs + 1)),
        [&](std::size_t run, int) {
          scan_and_encode(band.slots, run * band.per_run, std::min(band.count, (run + 1) * band.per_run));
        },
        lead, lead_error);
  }

  // Scans and encodes slots [first, last) of a band; a chunk that fails stops its run.
  void scan_and_encode(std::vector<Slot>& band, std::size_t first, std::size_t last) {
    if (!band[first].ordered) {
      scan_staged(band[first]);
    } else {
      for (std::size_t k = 0, more = 1; more; ++k) {  // a piece of each chunk in turn
        more = 0;
        for (std::size_t b = first; b < last; ++b) {
          const std::size_t i = band[b].begin + k;
          if (i >= band[b].end) continue;
          scan(band[b], source_ + pieces_[i].source * es_, pieces_[i].length, pieces_[i].in_chunk_start);
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
  }

  // Unordered or repeated elements: placed in a dense staging chunk (the last write of an
  // element wins), then scanned in order.
  void scan_staged(Slot& slot) {
    if (!staging_) staging_.reset(new std::uint8_t[chunk_elements_ * es_]);
    for (std::size_t i = slot.begin; i < slot.end; ++i)
      std::memcpy(&staging_[pieces_[i].in_chunk_start * es_], source_ + pieces_[i].source * es_, pieces_[i].length * es_);
    covered(slot).for_each_run(
        [&](std::uint64_t start, std::uint64_t length) { scan(slot, &staging_[start * es_], length, start); });
  }

  void scan(Slot& slot, const std::uint8_t* src, std::uint64_t length, std::uint64_t start) const {
    if (!skip_fill_) {  // every written element is defined: one copy, one range
      std::memcpy(slot.out, src, length * es_);
      slot.out += length * es_;
      slot.written.set_range(start, length);
      return;
    }
    slot.out = pack_differing(src, length, start, fill_.data(), es_, slot.written, slot.out);
  }

  // The chunk's selected elements (most writes never need them).
  ChunkSelection covered(const Slot& slot) const {
    ChunkSelection selected(chunk_elements_);
    for (std::size_t i = slot.begin; i < slot.end; ++i) selected.set_range(pieces_[i].in_chunk_start, pieces_[i].length);
    return selected;
  }

  // The new stored form of a scanned chunk (core work only: runs on any thread).
  void encode(Slot& slot) const {
    std::uint8_t* const values_start = slot.packed.get() + values_offset_;
    StructuredChunk chunk = slot.had_stored ? decode_stored_chunk(slot.replaced.bytes.data(), slot.replaced.bytes.size(),
                                                                  slot.replaced.filter_mask, params_.layout)
                                            : StructuredChunk::empty(params_.layout);
    if (chunk.defined.none()) {
      if (slot.written.none()) return;  // only fill values written (fill-is-undefined) where nothing was defined
      slot.result = encode_chunk_in_place(slot.written, slot.packed.get(), std::size_t(slot.out - values_start),
                                          params_.layout, slot.encoded);
      return;
    }
    merge_write(chunk, slot.written, values_start, es_);
    if (skip_fill_) {  // written fill values are undefined (otherwise every selected element is written)
      ChunkSelection undefined = covered(slot);
      undefined.subtract(slot.written);
      if (!undefined.none()) h5sparse::erase(chunk, undefined, es_);
    }
    slot.encoded = encode_chunk(chunk, params_.layout);
    slot.result = slot.encoded;
  }

  // Stores a band's chunks in chunk order up to the first failure, as a serial loop would.
  void store(Band& band) const {
    const std::size_t stop = band.failed ? band.failed->index * band.per_run : band.count;
    for (std::size_t b = 0; b < stop; ++b) {
      const Slot& slot = band.slots[b];
      if (slot.failure) engine_.rethrow_naming_chunk(store_, IndexedFailure{b, slot.failure}, origin_of(slot));
      if (slot.result.size) engine_.write_stored(store_, origin_of(slot), slot.result, slot.replaced_size);
    }
    if (band.failed) engine_.rethrow_naming_chunk(store_, *band.failed, origin_of(band.slots[stop]));
  }

  const SparseEngine& engine_;
  const SparseParams& params_;
  ChunkStore& store_;
  const ChunkGrid& grid_;
  const std::vector<ChunkPiece>& pieces_;
  const std::uint8_t* source_;
  std::size_t es_ = 0, values_offset_ = 0, packed_size_ = 0, band_limit_ = 1;
  std::uint64_t chunk_elements_ = 0;
  Bytes fill_;
  bool skip_fill_ = false;
  int threads_ = 1;
  std::size_t next_ = 0;  // the first piece of the next band
  std::unique_ptr<std::uint8_t[]> staging_;  // only for unordered or repeated elements (uninitialised)
};

}  // namespace

void SparseEngine::write(ChunkStore& store, const ChunkGrid& grid, const std::vector<ChunkPiece>& pieces,
                         const std::uint8_t* values) const {
  require_fixed_size("a write");
  const SparseChange change;
  BandedWrite(*this, store, grid, pieces, values).run();
}

}  // namespace h5sparse
