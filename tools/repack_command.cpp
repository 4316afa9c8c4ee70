// `repack`: copies a file, turning dense datasets into sparse ones (--to sparse) or sparse ones
// into dense chunked ones (--to dense). Everything else is copied unchanged.
//
// Sparse output is written without the connector: each chunk is encoded by the core and stored
// with H5Dwrite_chunk, so one chunk costs one read of the dense input and one encode, with no
// read-merge-write of stored chunks, and the tool runs wherever HDF5 and the filter plugin
// are (docs/DESIGN.md, "Command-line tool").
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "commands.hpp"
#include "file_copy.hpp"
#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/compression_options.hpp"
#include "h5sparse/filter_ids.hpp"
#include "locations_text.hpp"
#include "progress.hpp"
#include "sparse_reader.hpp"
#include "tool_support.hpp"

namespace h5sparse::tool {
namespace {

constexpr std::uint64_t kDefaultChunkBytes = std::uint64_t(1) << 20;

enum class DefinedRule { not_fill, not_value, list, all };

struct Plan {
  bool to_sparse = true;
  std::vector<std::string> datasets;  // empty: every convertible dataset
  DefinedRule rule = DefinedRule::not_fill;
  std::string exclude_text;
  std::vector<DatasetLocations> lists;
  std::optional<std::vector<std::uint64_t>> chunk;
  std::optional<SectionPipeline> selection_pipeline, values_pipeline;
  bool fill_is_undefined = false;
  std::string progress = "auto";
};

// --- option parsing ----------------------------------------------------------------------

std::vector<std::uint64_t> parse_dims(const std::string& text) {
  std::vector<std::uint64_t> dims;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find_first_of("x,", at), text.size());
    const std::string part = text.substr(at, end - at);
    char* stop = nullptr;
    const unsigned long long v = std::strtoull(part.c_str(), &stop, 10);
    if (part.empty() || *stop != '\0' || v == 0)
      fail(ErrorCode::invalid_argument, "--chunk wants positive dimensions like 64x64, got \"" + text + "\"");
    dims.push_back(v);
    at = end + 1;
  }
  return dims;
}

// "none", or the compression vocabulary: "complib=blosc:zstd,complevel=5,shuffle=bit".
SectionPipeline parse_pipeline(const std::string& spec) {
  if (spec == "none") return {};
  SectionPipeline pipeline;
  for (const FilterSpec& f : filter_pipeline(parse_compression_spec(spec)))
    pipeline.push_back({f.id, f.optional ? kFilterFlagOptional : 0u, f.cd_values});
  validate_pipeline(pipeline);
  return pipeline;
}

Plan make_plan(const Arguments& args) {
  Plan plan;
  const std::string to = args.value("to");
  if (to != "sparse" && to != "dense") fail(ErrorCode::invalid_argument, "repack needs --to sparse or --to dense");
  plan.to_sparse = to == "sparse";
  plan.datasets = args.values("dataset");
  int rules = 0;
  if (args.has("defined")) {
    ++rules;
    plan.rule = DefinedRule::list;
    const std::string path = args.value("defined");
    std::ifstream in(path);
    if (!in) fail(ErrorCode::invalid_argument, "cannot read the defined-elements list " + path);
    plan.lists = parse_locations(in, path);
  }
  if (args.has("exclude")) {
    ++rules;
    plan.rule = DefinedRule::not_value;
    plan.exclude_text = args.value("exclude");
  }
  if (args.has("all")) {
    ++rules;
    plan.rule = DefinedRule::all;
  }
  if (rules > 1) fail(ErrorCode::invalid_argument, "choose one of --defined, --exclude and --all");
  if (!plan.to_sparse && (rules || args.has("chunk") || args.has("selection-filter") || args.has("fill-is-undefined")))
    fail(ErrorCode::invalid_argument,
         "--defined, --exclude, --all, --chunk, --selection-filter and --fill-is-undefined apply to --to sparse");
  if (args.has("chunk")) plan.chunk = parse_dims(args.value("chunk"));
  if (args.has("selection-filter")) plan.selection_pipeline = parse_pipeline(args.value("selection-filter"));
  if (args.has("values-filter")) plan.values_pipeline = parse_pipeline(args.value("values-filter"));
  plan.fill_is_undefined = args.has("fill-is-undefined");
  plan.progress = args.progress_mode();
  return plan;
}

// --- shared helpers ----------------------------------------------------------------------

/// The part of the chunk at `origin` inside the extent.
std::vector<std::uint64_t> region_of(const std::vector<std::uint64_t>& origin, const std::vector<std::uint64_t>& chunk,
                                     const std::vector<std::uint64_t>& dims) {
  std::vector<std::uint64_t> region(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) region[d] = origin[d] >= dims[d] ? 0 : std::min(chunk[d], dims[d] - origin[d]);
  return region;
}

bool empty_region(const std::vector<std::uint64_t>& region) {
  for (std::uint64_t n : region)
    if (n == 0) return true;
  return false;
}

/// Dataspaces for moving the `region` part of a chunk buffer (full chunk dims) to or from the
/// dataset at `origin`.
std::pair<Handle, Handle> chunk_spaces(hid_t dset, const std::vector<std::uint64_t>& origin,
                                       const std::vector<std::uint64_t>& chunk, const std::vector<std::uint64_t>& region) {
  const std::vector<hsize_t> cdims(chunk.begin(), chunk.end()), start(origin.begin(), origin.end()),
      count(region.begin(), region.end()), zero(chunk.size(), 0);
  Handle mem = checked_handle(H5Screate_simple(int(cdims.size()), cdims.data(), nullptr), "cannot make a dataspace");
  check(H5Sselect_hyperslab(mem.get(), H5S_SELECT_SET, zero.data(), nullptr, count.data(), nullptr),
        "cannot select a chunk");
  Handle file = checked_handle(H5Dget_space(dset), "cannot read a dataspace");
  check(H5Sselect_hyperslab(file.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr),
        "cannot select a chunk");
  return {std::move(mem), std::move(file)};
}

/// Calls f(first) with the chunk-linear index of the first element of every row (along the
/// last dimension) of `region`, a corner-anchored part of a chunk of dims `chunk`, whose rows
/// start at `lo` (chunk-local, rank values) and are region[r-1] long.
template <typename F>
void for_each_row(const std::vector<std::uint64_t>& chunk, const std::vector<std::uint64_t>& lo,
                  const std::vector<std::uint64_t>& hi, F&& f) {
  const std::size_t r = chunk.size();
  std::vector<std::uint64_t> at(lo);
  for (;;) {
    std::uint64_t linear = 0;
    for (std::size_t d = 0; d < r; ++d) linear = linear * chunk[d] + at[d];
    f(linear);
    std::size_t d = r - 1;
    while (d-- > 0) {
      if (at[d] < hi[d]) {
        ++at[d];
        break;
      }
      at[d] = lo[d];
    }
    if (d == std::size_t(-1)) return;
  }
}

Bytes user_fill(hid_t dcpl, hid_t type, std::size_t size, bool* defined) {
  H5D_fill_value_t status;
  check(H5Pfill_value_defined(dcpl, &status), "cannot read a fill value");
  Bytes fill(size, 0);
  *defined = status == H5D_FILL_VALUE_USER_DEFINED;
  if (*defined) check(H5Pget_fill_value(dcpl, type, fill.data()), "cannot read a fill value");
  return fill;
}

/// --exclude VALUE in the dataset's file type; refuses values the type cannot hold exactly.
Bytes exclude_value(const std::string& text, hid_t type, const std::string& path) {
  const H5T_class_t cls = H5Tget_class(type);
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    fail(ErrorCode::invalid_argument, "--exclude needs a numeric dataset; " + path + " is not (use --defined)");
  const std::size_t size = H5Tget_size(type);
  std::vector<std::uint8_t> buf(std::max<std::size_t>(size, 8));
  char* stop = nullptr;
  errno = 0;
  hid_t from;
  if (cls == H5T_FLOAT) {
    const double v = std::strtod(text.c_str(), &stop);
    std::memcpy(buf.data(), &v, 8);
    from = H5T_NATIVE_DOUBLE;
  } else if (!text.empty() && text[0] == '-') {
    const long long v = std::strtoll(text.c_str(), &stop, 10);
    std::memcpy(buf.data(), &v, 8);
    from = H5T_NATIVE_LLONG;
  } else {
    const unsigned long long v = std::strtoull(text.c_str(), &stop, 10);
    std::memcpy(buf.data(), &v, 8);
    from = H5T_NATIVE_ULLONG;
  }
  if (text.empty() || *stop != '\0' || errno == ERANGE)
    fail(ErrorCode::invalid_argument, "--exclude \"" + text + "\" is not a number of " + path + "'s type");
  const std::vector<std::uint8_t> original(buf);
  check(H5Tconvert(from, type, 1, buf.data(), nullptr, H5P_DEFAULT), "cannot convert the --exclude value");
  std::vector<std::uint8_t> back(buf);
  check(H5Tconvert(type, from, 1, back.data(), nullptr, H5P_DEFAULT), "cannot convert the --exclude value");
  const bool nan = cls == H5T_FLOAT && std::isnan(std::strtod(text.c_str(), nullptr));
  if (!nan && std::memcmp(back.data(), original.data(), 8) != 0)
    fail(ErrorCode::invalid_argument, "--exclude " + text + " is not exactly representable in " + path + "'s type");
  return Bytes(buf.begin(), buf.begin() + long(size));
}

bool supported_section_filter(int id) {
  return id == kFilterDeflate || id == kFilterShuffle || id == kFilterLzf || id == kFilterBlosc;
}

/// The dense dataset's own pipeline as a values-section pipeline, when the core can run all of
/// it (blosc and lzf keep only their user options; set_local-filled values are per dataset).
SectionPipeline pipeline_of(hid_t dcpl) {
  SectionPipeline pipeline;
  const int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, cd[32];
    std::size_t ncd = 32;
    const H5Z_filter_t id = H5Pget_filter2(dcpl, unsigned(i), &flags, &ncd, cd, 0, nullptr, nullptr);
    if (!supported_section_filter(id)) return {};
    SectionFilter f{id, flags & kFilterFlagOptional, {}};
    if (id == kFilterDeflate && ncd > 0) f.cd_values = {cd[0]};
    if (id == kFilterBlosc && ncd >= 7) f.cd_values = {0, 0, 0, 0, cd[4], cd[5], cd[6]};
    pipeline.push_back(f);
  }
  try {
    validate_pipeline(pipeline);
  } catch (const Error&) {
    return {};
  }
  return pipeline;
}

std::vector<std::uint64_t> default_chunk(hid_t dcpl, const std::vector<std::uint64_t>& dims, std::size_t element_size) {
  if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
    std::vector<hsize_t> chunk(dims.size());
    check(H5Pget_chunk(dcpl, int(chunk.size()), chunk.data()), "cannot read chunk dimensions");
    return std::vector<std::uint64_t>(chunk.begin(), chunk.end());
  }
  std::vector<std::uint64_t> chunk(dims);
  for (std::uint64_t& c : chunk) c = std::max<std::uint64_t>(c, 1);
  for (;;) {  // halve the largest dimension until the chunk is at most 1 MiB
    std::uint64_t bytes = element_size;
    for (std::uint64_t c : chunk) bytes *= c;
    if (bytes <= kDefaultChunkBytes) return chunk;
    auto largest = std::max_element(chunk.begin(), chunk.end());
    if (*largest == 1) return chunk;
    *largest = (*largest + 1) / 2;
  }
}

std::string thousands(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
  return s;
}

// --- dense -> sparse -----------------------------------------------------------------------

class SparseWriter {
 public:
  SparseWriter(const Plan& plan, std::ostream& out) : plan_(plan), out_(out) {}

  bool convertible(hid_t dset) const {
    Handle type = checked_handle(H5Dget_type(dset), "cannot read a datatype");
    Handle space = checked_handle(H5Dget_space(dset), "cannot read a dataspace");
    return H5Sget_simple_extent_type(space.get()) == H5S_SIMPLE && H5Tdetect_class(type.get(), H5T_VLEN) <= 0 &&
           H5Tis_variable_str(type.get()) <= 0 && !SparseDataset::is_sparse(dset);
  }

  /// Writes `in` as sparse dataset `name`; `path` names it in messages, `list_name` picks its
  /// entries in the defined-elements list.
  void write(const std::string& path, const std::string& list_name, hid_t in, hid_t out_group,
             const char* name) const;

 private:
  const BoxList* list_for(const std::string& path, std::size_t rank) const;

  const Plan& plan_;
  std::ostream& out_;
};

const BoxList* SparseWriter::list_for(const std::string& path, std::size_t rank) const {
  const BoxList* found = nullptr;
  for (const DatasetLocations& l : plan_.lists)
    if (l.dataset == path || (l.dataset.empty() && !found)) found = &l.boxes;
  if (!found) return nullptr;
  if (found->size() > 0 && found->rank() != rank)
    fail(ErrorCode::invalid_argument, "the defined-elements list for " + path + " has rank " +
                                          std::to_string(found->rank()) + ", the dataset " + std::to_string(rank));
  return found;
}

void SparseWriter::write(const std::string& path, const std::string& list_name, hid_t in, hid_t out_group,
                         const char* name) const {
  if (!convertible(in))
    fail(ErrorCode::unsupported, path + " cannot become sparse (already sparse, scalar, or a variable-length type)");
  Handle type = checked_handle(H5Dget_type(in), "cannot read the datatype of " + path);
  Handle file_type = checked_handle(H5Tcopy(type.get()), "cannot copy the datatype of " + path);
  const std::size_t es = H5Tget_size(type.get());
  const std::vector<std::uint64_t> dims = dataset_dims(in), maxdims = dataset_maxdims(in);
  const std::size_t r = dims.size();
  Handle in_dcpl = checked_handle(H5Dget_create_plist(in), "cannot read the properties of " + path);

  ChunkLayout layout;
  layout.dims = plan_.chunk ? *plan_.chunk : default_chunk(in_dcpl.get(), dims, es);
  if (layout.dims.size() != r)
    fail(ErrorCode::invalid_argument, "--chunk has rank " + std::to_string(layout.dims.size()) + ", " + path +
                                          " has rank " + std::to_string(r));
  layout.element_size = es;
  layout.selection_pipeline = plan_.selection_pipeline.value_or(SectionPipeline{});
  layout.values_pipeline = plan_.values_pipeline ? *plan_.values_pipeline : pipeline_of(in_dcpl.get());

  bool fill_defined = false;
  Bytes fill = user_fill(in_dcpl.get(), type.get(), es, &fill_defined);
  if (plan_.rule == DefinedRule::not_value) {  // excluded elements must read back as that value
    fill = exclude_value(plan_.exclude_text, type.get(), path);
    fill_defined = true;
  }
  const BoxList* list = plan_.rule == DefinedRule::list ? list_for(list_name, r) : nullptr;
  if (plan_.rule == DefinedRule::list && !list)
    fail(ErrorCode::invalid_argument, "the defined-elements list names no entries for " + path);

  SparseParams params;
  params.options = plan_.fill_is_undefined ? unsigned(kOptionFillIsUndefined) : 0u;
  params.layout = layout;
  if (fill_defined && std::any_of(fill.begin(), fill.end(), [](std::uint8_t b) { return b != 0; })) params.fill = fill;
  const std::vector<unsigned> cd = to_cd_values(params);

  Handle dcpl = checked_handle(H5Pcreate(H5P_DATASET_CREATE), "cannot make a dataset creation property list");
  const std::vector<hsize_t> chunk_h(layout.dims.begin(), layout.dims.end());
  check(H5Pset_chunk(dcpl.get(), int(r), chunk_h.data()), "cannot use chunk dimensions " + dims_text(layout.dims) +
                                                               " for " + path);
  if (fill_defined) check(H5Pset_fill_value(dcpl.get(), type.get(), fill.data()), "cannot set the fill value");
  check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_INCR), "cannot set the allocation time");
  check(H5Pset_filter(dcpl.get(), H5Z_filter_t(kFilterStructuredChunk), H5Z_FLAG_MANDATORY, cd.size(), cd.data()),
        "cannot set the structured-chunk filter");
  const std::vector<hsize_t> dims_h(dims.begin(), dims.end()), max_h(maxdims.begin(), maxdims.end());
  Handle space = checked_handle(H5Screate_simple(int(r), dims_h.data(), max_h.data()), "cannot make a dataspace");
  Handle out = checked_handle(H5Dcreate2(out_group, name, file_type.get(), space.get(), H5P_DEFAULT, dcpl.get(),
                                         H5P_DEFAULT),
                              "cannot create sparse dataset " + path +
                                  " (is the structured-chunk filter plugin on HDF5_PLUGIN_PATH?)");

  // Which listed boxes touch which chunk, so each chunk looks only at its own.
  const ChunkGrid grid(dims, layout.dims);
  std::map<std::uint64_t, std::vector<std::size_t>> boxes_of_chunk;
  if (list) {
    for (std::size_t b = 0; b < list->size(); ++b) {
      for (std::size_t d = 0; d < r; ++d)
        if (list->hi(b)[d] >= dims[d])
          fail(ErrorCode::invalid_argument, "defined-elements entry " + format_coords(list->lo(b), r) + "-" +
                                                format_coords(list->hi(b), r) + " lies outside " + path + "'s extent " +
                                                dims_text(dims));
      std::vector<std::uint64_t> lo(r), hi(r), at(r);
      for (std::size_t d = 0; d < r; ++d) {
        lo[d] = list->lo(b)[d] / layout.dims[d] * layout.dims[d];
        hi[d] = list->hi(b)[d] / layout.dims[d] * layout.dims[d];
      }
      at = lo;
      for (bool more = true; more;) {
        boxes_of_chunk[grid.chunk_index(at)].push_back(b);
        more = false;
        for (std::size_t d = r; d-- > 0;) {
          if (at[d] < hi[d]) {
            at[d] += layout.dims[d];
            more = true;
            break;
          }
          at[d] = lo[d];
        }
      }
    }
  }

  Progress progress(plan_.progress, "repack " + path, grid.chunk_count());
  const std::uint64_t n = layout.element_count();
  Bytes dense(n * es);
  std::uint64_t defined = 0, stored = 0, chunks = 0, dropped = 0;
  for (std::uint64_t c = 0; c < grid.chunk_count(); ++c, progress.advance()) {
    const std::vector<std::uint64_t> origin = grid.chunk_origin(c);
    const std::vector<std::uint64_t> region = region_of(origin, layout.dims, dims);
    if (empty_region(region)) continue;
    for (std::uint64_t i = 0; i < n; ++i) std::memcpy(dense.data() + i * es, fill.data(), es);
    auto [mem_space, file_space] = chunk_spaces(in, origin, layout.dims, region);
    check(H5Dread(in, type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, dense.data()),
          "cannot read " + path + " at " + format_coords(origin.data(), r));

    StructuredChunk chunk;
    const std::vector<std::uint64_t> zero(r, 0);
    std::vector<std::uint64_t> last(region);
    for (std::uint64_t& v : last) v -= 1;
    if (plan_.rule == DefinedRule::not_fill || plan_.rule == DefinedRule::not_value) {
      chunk = from_dense(dense.data(), layout, fill.data());  // outside the extent holds the fill value
    } else {
      chunk.defined = ChunkSelection(n);
      if (plan_.rule == DefinedRule::all) {
        for_each_row(layout.dims, zero, last, [&](std::uint64_t first) { chunk.defined.set_range(first, region[r - 1]); });
      } else if (const auto touching = boxes_of_chunk.find(c); touching != boxes_of_chunk.end()) {
        for (std::size_t b : touching->second) {
          std::vector<std::uint64_t> lo(r), hi(r);
          for (std::size_t d = 0; d < r; ++d) {
            lo[d] = std::max(list->lo(b)[d], origin[d]) - origin[d];
            hi[d] = std::min(list->hi(b)[d], origin[d] + layout.dims[d] - 1) - origin[d];
          }
          for_each_row(layout.dims, lo, hi, [&](std::uint64_t first) { chunk.defined.set_range(first, hi[r - 1] - lo[r - 1] + 1); });
        }
      }
      if (plan_.rule == DefinedRule::list) {  // what the list leaves out is lost: count it
        for_each_row(layout.dims, zero, last, [&](std::uint64_t first) {
          for (std::uint64_t i = first; i < first + region[r - 1]; ++i)
            if (!chunk.defined.test(i) && std::memcmp(dense.data() + i * es, fill.data(), es) != 0) ++dropped;
        });
      }
      chunk.values.reserve(chunk.defined.defined_count() * es);
      chunk.defined.for_each_run([&](std::uint64_t first, std::uint64_t length) {
        chunk.values.insert(chunk.values.end(), dense.begin() + long(first * es), dense.begin() + long((first + length) * es));
      });
    }
    if (chunk.defined.none()) continue;
    const Bytes encoded = encode_chunk(chunk, layout);
    const std::vector<hsize_t> offset(origin.begin(), origin.end());
    check(H5Dwrite_chunk(out.get(), H5P_DEFAULT, 0, offset.data(), encoded.size(), encoded.data()),
          "cannot write chunk " + format_coords(origin.data(), r) + " of " + path);
    defined += chunk.defined.defined_count();
    stored += encoded.size();
    ++chunks;
  }
  progress.finish();
  std::uint64_t elements = 1;
  for (std::uint64_t d : dims) elements *= d;
  out_ << path << ": dense -> sparse, " << thousands(defined) << " of " << thousands(elements)
       << " elements defined, " << thousands(chunks) << " chunks, " << thousands(stored) << " bytes\n";
  if (dropped)
    std::fprintf(stderr, "h5sparse-tool: warning: %s: %s elements outside the defined-elements list differ from the "
                         "fill value and are not kept\n", path.c_str(), thousands(dropped).c_str());
}

// --- sparse -> dense -----------------------------------------------------------------------

void write_dense(const Plan& plan, const std::string& path, hid_t in, hid_t out_group, const char* name,
                 std::ostream& report) {
  const SparseDataset sparse(in, path);
  Handle type = checked_handle(H5Dget_type(in), "cannot read the datatype of " + path);
  Handle file_type = checked_handle(H5Tcopy(type.get()), "cannot copy the datatype of " + path);
  const ChunkLayout& layout = sparse.layout();
  const std::size_t r = sparse.rank();
  Handle in_dcpl = checked_handle(H5Dget_create_plist(in), "cannot read the properties of " + path);
  bool fill_defined = false;
  const Bytes fill = user_fill(in_dcpl.get(), type.get(), layout.element_size, &fill_defined);

  Handle dcpl = checked_handle(H5Pcreate(H5P_DATASET_CREATE), "cannot make a dataset creation property list");
  const std::vector<hsize_t> chunk_h(layout.dims.begin(), layout.dims.end());
  check(H5Pset_chunk(dcpl.get(), int(r), chunk_h.data()), "cannot set chunk dimensions");
  if (fill_defined) check(H5Pset_fill_value(dcpl.get(), type.get(), fill.data()), "cannot set the fill value");
  for (const SectionFilter& f : plan.values_pipeline ? *plan.values_pipeline : layout.values_pipeline)
    check(H5Pset_filter(dcpl.get(), H5Z_filter_t(f.id), f.flags, f.cd_values.size(), f.cd_values.data()),
          "cannot set filter " + std::to_string(f.id) + " on " + path);
  const std::vector<std::uint64_t> maxdims = dataset_maxdims(in);
  const std::vector<hsize_t> dims_h(sparse.dims().begin(), sparse.dims().end()), max_h(maxdims.begin(), maxdims.end());
  Handle space = checked_handle(H5Screate_simple(int(r), dims_h.data(), max_h.data()), "cannot make a dataspace");
  Handle out = checked_handle(H5Dcreate2(out_group, name, file_type.get(), space.get(), H5P_DEFAULT, dcpl.get(),
                                         H5P_DEFAULT),
                              "cannot create dense dataset " + path);

  const std::vector<StoredChunk> chunks = sparse.stored_chunks();
  Progress progress(plan.progress, "repack " + path, chunks.size());
  Bytes dense(layout.element_count() * layout.element_size);
  std::uint64_t defined = 0;
  for (const StoredChunk& chunk : chunks) {
    progress.advance();
    const std::vector<std::uint64_t> region = region_of(chunk.offset, layout.dims, sparse.dims());
    if (empty_region(region)) continue;
    const StructuredChunk decoded = sparse.decode(chunk, sparse.read_raw(chunk));
    sparse.for_each_defined_run(chunk, decoded, [&](const std::uint64_t*, std::uint64_t, std::uint64_t length,
                                                    std::uint64_t) { defined += length; });
    expand_to_dense(decoded, layout, sparse.fill().data(), dense.data());
    auto [mem_space, file_space] = chunk_spaces(out.get(), chunk.offset, layout.dims, region);
    check(H5Dwrite(out.get(), type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, dense.data()),
          "cannot write " + path + " at " + sparse.chunk_name(chunk));
  }
  progress.finish();
  report << path << ": sparse -> dense, " << thousands(defined) << " defined elements, " << thousands(chunks.size())
         << " chunks\n";
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

int run_repack(const Arguments& args, std::ostream& out) {
  Plan plan = make_plan(args);
  if (plan.rule == DefinedRule::list && plan.datasets.empty()) {  // the list says which datasets
    for (const DatasetLocations& l : plan.lists) {
      if (l.dataset.empty() && l.boxes.size() > 0)
        fail(ErrorCode::invalid_argument, "entries before any DATASET header in the defined-elements list need -d DATASET");
      if (!l.dataset.empty()) plan.datasets.push_back(l.dataset);
    }
  }
  if (args.positional.size() != 2) fail(ErrorCode::invalid_argument, "repack takes an input and an output file");
  const std::string &input = args.positional[0], &output = args.positional[1];
  if (same_file(input, output)) fail(ErrorCode::invalid_argument, "the output file must differ from the input file");
  add_own_plugin_directory();
  Handle in = open_file(input, false);
  // Datasets are matched by identity, not by path: the copy reaches an object through its
  // first link by name, which need not be the one the user named.
  std::map<std::string, std::string> named;  // object key -> the name the user gave
  for (const std::string& p : plan.datasets) {  // fail before writing anything
    Handle d = open_dataset(in.get(), p);
    if (!plan.to_sparse) SparseDataset(d.get(), p);
    named.emplace(object_key(d.get()), p);
  }
  std::map<std::string, std::string> listed;  // object key -> its DATASET header in the list
  for (const DatasetLocations& l : plan.lists) {
    if (l.dataset.empty()) continue;
    Handle d = open_dataset(in.get(), l.dataset);
    listed.emplace(object_key(d.get()), l.dataset);
  }
  SparseWriter sparse_writer(plan, out);
  const RewritePredicate wants = [&](const std::string&, hid_t dset) {
    if (!plan.datasets.empty()) return named.count(object_key(dset)) != 0;
    return plan.to_sparse ? sparse_writer.convertible(dset) : SparseDataset::is_sparse(dset);
  };
  const Rewriter rewrite = [&](const std::string& path, hid_t dset, hid_t group, const char* name) {
    const std::string key = object_key(dset);
    const auto as_named = named.find(key);
    const std::string& shown = as_named != named.end() ? as_named->second : path;
    if (!plan.to_sparse) return write_dense(plan, shown, dset, group, name, out);
    const auto as_listed = listed.find(key);
    sparse_writer.write(shown, as_listed != listed.end() ? as_listed->second : shown, dset, group, name);
  };
  // Written under a temporary name and renamed when complete: a failure leaves no half file
  // and never touches an existing output.
  const std::string partial = output + ".partial-" + std::to_string(getpid());
  try {
    {
      Handle out_file = create_file(partial);
      copy_file(in.get(), out_file.get(), wants, rewrite);
      check(H5Fclose(out_file.release()), "cannot close " + output);
    }
    if (std::rename(partial.c_str(), output.c_str()) != 0)
      fail(ErrorCode::invalid_argument, "cannot rename " + partial + " to " + output + ": " + std::strerror(errno));
  } catch (...) {
    std::remove(partial.c_str());
    throw;
  }
  return 0;
}

}  // namespace h5sparse::tool
