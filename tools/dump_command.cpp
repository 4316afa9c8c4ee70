// `dump`: the Tools RFC's --sparse-locations (defined elements as BLOCKs and POINTs) and
// --sparse-data (the same, each followed by its values, the first element's coordinates at
// the head of every line), in h5dump's DDL framing.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "box_list.hpp"
#include "commands.hpp"
#include "progress.hpp"
#include "locations_text.hpp"
#include "sparse_reader.hpp"
#include "tool_support.hpp"
#include "value_format.hpp"

namespace h5sparse::tool {
namespace {

constexpr std::size_t kPointsPerLine = 8;
constexpr std::size_t kValuesPerLine = 16;
constexpr std::size_t kCacheBytes = std::size_t(256) << 20;

/// Values by element, from decoded chunks kept while memory allows: fixed-size ones expanded
/// to dense, variable-length ones as their elements (looked up by offset).
class ValueSource {
 public:
  ValueSource(const SparseReader& d, hid_t type) : d_(d) {
    if (d.is_var())
      var_format_.emplace(type);
    else
      format_.emplace(type);
    for (const ChunkEntry& c : d.stored_chunks()) stored_.emplace(c.origin, c);
  }
  /// Appends the value of the defined element at `coords`.
  void append(std::string& out, const std::uint64_t* coords) {
    const std::vector<std::uint64_t>& cd = d_.layout().dims;
    std::vector<std::uint64_t> origin(d_.rank());
    std::uint64_t linear = 0;
    for (std::size_t i = 0; i < d_.rank(); ++i) {
      origin[i] = coords[i] / cd[i] * cd[i];
      linear = linear * cd[i] + (coords[i] - origin[i]);
    }
    const Chunk& chunk = chunk_at(origin);
    if (format_) return format_->append(out, chunk.dense.data() + linear * d_.layout().element_size);
    const std::vector<std::uint32_t>& offsets = chunk.var.offsets;
    const auto at = std::lower_bound(offsets.begin(), offsets.end(), linear);
    if (at == offsets.end() || *at != linear)
      fail(ErrorCode::internal_error, d_.path() + ": a defined element has no value");
    var_format_->append(out, chunk.var.values, std::size_t(at - offsets.begin()));
  }

 private:
  struct Chunk {
    Bytes dense;           // fixed-size: the dense chunk
    ChunkVarElements var;  // variable-length: the elements
  };
  const Chunk& chunk_at(const std::vector<std::uint64_t>& origin) {
    auto hit = cache_.find(origin);
    if (hit != cache_.end()) return hit->second;
    const auto s = stored_.find(origin);
    if (s == stored_.end()) fail(ErrorCode::corrupt_data, d_.path() + ": a defined element has no stored chunk");
    if (cached_bytes_ > kCacheBytes) {
      cache_.clear();
      cached_bytes_ = 0;
    }
    Chunk c;
    const StoredChunk raw = d_.read_raw(s->second);
    if (d_.is_var()) {
      c.var = d_.decode_var(s->second, raw);
      cached_bytes_ += c.var.values.data.size() + c.var.values.fixed.size() + c.var.offsets.size() * 16;
    } else {
      c.dense.resize(d_.layout().element_count() * d_.layout().element_size);
      expand_to_dense(d_.decode(s->second, raw), d_.layout(), d_.fill().data(), c.dense.data());
      cached_bytes_ += c.dense.size();
    }
    return cache_.emplace(origin, std::move(c)).first->second;
  }

  const SparseReader& d_;
  std::optional<ValueFormatter> format_;
  std::optional<VarValueFormatter> var_format_;
  std::map<std::vector<std::uint64_t>, ChunkEntry> stored_;
  std::map<std::vector<std::uint64_t>, Chunk> cache_;
  std::size_t cached_bytes_ = 0;
};

/// The part of the dataset to print, h5dump's -s/-c: inclusive corners.
struct Window {
  std::vector<std::uint64_t> lo, hi;
};

std::vector<std::uint64_t> parse_list(const std::string& text, const char* option) {
  return parse_numbers(text, ",", std::string(option) + " wants comma-separated counts like 0,10, got \"" + text + "\"");
}

Window window_of(const Arguments& args, const std::vector<std::uint64_t>& dims, const std::string& path) {
  const std::size_t r = dims.size();
  Window w{std::vector<std::uint64_t>(r, 0), std::vector<std::uint64_t>(r, 0)};
  if (args.has("start")) w.lo = parse_list(args.value("start"), "--start");
  std::vector<std::uint64_t> count(r, 0);
  for (std::size_t d = 0; d < r && d < w.lo.size(); ++d) count[d] = dims[d] > w.lo[d] ? dims[d] - w.lo[d] : 0;
  if (args.has("count")) count = parse_list(args.value("count"), "--count");
  if (w.lo.size() != r || count.size() != r)
    fail(ErrorCode::invalid_argument, "--start and --count need " + std::to_string(r) + " values for " + path);
  for (std::size_t d = 0; d < r; ++d) {
    if (count[d] == 0 || w.lo[d] + count[d] > dims[d])
      fail(ErrorCode::invalid_argument, "--start/--count select outside " + path + "'s extent " + dims_text(dims));
    w.hi[d] = w.lo[d] + count[d] - 1;
  }
  return w;
}

BoxList defined_boxes(const SparseReader& d, const Window& w, const std::string& progress_mode) {
  const std::size_t r = d.rank();
  BoxList boxes(r);
  const std::vector<ChunkEntry> stored = d.stored_chunks();
  Progress progress(progress_mode, "dump " + d.path(), stored.size());
  for (const ChunkEntry& chunk : stored) {
    progress.advance();
    bool touches = true;
    for (std::size_t k = 0; k < r; ++k)
      touches = touches && chunk.origin[k] <= w.hi[k] && chunk.origin[k] + d.layout().dims[k] > w.lo[k];
    if (!touches) continue;
    const ChunkSelection defined = d.defined(chunk, d.read_raw(chunk));
    d.for_each_defined_run(chunk, defined, [&](const std::uint64_t* row, std::uint64_t first, std::uint64_t n,
                                               std::uint64_t) {
      for (std::size_t k = 0; k + 1 < r; ++k)
        if (row[k] < w.lo[k] || row[k] > w.hi[k]) return;
      const std::uint64_t a = std::max(first, w.lo[r - 1]), b = std::min(first + n - 1, w.hi[r - 1]);
      if (a <= b) boxes.add_run(row, a, b - a + 1);
    });
  }
  boxes.canonicalize();
  return boxes;
}

/// Output gathered in a string and written in large pieces: dumps run to millions of lines.
class Printer {
 public:
  explicit Printer(std::ostream& out) : out_(out) {}
  ~Printer() { flush(); }
  std::string& text() { return text_; }
  void line_done() {
    if (text_.size() > (std::size_t(1) << 16)) flush();
  }
  void flush() {
    out_.write(text_.data(), std::streamsize(text_.size()));
    text_.clear();
  }

 private:
  std::ostream& out_;
  std::string text_;
};

void print_block_data(Printer& p, const BoxList& boxes, std::size_t i, ValueSource& values) {
  const std::size_t r = boxes.rank();
  const std::uint64_t* lo = boxes.lo(i);
  const std::uint64_t* hi = boxes.hi(i);
  std::vector<std::uint64_t> at(lo, lo + r);
  std::string& s = p.text();
  s += "      DATA {\n";
  bool first_line = true;
  for (bool more = true; more;) {  // every row of the box along the last dimension
    for (std::uint64_t c = lo[r - 1]; c <= hi[r - 1]; ++c) {
      at[r - 1] = c;
      if ((c - lo[r - 1]) % kValuesPerLine == 0) {
        if (!first_line) {
          s += ",\n";
          p.line_done();
        }
        first_line = false;
        s += "      ";
        append_coords(s, at.data(), r);
        s += ' ';
      } else {
        s += ", ";
      }
      values.append(s, at.data());
    }
    more = false;
    for (std::size_t d = r - 1; d-- > 0;) {  // next row, odometer style
      if (at[d] < hi[d]) {
        ++at[d];
        more = true;
        break;
      }
      at[d] = lo[d];
    }
  }
  s += "\n      }\n";
  p.line_done();
}

void dump_dataset(hid_t file, const std::string& path, const Arguments& args, std::ostream& out) {
  const bool with_data = args.has("sparse-data");
  Handle dset = open_dataset(file, path);
  const SparseReader sparse(dset.get(), path);
  Handle type = sparse.true_type();
  const BoxList boxes = defined_boxes(sparse, window_of(args, sparse.dims(), path), args.progress_mode());
  const std::size_t r = sparse.rank();
  ValueSource values(sparse, type.get());

  Printer p(out);
  std::string& s = p.text();
  s += "DATASET " + quoted(path) + " {\n";
  s += "   DATATYPE  " + type_text(type.get()) + "\n";
  s += "   DATASPACE  " + dataspace_text(dset.get()) + "\n";
  s += "   DATA {\n";
  std::vector<std::size_t> points;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (boxes.volume(i) == 1) {
      points.push_back(i);
      continue;
    }
    s += "      DEFINED_SPARSE_DATA BLOCK ";
    append_coords(s, boxes.lo(i), r);
    s += '-';
    append_coords(s, boxes.hi(i), r);
    s += '\n';
    p.line_done();
    if (with_data) print_block_data(p, boxes, i, values);
  }
  for (std::size_t first = 0; first < points.size(); first += kPointsPerLine) {
    const std::size_t end = std::min(points.size(), first + kPointsPerLine);
    s += "      DEFINED_SPARSE_DATA POINT ";
    for (std::size_t k = first; k < end; ++k) {
      if (k > first) s += ", ";
      append_coords(s, boxes.lo(points[k]), r);
    }
    s += '\n';
    p.line_done();
    if (!with_data) continue;
    s += "      DATA {\n";
    for (std::size_t k = first; k < end; ++k) {
      s += "      ";
      append_coords(s, boxes.lo(points[k]), r);
      s += ' ';
      values.append(s, boxes.lo(points[k]));
      s += '\n';
    }
    s += "      }\n";
    p.line_done();
  }
  s += "   }\n}\n";
}

}  // namespace

int run_dump(const Arguments& args, std::ostream& out) {
  if (args.positional.size() != 1) fail(ErrorCode::invalid_argument, "dump takes one file");
  if (args.has("sparse-locations") && args.has("sparse-data"))
    fail(ErrorCode::invalid_argument, "choose one of --sparse-locations and --sparse-data");
  const std::string& name = args.positional[0];
  Handle file = open_file(name, false);
  std::vector<std::string> paths = args.values("dataset");
  if (paths.empty()) paths = sparse_dataset_paths(file.get());
  out << "HDF5 " << quoted(name) << " {\n";
  for (const std::string& p : paths) dump_dataset(file.get(), p, args, out);
  out << "}\n";
  return 0;
}

}  // namespace h5sparse::tool
