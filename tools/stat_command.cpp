// `stat`: h5stat's "Dataset layout information" and "Dataset filters information" with sparse
// datasets counted as the Tools RFC asks: a layout of their own (STRUCTURED CHUNK SPARSE), and
// the filters of both section pipelines, each filter counted once per dataset; the
// structured-chunk filter itself is the layout, not a filter.
#include <set>

#include "commands.hpp"
#include "progress.hpp"
#include "sparse_reader.hpp"
#include "tool_support.hpp"

namespace h5sparse::tool {

int run_stat(const Arguments& args, std::ostream& out) {
  if (args.positional.size() != 1) fail(ErrorCode::invalid_argument, "stat takes one file");
  const std::string& name = args.positional[0];
  Handle file = open_file(name, false);
  std::uint64_t compact = 0, contig = 0, chunked = 0, sparse = 0, virt = 0, external = 0;
  std::uint64_t none = 0, gzip = 0, shuffle = 0, fletcher = 0, szip = 0, nbit = 0, scaleoffset = 0, user = 0;
  std::uint64_t defined = 0, stored = 0, elements = 0;
  for (const std::string& path : list_datasets(file.get())) {
    Handle dset = open_dataset(file.get(), path);
    Handle dcpl = checked_handle(H5Dget_create_plist(dset.get()), "cannot read the properties of " + path);
    if (H5Pget_external_count(dcpl.get()) > 0) external += unsigned(H5Pget_external_count(dcpl.get()));
    std::set<int> filters;
    if (SparseReader::is_sparse(dset.get())) {
      ++sparse;
      const SparseReader d(dset.get(), path);
      for (const SectionPipeline* p : {&d.layout().selection_pipeline, &d.layout().values_pipeline,
                                       &d.layout().lengths_pipeline, &d.layout().data_pipeline})
        for (const SectionFilter& f : *p) filters.insert(f.id);
      std::uint64_t n = 1;
      for (std::uint64_t v : d.dims()) n *= v;
      elements += n;
      const std::vector<ChunkEntry> chunks = d.stored_chunks();
      Progress progress(args.progress_mode(), "stat " + path, chunks.size());
      for (const ChunkEntry& chunk : chunks) {
        progress.advance();
        stored += chunk.size;
        d.for_each_defined_run(chunk, d.defined(chunk, d.read_raw(chunk)),
                               [&](const std::uint64_t*, std::uint64_t, std::uint64_t len, std::uint64_t) { defined += len; });
      }
    } else {
      switch (H5Pget_layout(dcpl.get())) {
        case H5D_COMPACT: ++compact; break;
        case H5D_CONTIGUOUS: ++contig; break;
        case H5D_CHUNKED: ++chunked; break;
        case H5D_VIRTUAL: ++virt; break;
        default: break;
      }
      const int n = H5Pget_nfilters(dcpl.get());
      for (int i = 0; i < n; ++i) {
        unsigned flags = 0;
        std::size_t ncd = 0;
        filters.insert(int(H5Pget_filter2(dcpl.get(), unsigned(i), &flags, &ncd, nullptr, 0, nullptr, nullptr)));
      }
    }
    if (filters.empty()) ++none;
    for (int id : filters) {
      switch (id) {
        case H5Z_FILTER_DEFLATE: ++gzip; break;
        case H5Z_FILTER_SHUFFLE: ++shuffle; break;
        case H5Z_FILTER_FLETCHER32: ++fletcher; break;
        case H5Z_FILTER_SZIP: ++szip; break;
        case H5Z_FILTER_NBIT: ++nbit; break;
        case H5Z_FILTER_SCALEOFFSET: ++scaleoffset; break;
        default: ++user;
      }
    }
  }
  out << "Filename: " << name << "\n"
      << "Dataset layout information:\n"
      << "\tDataset layout counts[COMPACT]: " << compact << "\n"
      << "\tDataset layout counts[CONTIG]: " << contig << "\n"
      << "\tDataset layout counts[CHUNKED]: " << chunked << "\n"
      << "\tDataset layout counts[STRUCTURED CHUNK SPARSE]: " << sparse << "\n"
      << "\tDataset layout counts[VIRTUAL]: " << virt << "\n"
      << "\tNumber of external files : " << external << "\n"
      << "Dataset filters information:\n"
      << "\tNumber of datasets with:\n"
      << "\t\tNO filter: " << none << "\n"
      << "\t\tGZIP filter: " << gzip << "\n"
      << "\t\tSHUFFLE filter: " << shuffle << "\n"
      << "\t\tFLETCHER32 filter: " << fletcher << "\n"
      << "\t\tSZIP filter: " << szip << "\n"
      << "\t\tNBIT filter: " << nbit << "\n"
      << "\t\tSCALEOFFSET filter: " << scaleoffset << "\n"
      << "\t\tUSER-DEFINED filter: " << user << "\n"
      << "Sparse dataset information:\n"
      << "\tDefined elements: " << defined << " of " << elements << "\n"
      << "\tStored bytes: " << stored << "\n";
  return 0;
}

}  // namespace h5sparse::tool
