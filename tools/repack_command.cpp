// `repack`: copies a file, turning dense datasets into sparse ones (--to sparse, see
// sparse_writer.hpp) or sparse ones into dense chunked ones (--to dense, here). Everything else
// is copied unchanged (file_copy.hpp).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "chunk_region.hpp"
#include "commands.hpp"
#include "file_copy.hpp"
#include "progress.hpp"
#include "repack_plan.hpp"
#include "sparse_reader.hpp"
#include "sparse_writer.hpp"
#include "tool_support.hpp"

namespace h5sparse::tool {
namespace {

void write_dense(const Plan& plan, const std::string& path, hid_t in, hid_t out_group, const char* name,
                 std::ostream& report) {
  const SparseReader sparse(in, path);
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

  const std::vector<ChunkEntry> chunks = sparse.stored_chunks();
  Progress progress(plan.progress, "repack " + path, chunks.size());
  Bytes dense(layout.element_count() * layout.element_size);
  std::uint64_t defined = 0;
  for (const ChunkEntry& chunk : chunks) {
    progress.advance();
    const std::vector<std::uint64_t> region = region_of(chunk.origin, layout.dims, sparse.dims());
    if (empty_region(region)) continue;
    const StructuredChunk decoded = sparse.decode(chunk, sparse.read_raw(chunk));
    sparse.for_each_defined_run(chunk, decoded.defined, [&](const std::uint64_t*, std::uint64_t, std::uint64_t length,
                                                    std::uint64_t) { defined += length; });
    expand_to_dense(decoded, layout, sparse.fill().data(), dense.data());
    auto [mem_space, file_space] = chunk_spaces(out.get(), chunk.origin, layout.dims, region);
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
    if (!plan.to_sparse) SparseReader(d.get(), p);
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
    return plan.to_sparse ? sparse_writer.convertible(dset) : SparseReader::is_sparse(dset);
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
