// `show`: a sparse dataset's storage as h5dump -p prints a chunked one, in the Tools RFC's DDL
// (STRUCTURED_CHUNK, SECTION n <name>, SIZE with compression ratio, FILTERS), plus defined and
// stored-chunk counts and, with --chunks, one line per stored chunk.
#include <cinttypes>
#include <cstdio>
#include <numeric>

#include "commands.hpp"
#include "progress.hpp"
#include "h5sparse/filter_ids.hpp"
#include "sparse_reader.hpp"
#include "tool_support.hpp"
#include "value_format.hpp"

namespace h5sparse::tool {
namespace {

std::string ratio_text(std::uint64_t logical, std::uint64_t stored) {
  if (stored == 0) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, " (%.3f:1 COMPRESSION)", double(logical) / double(stored));
  return buf;
}

void print_filters(std::ostream& out, const SectionPipeline& pipeline, const std::string& indent) {
  out << indent << "FILTERS {\n";
  if (pipeline.empty()) out << indent << "   NONE\n";
  for (const SectionFilter& f : pipeline) {
    if (f.id == kFilterDeflate) {
      out << indent << "   COMPRESSION DEFLATE { LEVEL " << (f.cd_values.empty() ? 6u : f.cd_values[0]) << " }\n";
    } else if (f.id == kFilterShuffle) {
      out << indent << "   PREPROCESSING SHUFFLE\n";
    } else {
      out << indent << "   USER_DEFINED_FILTER {\n" << indent << "      FILTER_ID " << f.id << "\n"
          << indent << "      COMMENT " << describe_pipeline({f}) << "\n";
      if (!f.cd_values.empty()) {
        out << indent << "      PARAMS {";
        for (unsigned v : f.cd_values) out << ' ' << v;
        out << " }\n";
      }
      out << indent << "   }\n";
    }
  }
  out << indent << "}\n";
}

const char* encoding_name(SelectionEncoding e) {
  switch (e) {
    case SelectionEncoding::empty: return "empty";
    case SelectionEncoding::all: return "all";
    case SelectionEncoding::bitmap: return "bitmap";
    case SelectionEncoding::offsets: return "offsets";
    case SelectionEncoding::runs: return "runs";
    case SelectionEncoding::blocks: return "blocks";
    case SelectionEncoding::rice_offsets: return "rice_offsets";
    case SelectionEncoding::elias_fano: return "elias_fano";
  }
  return "unknown";
}

constexpr std::size_t kMaxSections = 4;

struct Totals {
  std::uint64_t stored = 0, defined = 0, chunks = 0;
  std::uint64_t section_stored[kMaxSections] = {}, section_unfiltered[kMaxSections] = {};
};

// "CHUNK (0,4) { ADDRESS a SIZE z DEFINED n SECTION 0 { ENCODING e SIZE s OF u MASK 0x.. } SECTION 1 { ... } }":
// the stored size, unfiltered size and filter mask of each section.
std::string chunk_line(const SparseReader& sparse, const ChunkEntry& chunk, const ChunkAnatomy& a) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "ADDRESS %" PRIu64 " SIZE %" PRIu64 " DEFINED %" PRIu64, std::uint64_t(chunk.address),
                chunk.size, a.defined_in_extent);
  std::string line = "CHUNK " + sparse.chunk_name(chunk) + " { " + buf;
  for (std::size_t s = 0; s < a.sections.size(); ++s) {
    const SectionInfo& info = a.sections[s];
    line += " SECTION " + std::to_string(s) + " { ";
    if (s == 0) line += std::string("ENCODING ") + encoding_name(a.encoding) + " ";
    std::snprintf(buf, sizeof buf, "SIZE %u OF %u MASK 0x%x }", info.stored_size, info.unfiltered_size,
                  info.filter_mask);
    line += buf;
  }
  return line + (chunk.filter_mask & 1 ? " UNFILTERED_DENSE }" : " }");
}

void show_dataset(hid_t file, const std::string& path, const Arguments& args, std::ostream& out) {
  const bool per_chunk = args.has("chunks");
  Handle dset = open_dataset(file, path);
  SparseReader sparse(dset.get(), path);
  Handle type = sparse.true_type();
  const ChunkLayout& layout = sparse.layout();
  const std::size_t sections = sparse.is_var() ? 4 : 2;
  Totals t;
  std::vector<std::string> chunk_lines;
  const std::vector<ChunkEntry> stored = sparse.stored_chunks();
  Progress progress(args.progress_mode(), "show " + path, stored.size());
  for (const ChunkEntry& chunk : stored) {
    progress.advance();
    const StoredChunk raw = sparse.read_raw(chunk);
    const ChunkAnatomy a = sparse.anatomy(chunk, raw, sparse.defined(chunk, raw));
    t.stored += chunk.size;
    t.defined += a.defined_in_extent;
    ++t.chunks;
    for (std::size_t s = 0; s < sections; ++s) {
      t.section_stored[s] += a.sections[s].stored_size;
      t.section_unfiltered[s] += a.sections[s].unfiltered_size;
    }
    if (per_chunk) chunk_lines.push_back(chunk_line(sparse, chunk, a));
  }
  std::uint64_t elements = 1;
  for (std::uint64_t d : sparse.dims()) elements *= d;
  std::uint64_t grid = 1;
  for (std::size_t d = 0; d < sparse.rank(); ++d) grid *= (sparse.dims()[d] + layout.dims[d] - 1) / layout.dims[d];
  // A variable-length dataset has no dense size: its ratio is the sections' unfiltered bytes to the stored.
  std::uint64_t logical = elements * layout.element_size;
  if (sparse.is_var())
    logical = std::accumulate(t.section_unfiltered, t.section_unfiltered + sections, std::uint64_t(0));

  static const char* const kSectionNames[kMaxSections] = {"SPARSE_SELECTION", "SPARSE_FIXED_DATA", "SPARSE_VL_LENGTHS",
                                                          "SPARSE_VL_DATA"};
  const SectionPipeline* pipelines[kMaxSections] = {&layout.selection_pipeline, &layout.values_pipeline,
                                                    &layout.lengths_pipeline, &layout.data_pipeline};
  out << "DATASET " << quoted(path) << " {\n";
  out << "   DATATYPE  " << type_text(type.get()) << "\n";
  out << "   DATASPACE  " << dataspace_text(dset.get()) << "\n";
  out << "   STORAGE_LAYOUT {\n";
  out << "      STRUCTURED_CHUNK " << dims_text(layout.dims) << " {\n";
  out << "         SPARSE_CHUNK\n";
  for (std::size_t s = 0; s < sections; ++s) {
    out << "         SECTION " << s << ' ' << kSectionNames[s] << " {\n";
    out << "            SIZE " << t.section_stored[s] << ratio_text(t.section_unfiltered[s], t.section_stored[s])
        << "\n";
    print_filters(out, *pipelines[s], "            ");
    out << "         }\n";
  }
  out << "      }\n";
  out << "      SIZE " << t.stored << ratio_text(logical, t.stored) << "\n";
  out << "   }\n";
  // Undefined elements of a variable-length dataset read as NULL.
  const std::string fill = sparse.is_var() ? "NULL" : ValueFormatter(type.get()).format(sparse.fill().data());
  out << "   FILLVALUE {\n      VALUE  " << fill << "\n   }\n";
  out << "   FILL_IS_UNDEFINED " << (sparse.params().fill_is_undefined() ? "TRUE" : "FALSE") << "\n";
  char share[32];
  std::snprintf(share, sizeof share, "%.2f%%", elements ? 100.0 * double(t.defined) / double(elements) : 0.0);
  out << "   DEFINED_ELEMENTS " << t.defined << " OF " << elements << " (" << share << ")\n";
  out << "   STORED_CHUNKS " << t.chunks << " OF " << grid << "\n";
  for (const std::string& line : chunk_lines) out << "   " << line << "\n";
  out << "}\n";
}

}  // namespace

int run_show(const Arguments& args, std::ostream& out) {
  if (args.positional.size() != 1) fail(ErrorCode::invalid_argument, "show takes one file");
  const std::string& name = args.positional[0];
  Handle file = open_file(name, false);
  std::vector<std::string> paths = args.values("dataset");
  if (paths.empty()) paths = sparse_dataset_paths(file.get());
  out << "HDF5 " << quoted(name) << " {\n";
  for (const std::string& p : paths) show_dataset(file.get(), p, args, out);
  out << "}\n";
  return 0;
}

}  // namespace h5sparse::tool
