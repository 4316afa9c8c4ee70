// Dense -> sparse conversion of one dataset (see sparse_writer.hpp).
#include "sparse_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "chunk_region.hpp"
#include "h5sparse/chunk_grid.hpp"
#include "h5sparse/filter_ids.hpp"
#include "progress.hpp"
#include "sparse_reader.hpp"

namespace h5sparse::tool {
namespace {

constexpr std::uint64_t kDefaultChunkBytes = std::uint64_t(1) << 20;

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

}  // namespace


bool SparseWriter::convertible(hid_t dset) const {
  Handle type = checked_handle(H5Dget_type(dset), "cannot read a datatype");
  Handle space = checked_handle(H5Dget_space(dset), "cannot read a dataspace");
  return H5Sget_simple_extent_type(space.get()) == H5S_SIMPLE && H5Tdetect_class(type.get(), H5T_VLEN) <= 0 &&
         H5Tis_variable_str(type.get()) <= 0 && !SparseReader::is_sparse(dset);
}

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

namespace {

/// One dataset being converted: its type, extent, the chunk layout and fill value to use.
struct Target {
  std::string path;
  Handle type;
  std::vector<std::uint64_t> dims, maxdims;
  ChunkLayout layout;
  Bytes fill;  ///< element_size bytes: the elements not defined read back as these
  bool fill_defined = false;
};

Target make_target(const Plan& plan, const std::string& path, hid_t in) {
  Target t;
  t.path = path;
  t.type = checked_handle(H5Dget_type(in), "cannot read the datatype of " + path);
  const std::size_t es = H5Tget_size(t.type.get());
  t.dims = dataset_dims(in);
  t.maxdims = dataset_maxdims(in);
  Handle in_dcpl = checked_handle(H5Dget_create_plist(in), "cannot read the properties of " + path);
  t.layout.dims = plan.chunk ? *plan.chunk : default_chunk(in_dcpl.get(), t.dims, es);
  if (t.layout.dims.size() != t.dims.size())
    fail(ErrorCode::invalid_argument, "--chunk has rank " + std::to_string(t.layout.dims.size()) + ", " + path +
                                          " has rank " + std::to_string(t.dims.size()));
  t.layout.element_size = es;
  t.layout.selection_pipeline = plan.selection_pipeline.value_or(SectionPipeline{});
  t.layout.values_pipeline = plan.values_pipeline ? *plan.values_pipeline : pipeline_of(in_dcpl.get());
  t.fill = user_fill(in_dcpl.get(), t.type.get(), es, &t.fill_defined);
  if (plan.rule == DefinedRule::not_value) {  // excluded elements must read back as that value
    t.fill = exclude_value(plan.exclude_text, t.type.get(), path);
    t.fill_defined = true;
  }
  return t;
}

/// The carrier dataset: chunked, the structured-chunk filter with complete parameters,
/// incremental allocation (only written chunks exist).
Handle create_sparse(const Target& t, unsigned options, hid_t out_group, const char* name) {
  SparseParams params;
  params.options = options;
  params.layout = t.layout;
  if (t.fill_defined && std::any_of(t.fill.begin(), t.fill.end(), [](std::uint8_t b) { return b != 0; }))
    params.fill = t.fill;
  const std::vector<unsigned> cd = to_cd_values(params);
  const int r = int(t.dims.size());
  Handle dcpl = checked_handle(H5Pcreate(H5P_DATASET_CREATE), "cannot make a dataset creation property list");
  const std::vector<hsize_t> chunk(t.layout.dims.begin(), t.layout.dims.end());
  check(H5Pset_chunk(dcpl.get(), r, chunk.data()),
        "cannot use chunk dimensions " + dims_text(t.layout.dims) + " for " + t.path);
  if (t.fill_defined) check(H5Pset_fill_value(dcpl.get(), t.type.get(), t.fill.data()), "cannot set the fill value");
  check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_INCR), "cannot set the allocation time");
  check(H5Pset_filter(dcpl.get(), H5Z_filter_t(kFilterStructuredChunk), H5Z_FLAG_MANDATORY, cd.size(), cd.data()),
        "cannot set the structured-chunk filter");
  const std::vector<hsize_t> dims(t.dims.begin(), t.dims.end()), maxdims(t.maxdims.begin(), t.maxdims.end());
  Handle space = checked_handle(H5Screate_simple(r, dims.data(), maxdims.data()), "cannot make a dataspace");
  Handle file_type = checked_handle(H5Tcopy(t.type.get()), "cannot copy the datatype of " + t.path);
  return checked_handle(H5Dcreate2(out_group, name, file_type.get(), space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                        "cannot create sparse dataset " + t.path +
                            " (is the structured-chunk filter plugin on HDF5_PLUGIN_PATH?)");
}

/// The listed boxes by chunk, so each chunk looks only at the boxes that touch it.
class ListIndex {
 public:
  ListIndex(const BoxList* list, const Target& t, const ChunkGrid& grid) : list_(list), t_(t) {
    if (!list) return;
    const std::size_t r = t.dims.size();
    for (std::size_t b = 0; b < list->size(); ++b) {
      std::vector<std::uint64_t> lo(r), hi(r);
      for (std::size_t d = 0; d < r; ++d) {
        if (list->hi(b)[d] >= t.dims[d])
          fail(ErrorCode::invalid_argument, "defined-elements entry " + format_coords(list->lo(b), r) + "-" +
                                                format_coords(list->hi(b), r) + " lies outside " + t.path +
                                                "'s extent " + dims_text(t.dims));
        lo[d] = list->lo(b)[d] / t.layout.dims[d] * t.layout.dims[d];
        hi[d] = list->hi(b)[d] / t.layout.dims[d] * t.layout.dims[d];
      }
      std::vector<std::uint64_t> at = lo;
      for (bool more = true; more;) {  // every chunk origin from lo to hi
        by_chunk_[grid.chunk_index(at)].push_back(b);
        more = false;
        for (std::size_t d = r; d-- > 0;) {
          if (at[d] < hi[d]) {
            at[d] += t.layout.dims[d];
            more = true;
            break;
          }
          at[d] = lo[d];
        }
      }
    }
  }

  /// Marks the listed elements of chunk `c` (at `origin`) in `defined`.
  void mark(std::uint64_t c, const std::vector<std::uint64_t>& origin, ChunkSelection& defined) const {
    const auto touching = by_chunk_.find(c);
    if (touching == by_chunk_.end()) return;
    const std::size_t r = origin.size();
    const std::vector<std::uint64_t>& cd = t_.layout.dims;
    for (std::size_t b : touching->second) {
      std::vector<std::uint64_t> lo(r), hi(r);
      for (std::size_t d = 0; d < r; ++d) {
        lo[d] = std::max(list_->lo(b)[d], origin[d]) - origin[d];
        hi[d] = std::min(list_->hi(b)[d], origin[d] + cd[d] - 1) - origin[d];
      }
      for_each_row(cd, lo, hi, [&](std::uint64_t first) { defined.set_range(first, hi[r - 1] - lo[r - 1] + 1); });
    }
  }

 private:
  const BoxList* list_;
  const Target& t_;
  std::map<std::uint64_t, std::vector<std::size_t>> by_chunk_;
};

/// The structured chunk the rule makes of one dense chunk (elements outside the extent hold
/// the fill value). Counts in *dropped the non-fill elements a list leaves out.
StructuredChunk select(DefinedRule rule, const Bytes& dense, const Target& t, const ListIndex& list, std::uint64_t c,
                       const std::vector<std::uint64_t>& origin, const std::vector<std::uint64_t>& region,
                       std::uint64_t* dropped) {
  if (rule == DefinedRule::not_fill || rule == DefinedRule::not_value)
    return from_dense(dense.data(), t.layout, t.fill.data());
  const std::size_t r = region.size(), es = t.layout.element_size;
  const std::vector<std::uint64_t> zero(r, 0);
  std::vector<std::uint64_t> last(region);
  for (std::uint64_t& v : last) v -= 1;
  StructuredChunk chunk{ChunkSelection(t.layout.element_count()), {}};
  if (rule == DefinedRule::all)
    for_each_row(t.layout.dims, zero, last, [&](std::uint64_t first) { chunk.defined.set_range(first, region[r - 1]); });
  else
    list.mark(c, origin, chunk.defined);
  if (rule == DefinedRule::list) {
    for_each_row(t.layout.dims, zero, last, [&](std::uint64_t first) {
      for (std::uint64_t i = first; i < first + region[r - 1]; ++i)
        if (!chunk.defined.test(i) && std::memcmp(dense.data() + i * es, t.fill.data(), es) != 0) ++*dropped;
    });
  }
  chunk.values.reserve(chunk.defined.defined_count() * es);
  chunk.defined.for_each_run([&](std::uint64_t first, std::uint64_t length) {
    chunk.values.insert(chunk.values.end(), dense.begin() + long(first * es), dense.begin() + long((first + length) * es));
  });
  return chunk;
}

}  // namespace

void SparseWriter::write(const std::string& path, const std::string& list_name, hid_t in, hid_t out_group,
                         const char* name) const {
  if (!convertible(in))
    fail(ErrorCode::unsupported, path + " cannot become sparse (already sparse, scalar, or a variable-length type)");
  const Target t = make_target(plan_, path, in);
  const std::size_t r = t.dims.size(), es = t.layout.element_size;
  const BoxList* list = plan_.rule == DefinedRule::list ? list_for(list_name, r) : nullptr;
  if (plan_.rule == DefinedRule::list && !list)
    fail(ErrorCode::invalid_argument, "the defined-elements list names no entries for " + path);
  Handle out = create_sparse(t, plan_.fill_is_undefined ? unsigned(kOptionFillIsUndefined) : 0u, out_group, name);
  const ChunkGrid grid(t.dims, t.layout.dims);
  const ListIndex index(list, t, grid);

  Progress progress(plan_.progress, "repack " + path, grid.chunk_count());
  const std::uint64_t n = t.layout.element_count();
  Bytes dense(n * es);
  std::uint64_t defined = 0, stored = 0, chunks = 0, dropped = 0;
  for (std::uint64_t c = 0; c < grid.chunk_count(); ++c, progress.advance()) {
    const std::vector<std::uint64_t> origin = grid.chunk_origin(c);
    const std::vector<std::uint64_t> region = region_of(origin, t.layout.dims, t.dims);
    if (empty_region(region)) continue;
    for (std::uint64_t i = 0; i < n; ++i) std::memcpy(dense.data() + i * es, t.fill.data(), es);
    auto [mem_space, file_space] = chunk_spaces(in, origin, t.layout.dims, region);
    check(H5Dread(in, t.type.get(), mem_space.get(), file_space.get(), H5P_DEFAULT, dense.data()),
          "cannot read " + path + " at " + format_coords(origin.data(), r));
    const StructuredChunk chunk = select(plan_.rule, dense, t, index, c, origin, region, &dropped);
    if (chunk.defined.none()) continue;
    const Bytes encoded = encode_chunk(chunk, t.layout);
    const std::vector<hsize_t> offset(origin.begin(), origin.end());
    check(H5Dwrite_chunk(out.get(), H5P_DEFAULT, 0, offset.data(), encoded.size(), encoded.data()),
          "cannot write chunk " + format_coords(origin.data(), r) + " of " + path);
    defined += chunk.defined.defined_count();
    stored += encoded.size();
    ++chunks;
  }
  progress.finish();
  std::uint64_t elements = 1;
  for (std::uint64_t d : t.dims) elements *= d;
  out_ << path << ": dense -> sparse, " << thousands(defined) << " of " << thousands(elements)
       << " elements defined, " << thousands(chunks) << " chunks, " << thousands(stored) << " bytes\n";
  if (dropped)
    std::fprintf(stderr, "h5sparse-tool: warning: %s: %s elements outside the defined-elements list differ from the "
                         "fill value and are not kept\n", path.c_str(), thousands(dropped).c_str());
}

}  // namespace h5sparse::tool
