// Coordinate reads (SparseEngine::scan_coordinates): the stored chunks meeting the region,
// listed from the chunk index (never the grid: a 2^31 x 2^31 dataset has 2^42 chunk places),
// in row-major order of their origins and taken band by band (chunks sharing their range of
// dimension 0). A band's chunks are read on the calling thread and their elements inside the
// region counted on the workers, while the calling thread reads the next band (a store that
// reads by address on any thread has the workers read them, each before its decode); a batch holds
// its chunks within CoordinateScan::held_bytes (beyond it they are read again when the batch
// is written, a window ahead of the workers), and once its size is known each band is decoded
// into its elements, cut to the region and merged into row-major order by one worker (a
// counting sort on rows for a matrix band, else a min-heap of the chunks keyed by the position
// of their next line, a run of elements along the last dimension), so the work is per element
// and per line, never per empty line. In compressed-row form (CompressedRows) the merge writes
// each element's column and counts the rows instead.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <string>

#include "h5sparse/engine/sparse_engine.hpp"
#include "h5sparse/error.hpp"
#include "h5sparse/stored_chunk_read.hpp"
#include "points_by_chunk.hpp"
#include "region_chunks.hpp"

namespace h5sparse {
namespace {

using detail::ListedChunk;
using detail::LocalBox;

// A listed chunk of a group: its stored bytes until it is decoded into its elements inside
// the region (of a variable-length dataset: their values are numbers of elements of `var`, its
// values); neither while it waits to be read again.
struct ChunkPart {
  Coords origin;
  ChunkLocation at;         // as listed
  std::uint64_t count = 0;  // its elements inside the region
  bool whole = false;       // the region holds the whole chunk
  bool decoded = false;
  StoredChunk stored;
  ChunkElements elements;
  // Until the batch takes them. Held apart: a read of millions of one-element chunks keeps a
  // part for each, and a VarValues is four vectors.
  std::unique_ptr<VarValues> var;
};

// Chunks smaller than this stay held beyond CoordinateScan::held_bytes: reading one again
// would cost more than holding it (HDF5's cost per chunk).
constexpr std::uint64_t kRereadBytes = 4096;

// Chunks of a batch merged together: a band, or a part of one cut at the budget.
struct Group {
  std::vector<ChunkPart> parts;
  std::size_t start;  // its first element's place in the batch
  std::size_t count;
};

// Memory for a batch, reused by the next one and never initialised (every element is written
// before it is handed over).
template <typename T>
class Scratch {
 public:
  T* take(std::size_t n) {
    if (n > capacity_) {
      data_.reset(new T[n]);
      capacity_ = n;
    }
    return data_.get();
  }

 private:
  std::unique_ptr<T[]> data_;
  std::size_t capacity_ = 0;
};

class Scan {
 public:
  Scan(const SparseEngine& engine, ChunkStore& store, const ChunkGrid& grid, const CoordinateScan& scan,
       const CoordinateSink& sink, detail::ResumableListing* resumable)
      : engine_(engine), layout_(engine.params().layout), store_(store), grid_(grid), scan_(scan), sink_(sink),
        rank_(grid.rank()), var_(engine.params().is_var()), value_size_(var_ ? 8 : layout_.element_size),
        es_(scan.values ? value_size_ : 0), rows_(scan.compressed_rows), compressed_(rows_.row_counts != nullptr),
        max_bytes_(compressed_ ? SIZE_MAX : scan.max_bytes), resumable_(resumable) {
    check_band_positions();
    if (compressed_) {
      first_row_ = scan.region[0].start[0];
      first_column_ = scan.region[0].start[1];
      std::fill_n(rows_.row_counts, scan.region[0].count[0], std::uint64_t(0));
    }
    detail::chunk_count_checked(grid_);  // listed chunks are kept by number
    for (std::size_t d = 1; d < rank_; ++d)
      band_chunks_ *= (grid_.dataset_dims()[d] + grid_.chunk_dims()[d] - 1) / grid_.chunk_dims()[d];
  }

  // Scans; a scan stopped by its sink before its end leaves its listing for the next.
  void run() {
    list();
    scan();
    if (!resumable_) return;
    if (stopped_)
      resumable_->keep(all_, scan_.region, grid_.dataset_dims(), generation_);
    else
      resumable_->drop();
  }

 private:
  void scan() {
    for (std::size_t band = first_; band < listed().size();) {
      std::size_t end = band;
      const std::uint64_t band_number = listed()[band].number / band_chunks_;
      while (end < listed().size() && listed()[end].number / band_chunks_ == band_number) ++end;
      // A band over the budget goes in groups of whole chunks, each a batch of its own (a
      // batch holding two groups of one band would not be in row-major order).
      const bool cut = group_end(band, end) < end;
      if (cut && pending_count_ && !emit(band)) return;
      for (std::size_t first = band; first < end;) {
        const std::size_t last = group_end(first, end);
        read_group(first, last);
        const bool final = last == listed().size();
        if ((cut || final || pending_count_ * (8 * rank_ + es_) >= max_bytes_) && (!emit(last) || final)) return;
        first = last;
      }
      band = end;
    }
  }

  // Positions inside a band, (line position in the band) x (extent of the last dimensions),
  // must be 64-bit numbers: the heap's keys.
  void check_band_positions() const {
    long double span = double(grid_.chunk_dims()[0]);
    for (std::size_t d = 1; d < rank_; ++d) span *= (long double)(grid_.dataset_dims()[d]);
    H5SPARSE_FAIL_IF(span >= 18446744073709551615.0L, ErrorCode::unsupported,
                     "coordinate reads need (chunk rows) x (extent of the other dimensions) below 2^64");
  }

  // The stored chunks meeting the region, in row-major order (the listing a scan of the same
  // region left, when this one resumes it), from `scan_.from` on.
  void list() {
    generation_ = sparse_generation();
    if (resumable_ && !scan_.from.empty()) all_ = resumable_->find(scan_.region, grid_.dataset_dims(), generation_);
    if (!all_) all_ = std::make_shared<std::vector<ListedChunk>>(detail::stored_chunks_in(store_, grid_, scan_.region));
    if (!scan_.from.empty())
      first_ = std::size_t(std::lower_bound(listed().begin(), listed().end(), scan_.from,
                                            [&](const ListedChunk& c, const Coords& from) {
                                              return grid_.chunk_origin(c.number) < from;
                                            }) -
                           listed().begin());
    reads_by_address_ = workers_take_part() && store_.reads_by_address_on_any_thread();
  }

  // Whether workers decode any of the listed chunks: only then do reads by address pay for
  // the store's check of them (a chunk read twice). The bytes matter only below
  // kParallelMinChunks chunks, so at most that many are summed: a resumed iteration's scans
  // must not each pass over the rest of the listing.
  bool workers_take_part() const {
    const std::size_t chunks = listed().size() - first_;
    std::uint64_t bytes = 0;
    for (std::size_t i = first_; i < first_ + std::min<std::size_t>(chunks, kParallelMinChunks); ++i)
      bytes += listed()[i].at.size;
    return chunk_threads_for(chunks, bytes) > 1;
  }

  const std::vector<ListedChunk>& listed() const { return *all_; }

  // The end of a group of whole chunks from `first` whose stored bytes stay within half the
  // batch budget (at least one chunk).
  std::size_t group_end(std::size_t first, std::size_t end) const {
    std::uint64_t bytes = listed()[first].at.size;
    std::size_t last = first + 1;
    while (last < end && bytes + listed()[last].at.size <= max_bytes_ / 2) bytes += listed()[last++].at.size;
    return last;
  }

  // Reads chunks [first, last) and counts their elements inside the region, kept for the next
  // batch (merged when its size is known, so that it is written once, where the caller wants
  // it). A chunk the region holds whole, whose header states its count, is decoded only then.
  // While the workers count, this thread reads the group after this one.
  void read_group(std::size_t first, std::size_t last) {
    std::vector<ChunkPart> parts = ahead_first_ == first ? std::move(ahead_) : listed_parts(first, last);
    ahead_first_ = SIZE_MAX;
    std::vector<ChunkPart*> all = pointers(parts);
    read_parts(all);
    decode_parts(all, [&](ChunkPart& part) { count(part); }, [&] { read_ahead(last); });
    std::size_t count = 0;
    for (ChunkPart& part : parts) {
      count += part.count;
      if (var_ && scan_.values) number_var_values(part);
      hold_or_drop(part);
    }
    if (count == 0) return;
    pending_.push_back(Group{std::move(parts), pending_count_, count});
    pending_count_ += count;
  }

  // The parts of listed chunks [first, last), not read yet.
  std::vector<ChunkPart> listed_parts(std::size_t first, std::size_t last) const {
    std::vector<ChunkPart> parts(last - first);
    for (std::size_t i = first; i < last; ++i) {
      parts[i - first].origin = grid_.chunk_origin(listed()[i].number);
      parts[i - first].at = listed()[i].at;
    }
    return parts;
  }

  static std::vector<ChunkPart*> pointers(std::vector<ChunkPart>& parts) {
    std::vector<ChunkPart*> all(parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) all[i] = &parts[i];
    return all;
  }

  // Reads the group of listed chunks from `first` (the one scan() takes next) into ahead_.
  void read_ahead(std::size_t first) {
    if (first >= listed().size()) return;
    std::size_t end = first;
    const std::uint64_t band_number = listed()[first].number / band_chunks_;
    while (end < listed().size() && listed()[end].number / band_chunks_ == band_number) ++end;
    ahead_ = listed_parts(first, group_end(first, end));
    read_parts(pointers(ahead_));
    ahead_first_ = first;
  }

  // Reads the stored bytes of the parts that are neither held nor decoded and that only this
  // thread may read (the store is HDF5's).
  void read_parts(const std::vector<ChunkPart*>& parts) {
    for (ChunkPart* part : parts)
      if (!read_by_workers(*part)) read_unread(*part);
  }

  bool read_by_workers(const ChunkPart& part) const { return reads_by_address_ && part.at.address != kNoAddress; }

  // Reads a part's stored bytes unless it holds them or its elements (on a worker: any part
  // read_by_workers).
  void read_unread(ChunkPart& part) const {
    if (!part.decoded && part.stored.bytes.empty()) store_.read_listed(part.origin, part.at, part.stored);
  }

  // Runs `f` on every part not decoded yet, on the workers, while this thread runs lead(); a
  // failure names its chunk.
  template <typename F, typename Lead>
  void decode_parts(const std::vector<ChunkPart*>& parts, F&& f, Lead&& lead) const {
    std::vector<ChunkPart*> todo;
    std::uint64_t bytes = 0;
    for (ChunkPart* part : parts)
      if (!part->decoded) {
        todo.push_back(part);
        bytes += part->at.size;
      }
    std::exception_ptr lead_error;
    const auto failed = parallel_for(todo.size(), chunk_threads_for(todo.size(), bytes),
                                     [&](std::size_t i, int) {
                                       read_unread(*todo[i]);
                                       f(*todo[i]);
                                     },
                                     lead, &lead_error);
    if (failed) engine_.rethrow_naming_chunk(store_, *failed, todo[failed->index]->origin);
    if (lead_error) std::rethrow_exception(lead_error);
  }

  // A part's count of elements inside the region: stated by a chunk the region holds whole
  // (a dense one holds them all), else from decoding it. A chunk too small to be read again
  // is decoded now: its header would be read twice.
  void count(ChunkPart& part) const {
    part.whole = covered(part.origin);
    if (!var_ && part.whole && part.stored.bytes.size() >= kRereadBytes) {
      const StoredChunk& stored = part.stored;
      const std::optional<std::uint64_t> stated =
          stored.filter_mask & 1 ? std::optional<std::uint64_t>(layout_.element_count())
                                 : stated_element_count(stored.bytes.data(), stored.bytes.size(), layout_);
      if (stated) {
        part.count = *stated;
        return;
      }
    }
    decode(part);
    part.count = part.elements.offsets.size();
  }

  // Decodes a part whose count is known. The batch's memory was sized by that count, so a chunk
  // whose selection holds another count is refused as corrupt before the merge could write
  // past its places.
  void decode_counted(ChunkPart& part) const {
    decode(part);
    H5SPARSE_FAIL_IF(part.elements.offsets.size() != part.count, ErrorCode::corrupt_data,
                     "the chunk holds " + std::to_string(part.elements.offsets.size()) + " elements, not the " +
                         std::to_string(part.count) + " its selection states");
  }

  // Keeps a part for its batch within the held bytes, else drops what it holds (read again
  // then). A variable-length dataset's parts stay: the batch holds their values anyway.
  void hold_or_drop(ChunkPart& part) {
    const std::uint64_t bytes =
        part.decoded ? part.elements.offsets.size() * (4 + value_size_) : part.stored.bytes.size();
    if (var_ || bytes < kRereadBytes || held_ + bytes <= scan_.held_bytes) {
      held_ += bytes;
      return;
    }
    part.stored.bytes = RawBytes();
    part.elements = ChunkElements();
    part.decoded = false;
  }

  void decode(ChunkPart& part) const {
    const StoredChunk& stored = part.stored;
    bool cut = part.whole;
    if (var_) {
      decode_var(part);
    } else if (!cut && !holds_few(stored.bytes.data(), stored.bytes.size(), stored.filter_mask, layout_)) {
      // Part of a chunk of many elements (a gene's column, a few cells' rows): only the
      // elements inside decoded where the selection's encoding allows, only their values copied.
      const auto boxes = detail::local_boxes(scan_.region, part.origin, grid_.chunk_dims());
      part.elements = decode_stored_elements_in(stored.bytes.data(), stored.bytes.size(), stored.filter_mask,
                                                layout_, detail::offset_ranges(boxes, grid_.chunk_dims()));
      cut = true;
    } else {
      part.elements = decode_stored_elements(stored.bytes.data(), stored.bytes.size(), stored.filter_mask, layout_);
    }
    part.stored.bytes = RawBytes();
    part.decoded = true;
    if (!cut)
      detail::keep_elements(part.elements, detail::local_boxes(scan_.region, part.origin, grid_.chunk_dims()),
                            grid_.chunk_dims(), value_size_, true);
    if (!scan_.values) part.elements.values = Bytes();
  }

  // True when a box of the region holds every element of the chunk at `origin`, which lies
  // inside the extent (an edge chunk is always cut: writers without the connector may have
  // defined elements past the extent, which are not the dataset's). No allocation: a read of
  // one-element chunks asks once per element.
  bool covered(const Coords& origin) const {
    const Coords& chunk = grid_.chunk_dims();
    for (std::size_t d = 0; d < rank_; ++d)
      if (origin[d] + chunk[d] > grid_.dataset_dims()[d]) return false;
    for (const Box& b : scan_.region) {
      bool holds = true;
      for (std::size_t d = 0; d < rank_ && holds; ++d)
        holds = b.start[d] <= origin[d] && origin[d] + chunk[d] <= b.start[d] + b.count[d];
      if (holds) return true;
    }
    return false;
  }

  // A variable-length chunk's elements, each value its number in the chunk's values, which
  // the part keeps (the merge then moves 8 bytes an element, whatever the payloads).
  void decode_var(ChunkPart& part) const {
    ChunkVarElements chunk = decode_stored_var_elements(part.stored.bytes.data(), part.stored.bytes.size(),
                                                        part.stored.filter_mask, layout_);
    part.elements.offsets = std::move(chunk.offsets);
    part.elements.values.resize(part.elements.offsets.size() * 8);
    for (std::uint64_t i = 0; i < part.elements.offsets.size(); ++i) std::memcpy(&part.elements.values[i * 8], &i, 8);
    part.var = std::make_unique<VarValues>(std::move(chunk.values));
  }

  // Makes a part's value numbers count in the batch's values, and moves its values there.
  void number_var_values(ChunkPart& part) {
    const std::uint64_t first = pending_var_.count(layout_.var);
    for (std::size_t i = 0; i < part.elements.offsets.size(); ++i) {
      std::uint64_t number;
      std::memcpy(&number, &part.elements.values[i * 8], 8);
      number += first;
      std::memcpy(&part.elements.values[i * 8], &number, 8);
    }
    pending_var_.append_values(*part.var);
    part.var.reset();
  }

  // The position in the band of line `line` of a chunk at `origin`: its first element's
  // row-major number among the band's elements, counted from the band's first row.
  std::uint64_t line_key(const Coords& origin, std::uint64_t line, Coords& at) const {  // at: scratch
    const Coords& chunk = grid_.chunk_dims();
    for (std::size_t d = rank_ - 1; d-- > 0; line /= chunk[d]) at[d] = line % chunk[d];
    std::uint64_t key = at[0];
    for (std::size_t d = 1; d < rank_; ++d)
      key = key * grid_.dataset_dims()[d] + origin[d] + (d + 1 < rank_ ? at[d] : 0);
    return key;
  }

  // The end of the run of offsets from `begin` that lie before `limit`, the end of a line: a
  // galloping search (steps 1, 2, 4, ... then a bisection), so a line of n elements costs
  // about 2 log n steps, and a line of one element, the sparse case, one.
  static std::size_t line_end(const std::vector<std::uint32_t>& offsets, std::size_t begin, std::uint64_t limit) {
    std::size_t low = begin, step = 1;  // offsets[low] < limit
    while (low + step < offsets.size() && offsets[low + step] < limit) {
      low += step;
      step *= 2;
    }
    const auto first = offsets.begin() + std::ptrdiff_t(low + 1);
    const auto last = offsets.begin() + std::ptrdiff_t(std::min(offsets.size(), low + step));
    return std::size_t(std::lower_bound(first, last, limit) - offsets.begin());
  }

  // Coordinates of `count` elements of one line, from element `first` of `to`: `at` but the
  // last dimension, which is offset + `shift` (the line's first column in the dataset minus
  // its first offset).
  void write_line(const std::uint32_t* offsets, std::size_t count, const Coords& at, std::uint64_t shift,
                  const CoordinateDestination& to, std::size_t first) const {
    if (compressed_) {
      with_columns(to, [&](const auto out) {
        for (std::size_t k = 0; k < count; ++k) out(first + k, 0, offsets[k] + shift);
      });
      return;
    }
    std::uint64_t* out = to.coords + first * rank_;
    if (rank_ == 2) {  // matrices: the common case, without the copy loop
      const std::uint64_t row = at[0];
      for (std::size_t k = 0; k < count; ++k, out += 2) {
        out[0] = row;
        out[1] = offsets[k] + shift;
      }
      return;
    }
    for (std::size_t k = 0; k < count; ++k, out += rank_) {
      std::copy(at.begin(), at.end() - 1, out);
      out[rank_ - 1] = offsets[k] + shift;
    }
  }

  // Compressed-row form: the count of each row of a matrix band (row r of its chunks: counts[r])
  // added to the region's row counts.
  void add_row_counts(std::uint64_t band_row, const std::size_t* counts, std::size_t rows) const {
    for (std::size_t r = 0; r < rows; ++r)
      if (counts[r]) rows_.row_counts[band_row + r - first_row_] += counts[r];
  }

  // Writes a group's elements in row-major order from its start in `to`. A matrix band goes
  // by a counting sort on its rows (below), where a heap merge of the chunks' lines costs a
  // heap step, about 250 instructions, per line. The heap stays for other ranks, whose lines'
  // order in a band has no small range, and for bands of fewer elements than an eighth of a
  // chunk's rows (a count per row would cost more than they do: at 2^31 x 2^31, most bands
  // hold one element).
  void merge(const Group& group, const CoordinateDestination& to) const {
    if (rank_ == 2 && grid_.chunk_dims()[0] <= 8 * group.count)
      merge_matrix_rows(group, to);
    else
      merge_rows(group.parts, to, group.start);
  }

  // A band of a matrix: the elements of each row counted, a place for each row from those
  // counts, then the parts, which are in column order, fill each row left to right. Lines of a
  // few elements go an element at a time, longer ones a line at a time (a search for its end
  // and a copy); docs/DESIGN.md has the instruction counts behind the choice.
  void merge_matrix_rows(const Group& group, const CoordinateDestination& to) const {
    const std::vector<ChunkPart>& parts = group.parts;
    const std::uint64_t rows = grid_.chunk_dims()[0], width = grid_.chunk_dims()[1];
    const bool by_element = group.count < 4 * rows * parts.size();
    const RowOfOffset row_of(width);
    std::vector<std::size_t> place(rows + 1, 0);  // then: the next place of each row
    if (by_element) {
      std::size_t* const counts = place.data() + 1;
      for (const ChunkPart& part : parts)
        for (const std::uint32_t offset : part.elements.offsets) ++counts[row_of(offset)];
    } else {
      for_each_line(parts, row_of, [&](const ChunkPart&, std::uint64_t row, std::size_t begin, std::size_t end) {
        place[row + 1] += end - begin;
      });
    }
    if (compressed_) add_row_counts(parts.front().origin[0], place.data() + 1, rows);
    place[0] = group.start;
    for (std::size_t r = 1; r < place.size(); ++r) place[r] += place[r - 1];
    if (by_element) {
      for (const ChunkPart& part : parts) place_elements(part, row_of, place.data(), to);
      return;
    }
    Coords at(rank_);
    for_each_line(parts, row_of, [&](const ChunkPart& part, std::uint64_t row, std::size_t begin, std::size_t end) {
      const std::size_t first = place[row];
      place[row] += end - begin;
      at[0] = part.origin[0] + row;
      write_line(&part.elements.offsets[begin], end - begin, at, part.origin[1] - row * width, to, first);
      if (es_) std::memcpy(&to.values[first * es_], &part.elements.values[begin * es_], (end - begin) * es_);
    });
  }

  // The row of an offset in a chunk `width` elements wide: a shift, not a division, in the
  // common case of a power of two.
  struct RowOfOffset {
    explicit RowOfOffset(std::uint64_t w) : width(w), shift(unsigned(__builtin_ctzll(w))), pow2((w & (w - 1)) == 0) {}
    std::uint64_t operator()(std::uint32_t offset) const { return pow2 ? offset >> shift : offset / width; }
    std::uint64_t width;
    unsigned shift;
    bool pow2;
  };

  // Where an element's coordinates go: both (RowAndColumn), or in compressed-row form its
  // column from the region's first (ColumnFrom<T>, T of the index size, which the column fits:
  // checked before the scan).
  struct RowAndColumn {
    std::uint64_t* coords;
    void operator()(std::size_t at, std::uint64_t row, std::uint64_t column) const {
      coords[2 * at] = row;
      coords[2 * at + 1] = column;
    }
  };
  template <typename T>
  struct ColumnFrom {
    T* columns;
    std::uint64_t first;
    void operator()(std::size_t at, std::uint64_t, std::uint64_t column) const { columns[at] = T(column - first); }
  };

  // Calls f with the ColumnFrom of compressed-row form's index size.
  template <typename F>
  void with_columns(const CoordinateDestination& to, F&& f) const {
    if (rows_.index_size == 4)
      f(ColumnFrom<std::uint32_t>{reinterpret_cast<std::uint32_t*>(to.coords), first_column_});
    else
      f(ColumnFrom<std::uint64_t>{to.coords, first_column_});
  }

  // The counting sort's second pass over one part of a matrix band: each element to the next
  // place of its row. The value size is a template argument for the common sizes (0: no values).
  void place_elements(const ChunkPart& part, const RowOfOffset& row_of, std::size_t* place,
                      const CoordinateDestination& to) const {
    if (!compressed_) return place_elements_of(part, row_of, place, to, RowAndColumn{to.coords});
    with_columns(to, [&](const auto out) { place_elements_of(part, row_of, place, to, out); });
  }

  template <typename Out>
  void place_elements_of(const ChunkPart& part, const RowOfOffset& row_of, std::size_t* place,
                         const CoordinateDestination& to, Out out) const {
    switch (es_) {
      case 0: return place_elements<0>(part, row_of, place, to.values, out);
      case 4: return place_elements<4>(part, row_of, place, to.values, out);
      case 8: return place_elements<8>(part, row_of, place, to.values, out);
      default: return place_elements<kAnyValueSize>(part, row_of, place, to.values, out);
    }
  }

  static constexpr std::size_t kAnyValueSize = SIZE_MAX;

  // Everything the loop reads is held in locals: a store of a coordinate could otherwise alias
  // them (they are 64-bit numbers too) and be reloaded at every element. Not inlined: the loop
  // then has the registers to itself (inlined, it spilled two of them: 7% more instructions).
  template <std::size_t kValueSize, typename Out>
  [[gnu::noinline]] void place_elements(const ChunkPart& part, const RowOfOffset& row_of, std::size_t* place, std::uint8_t* values,
                      const Out out) const {
    const std::size_t value_size = kValueSize == kAnyValueSize ? es_ : kValueSize;
    const std::uint32_t* const offsets = part.elements.offsets.data();
    const std::size_t count = part.elements.offsets.size();
    const std::uint8_t* const from = part.elements.values.data();
    const RowOfOffset rows = row_of;
    const std::uint64_t row0 = part.origin[0], column0 = part.origin[1], width = row_of.width;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t offset = offsets[i];
      const std::uint64_t row = rows(offset);
      const std::size_t at = place[row]++;
      out(at, row0 + row, column0 + offset - row * width);
      if (value_size) std::memcpy(&values[at * value_size], &from[i * value_size], value_size);
    }
  }

  // Calls f(part, row, begin, end) for each line of each part of a matrix band, in order.
  template <typename RowOf, typename F>
  void for_each_line(const std::vector<ChunkPart>& parts, const RowOf& row_of, F&& f) const {
    const std::uint64_t width = grid_.chunk_dims()[1];
    for (const ChunkPart& part : parts) {
      const std::vector<std::uint32_t>& offsets = part.elements.offsets;
      for (std::size_t i = 0; i < offsets.size();) {
        const std::uint64_t row = row_of(offsets[i]);
        const std::size_t end = line_end(offsets, i, (row + 1) * width);
        f(part, row, i, end);
        i = end;
      }
    }
  }

  // Any rank: a min-heap of the parts keyed by the position of their next line in the band,
  // writing from element `at_element` of `to`.
  void merge_rows(const std::vector<ChunkPart>& parts, const CoordinateDestination& to, std::size_t at_element) const {
    const std::uint64_t row = grid_.chunk_dims()[rank_ - 1];
    using Entry = std::pair<std::uint64_t, std::size_t>;  // (line key, part)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    std::vector<std::size_t> cursor(parts.size(), 0);
    Coords at(rank_), scratch(rank_);
    for (std::size_t p = 0; p < parts.size(); ++p)
      if (!parts[p].elements.offsets.empty())
        heap.emplace(line_key(parts[p].origin, parts[p].elements.offsets[0] / row, scratch), p);
    while (!heap.empty()) {
      const std::size_t p = heap.top().second;
      heap.pop();
      const ChunkElements& e = parts[p].elements;
      const Coords& origin = parts[p].origin;
      const std::size_t begin = cursor[p];
      const std::uint64_t line = e.offsets[begin] / row;
      for (std::size_t d = rank_ - 1, rest = line; d-- > 0; rest /= grid_.chunk_dims()[d])
        at[d] = origin[d] + rest % grid_.chunk_dims()[d];
      const std::size_t i = line_end(e.offsets, begin, (line + 1) * row);
      write_line(&e.offsets[begin], i - begin, at, origin[rank_ - 1] - line * row, to, at_element);
      if (compressed_) rows_.row_counts[at[0] - first_row_] += i - begin;
      if (es_) std::memcpy(&to.values[at_element * es_], &e.values[begin * es_], (i - begin) * es_);
      at_element += i - begin;
      cursor[p] = i;
      if (i < e.offsets.size()) heap.emplace(line_key(origin, e.offsets[i] / row, scratch), p);
    }
  }

  // The memory of a batch of `count` elements: the caller's, else the scan's own.
  CoordinateDestination room(std::size_t count) {
    if (!scan_.room) {
      return {coords_.take(count * rank_), values_.take(count * es_)};
    }
    const CoordinateDestination to = scan_.room(count);
    H5SPARSE_FAIL_IF(count && (!to.coords || (es_ && !to.values)), ErrorCode::invalid_argument,
                     "no memory was given for a batch of " + std::to_string(count) + " elements");
    return to;
  }

  // The end of a window of pending groups from `first` whose stored bytes stay within the held
  // bytes (at least one group): decoded and merged together, then let go.
  std::size_t window_end(std::size_t first) const {
    std::uint64_t bytes = 0;
    std::size_t last = first;
    do {
      for (const ChunkPart& part : pending_[last].parts) bytes += part.at.size;
      ++last;
    } while (last < pending_.size() && bytes <= scan_.held_bytes);
    return last;
  }

  // Reads again the parts of pending groups [first, last) that were dropped.
  void read_window(std::size_t first, std::size_t last) {
    for (std::size_t g = first; g < last; ++g) read_parts(pointers(pending_[g].parts));
  }

  // Writes pending groups [first, last), read, into the batch: each group decoded and merged to
  // the places its count gives by one worker, then let go (its elements are written while in
  // the worker's cache, and their memory serves the next group), while this thread runs lead().
  template <typename Lead>
  void write_window(std::size_t first, std::size_t last, const CoordinateDestination& to, Lead&& lead) {
    const std::uint64_t count = pending_[last - 1].start + pending_[last - 1].count - pending_[first].start;
    std::vector<const ChunkPart*> failed_part(last - first, nullptr);
    std::exception_ptr lead_error;
    const auto failed = parallel_for(
        last - first, chunk_threads_for(last - first, count * (8 * rank_ + es_)),
        [&](std::size_t g, int) {
          Group& group = pending_[first + g];
          for (ChunkPart& part : group.parts) {
            if (part.decoded) continue;
            failed_part[g] = &part;
            read_unread(part);
            decode_counted(part);
          }
          failed_part[g] = nullptr;
          merge(group, to);
          group.parts = std::vector<ChunkPart>();
        },
        lead, &lead_error);
    if (failed && failed_part[failed->index])
      engine_.rethrow_naming_chunk(store_, *failed, failed_part[failed->index]->origin);
    if (failed) std::rethrow_exception(failed->error);
    if (lead_error) std::rethrow_exception(lead_error);
  }

  // Merges the decoded groups into a batch and hands it over; `next`: the listed chunk after it.
  bool emit(std::size_t next) {
    CoordinateBatch batch;
    batch.count = pending_count_;
    const CoordinateDestination to = room(batch.count);
    // Window by window, the next one read while the workers write this one.
    std::size_t end = pending_.empty() ? 0 : window_end(0);
    read_window(0, end);
    for (std::size_t g = 0; g < pending_.size();) {
      const std::size_t next_end = end < pending_.size() ? window_end(end) : end;
      write_window(g, end, to, [&] { read_window(end, next_end); });
      g = end;
      end = next_end;
    }
    pending_.clear();
    pending_count_ = 0;
    held_ = 0;
    batch.coords = to.coords;
    batch.values = es_ ? to.values : nullptr;
    batch.var_values = var_ && es_ ? &pending_var_ : nullptr;
    if (next < listed().size()) next_origin_ = grid_.chunk_origin(listed()[next].number);
    batch.next = next < listed().size() ? &next_origin_ : nullptr;
    const bool go_on = sink_(batch);
    pending_var_ = VarValues();
    stopped_ = !go_on && batch.next;
    return go_on;
  }

  const SparseEngine& engine_;
  const ChunkLayout& layout_;
  ChunkStore& store_;
  const ChunkGrid& grid_;
  const CoordinateScan& scan_;
  const CoordinateSink& sink_;
  const std::size_t rank_;
  const bool var_;                // a variable-length dataset
  const std::size_t value_size_;  // of a decoded element's value: a variable-length one's number
  const std::size_t es_;          // 0: no values
  const CompressedRows rows_;
  const bool compressed_;         // compressed-row form: columns and row counts, not coordinates
  const std::size_t max_bytes_;   // of a batch: the scan's, or all in one (compressed-row form)
  std::uint64_t first_row_ = 0, first_column_ = 0;  // the region's, in compressed-row form
  detail::ResumableListing* const resumable_;  // null: no listing kept between scans
  std::uint64_t generation_ = 0;                // of the listing
  detail::Listing all_;
  std::size_t first_ = 0;  // the first listed chunk at or after scan_.from
  bool stopped_ = false;   // the sink stopped the scan before its last chunk
  bool reads_by_address_ = false;  // the workers read the parts listed with an address
  std::uint64_t band_chunks_ = 1;  // chunks sharing a range of dimension 0: a band's numbers
  Coords next_origin_;
  std::vector<Group> pending_;     // groups of the next batch, in order
  std::size_t pending_count_ = 0;  // their elements
  std::uint64_t held_ = 0;         // bytes their parts hold
  VarValues pending_var_;          // a variable-length dataset's values of the next batch
  std::vector<ChunkPart> ahead_;   // the group after the last one read, read ahead
  std::size_t ahead_first_ = SIZE_MAX;  // its first listed chunk
  Scratch<std::uint64_t> coords_;  // a batch's memory when the caller gives none
  Scratch<std::uint8_t> values_;
};

// What compressed-row form asks of a scan (CompressedRows).
void check_compressed_rows(const ChunkGrid& grid, const CoordinateScan& scan) {
  const std::size_t index_size = scan.compressed_rows.index_size;
  H5SPARSE_FAIL_IF(grid.rank() != 2, ErrorCode::invalid_argument,
                   "compressed rows are read from 2-D datasets, not from " + std::to_string(grid.rank()) + "-D ones");
  H5SPARSE_FAIL_IF(scan.region.size() != 1, ErrorCode::invalid_argument,
                   "compressed rows are read from one box, not from " + std::to_string(scan.region.size()));
  H5SPARSE_FAIL_IF(!scan.from.empty(), ErrorCode::invalid_argument,
                   "compressed rows are read in one batch, not resumed");
  H5SPARSE_FAIL_IF(index_size != 4 && index_size != 8, ErrorCode::invalid_argument,
                   "column indices are 4 or 8 bytes, not " + std::to_string(index_size));
  H5SPARSE_FAIL_IF(index_size == 4 && scan.region[0].count[1] > (std::uint64_t(1) << 31), ErrorCode::invalid_argument,
                   "a box of " + std::to_string(scan.region[0].count[1]) + " columns needs 8-byte column indices");
}

}  // namespace

void SparseEngine::scan_coordinates(ChunkStore& store, const ChunkGrid& grid, const CoordinateScan& scan,
                                    const CoordinateSink& sink) const {
  for (const Box& box : scan.region) {
    H5SPARSE_FAIL_IF(box.start.size() != grid.rank() || box.count.size() != grid.rank(), ErrorCode::invalid_argument,
                     "region box of the wrong rank");
    for (std::size_t d = 0; d < grid.rank(); ++d)
      H5SPARSE_FAIL_IF(box.start[d] > grid.dataset_dims()[d] || box.count[d] > grid.dataset_dims()[d] - box.start[d],
                       ErrorCode::invalid_argument,
                       "region " + coords_text(box.start) + " + " + coords_text(box.count) +
                           " is outside the extent " + coords_text(grid.dataset_dims()));
  }
  if (scan.compressed_rows.row_counts) check_compressed_rows(grid, scan);
  Scan(*this, store, grid, scan, sink, resumable_.get()).run();
}

}  // namespace h5sparse
