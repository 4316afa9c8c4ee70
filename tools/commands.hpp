// The tool's subcommands. Each takes the parsed command line and writes its report to `out`;
// failures are thrown as h5sparse::Error and reported by main() on the HDF5 error stack.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace h5sparse::tool {

/// A parsed command line: positional arguments, repeatable options and flags.
struct Arguments {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>> options;  ///< "--name value" (or -d value)

  bool has(const std::string& name) const { return options.count(name) != 0; }
  /// The option's last value, or `fallback` when absent.
  std::string value(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> values(const std::string& name) const;
  /// For Progress: "on" (--progress), "off" (--no-progress) or "auto".
  std::string progress_mode() const { return has("no-progress") ? "off" : has("progress") ? "on" : "auto"; }
};

/// show: layout, sections, sizes, pipelines and compression ratios, per dataset (and per chunk).
int run_show(const Arguments& args, std::ostream& out);
/// stat: h5stat-style counts of dataset layouts (sparse counted apart) and filters.
int run_stat(const Arguments& args, std::ostream& out);
/// dump: defined locations (--sparse-locations) or locations with values (--sparse-data).
int run_dump(const Arguments& args, std::ostream& out);
/// repack: dense -> sparse or sparse -> dense copy of a file.
int run_repack(const Arguments& args, std::ostream& out);

}  // namespace h5sparse::tool
