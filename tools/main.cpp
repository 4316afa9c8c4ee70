// h5sparse-tool: command-line access to sparse (structured-chunk) datasets after the Lifeboat
// Tools RFC. This file only parses the command line, dispatches, and reports failures: each
// failure becomes one record of the h5sparse HDF5 error class on top of whatever HDF5 pushed,
// printed as HDF5 prints its stacks, and a non-zero exit status.
#include <hdf5.h>

#include <cstring>
#include <iostream>
#include <set>

#include "commands.hpp"
#include "h5sparse/cpu_features.hpp"
#include "error_stack.hpp"
#include "tool_support.hpp"

namespace h5sparse::tool {
namespace {

const char kUsage[] = R"(Usage: h5sparse-tool COMMAND [OPTIONS] FILE...

Sparse (structured-chunk) datasets, read without the VOL connector.

Commands:
  show FILE [-d DATASET]... [--chunks]
      layout, sections, sizes, filter pipelines and compression ratios of sparse
      datasets (all of them unless -d names some); --chunks adds one line per stored chunk
  stat FILE
      h5stat-style counts of dataset layouts (sparse ones apart) and filters
  dump FILE [-d DATASET]... [--sparse-locations | --sparse-data] [-s START] [-c COUNT]
      defined elements as h5dump BLOCK/POINT regions; --sparse-data adds their values;
      -s/--start and -c/--count (comma-separated, as h5dump's) limit it to a box
  repack --to sparse INPUT OUTPUT [-d DATASET]... [--defined LIST | --exclude VALUE | --all]
         [--chunk DIMS] [--selection-filter SPEC] [--values-filter SPEC] [--fill-is-undefined]
      copy INPUT to OUTPUT with dense datasets (all convertible ones unless -d names some)
      made sparse. Defined elements: those differing from the fill value (default), those
      in LIST (the output of `dump`, whose DATASET headers say which datasets to convert,
      or BLOCK/POINT lines for the -d datasets), those differing from VALUE
      (which becomes the fill value), or all. DIMS like 64x64 (default: the input's chunks,
      else up to 1 MiB). SPEC: none, or complib=blosc:zstd,complevel=5,shuffle=bit
      (complib blosc:blosclz|lz4|lz4hc|zlib|zstd, lzf, gzip); the values section defaults
      to the input's filters when the core can run them.
  repack --to dense INPUT OUTPUT [-d DATASET]... [--values-filter SPEC]
      copy INPUT to OUTPUT with sparse datasets made dense (chunked like the sparse
      dataset, filtered like its values section unless --values-filter says otherwise)

Options of every command:
  --progress / --no-progress   progress on stderr (default: only when stderr is a terminal)
  --help, --version
Errors are reported on the HDF5 error stack (class "h5sparse"); exit status 1, 2 for usage.
)";

struct OptionSpec {
  const char* name;
  bool takes_value;
};

const OptionSpec kOptions[] = {
    {"dataset", true}, {"to", true}, {"defined", true}, {"exclude", true}, {"chunk", true},
    {"selection-filter", true}, {"values-filter", true}, {"chunks", false}, {"sparse-locations", false},
    {"sparse-data", false}, {"start", true}, {"count", true}, {"all", false}, {"fill-is-undefined", false}, {"progress", false}, {"no-progress", false},
};

const std::set<std::string>& allowed(const std::string& command) {
  static const std::map<std::string, std::set<std::string>> kAllowed = {
      {"show", {"dataset", "chunks", "progress", "no-progress"}},
      {"stat", {"progress", "no-progress"}},
      {"dump", {"dataset", "sparse-locations", "sparse-data", "start", "count", "progress", "no-progress"}},
      {"repack", {"dataset", "to", "defined", "exclude", "chunk", "selection-filter", "values-filter", "all",
                  "fill-is-undefined", "progress", "no-progress"}},
  };
  const auto found = kAllowed.find(command);
  if (found == kAllowed.end()) fail(ErrorCode::invalid_argument, "unknown command \"" + command + "\"");
  return found->second;
}

Arguments parse(const std::string& command, int argc, char** argv) {
  const std::set<std::string>& ok = allowed(command);
  Arguments args;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      for (++i; i < argc; ++i) args.positional.push_back(argv[i]);
      break;
    }
    if (a.size() < 2 || a[0] != '-') {
      args.positional.push_back(a);
      continue;
    }
    std::string name, value;
    bool has_value = false;
    if (a == "-d" || a == "-s" || a == "-c") {
      name = a == "-d" ? "dataset" : a == "-s" ? "start" : "count";
    } else if (a.rfind("--", 0) == 0) {
      name = a.substr(2);
      if (const std::size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name.resize(eq);
        has_value = true;
      }
    } else {
      fail(ErrorCode::invalid_argument, "unknown option " + a + " (see h5sparse-tool --help)");
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : kOptions)
      if (name == s.name) spec = &s;
    if (!spec || !ok.count(name))
      fail(ErrorCode::invalid_argument, "option " + a + " does not apply to " + command + " (see h5sparse-tool --help)");
    if (spec->takes_value && !has_value) {
      if (i + 1 >= argc) fail(ErrorCode::invalid_argument, "option " + a + " needs a value");
      value = argv[++i];
    } else if (!spec->takes_value && has_value) {
      fail(ErrorCode::invalid_argument, "option --" + name + " takes no value");
    }
    args.options[name].push_back(value);
  }
  return args;
}

int report_failure(const std::string& command, const Error& e, int status) {
  // Keep HDF5's own records (the cause) under ours (what the tool was doing).
  const hid_t cause = H5Eget_current_stack();
  hdf5::push_error(hdf5::Origin::tool, e.code(), command.c_str(), e.what());
  if (cause >= 0) {
    const hid_t ours = H5Eget_current_stack();
    if (ours >= 0) H5Eappend_stack(cause, ours, true);
    H5Eset_current_stack(cause);
  }
  std::cerr << "h5sparse-tool: error: " << e.what() << "\n";
  H5Eprint2(H5E_DEFAULT, stderr);
  return status;
}

}  // namespace

std::string Arguments::value(const std::string& name, const std::string& fallback) const {
  const auto found = options.find(name);
  return found == options.end() || found->second.empty() ? fallback : found->second.back();
}

std::vector<std::string> Arguments::values(const std::string& name) const {
  const auto found = options.find(name);
  return found == options.end() ? std::vector<std::string>{} : found->second;
}

int main(int argc, char** argv) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are printed once, by report_failure
  const std::string command = argc > 1 ? argv[1] : "";
  if (command.empty() || command == "--help" || command == "-h" || command == "help") {
    (command.empty() ? std::cerr : std::cout) << kUsage;
    return command.empty() ? 2 : 0;
  }
  if (command == "--version") {
    // The kernels, for reports of speed: which extensions this CPU lets the library use.
    std::cout << "h5sparse-tool " << H5SPARSE_VERSION_STRING << "\nkernels: " << cpu_kernels_text() << "\n";
    return 0;
  }
  Arguments args;
  try {
    args = parse(command, argc, argv);
  } catch (const Error& e) {
    return report_failure(command, e, 2);
  }
  try {
    std::ios::sync_with_stdio(false);
    if (command == "show") return run_show(args, std::cout);
    if (command == "stat") return run_stat(args, std::cout);
    if (command == "dump") return run_dump(args, std::cout);
    return run_repack(args, std::cout);
  } catch (const Error& e) {
    std::cout.flush();
    return report_failure(command, e, e.code() == ErrorCode::invalid_argument && args.positional.empty() ? 2 : 1);
  } catch (const std::bad_alloc&) {
    return report_failure(command, Error(ErrorCode::out_of_memory, "out of memory"), 1);
  } catch (const std::exception& e) {
    return report_failure(command, Error(ErrorCode::internal_error, e.what()), 1);
  }
}

}  // namespace h5sparse::tool

#if H5SPARSE_HDF5_AT_RUN_TIME
// The wheel has no program of its own: its h5sparse-tool entry point runs this inside
// libh5sparse, bound to h5py's HDF5 (python/h5sparse/_tool.py).
extern "C" __attribute__((visibility("default"))) int h5sparse_tool_main(int argc, char** argv) {
  const int status = h5sparse::tool::main(argc, argv);
  std::cout.flush();
  return status;
}
#else
int main(int argc, char** argv) { return h5sparse::tool::main(argc, argv); }
#endif
