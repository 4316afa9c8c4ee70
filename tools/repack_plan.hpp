// What `repack` was asked to do, parsed from the command line: direction, datasets, which
// elements become defined, chunk dimensions and section pipelines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "h5sparse/section_pipeline.hpp"
#include "locations_text.hpp"

namespace h5sparse::tool {

/// Which elements of a dense dataset become defined.
enum class DefinedRule {
  not_fill,   ///< those differing from the fill value, byte for byte (default)
  not_value,  ///< those differing from --exclude VALUE (which becomes the fill value)
  list,       ///< those in the --defined list
  all,        ///< every element
};

struct Plan {
  bool to_sparse = true;
  std::vector<std::string> datasets;  ///< empty: the list's datasets, else every convertible one
  DefinedRule rule = DefinedRule::not_fill;
  std::string exclude_text;
  std::vector<DatasetLocations> lists;
  std::optional<std::vector<std::uint64_t>> chunk;
  std::optional<SectionPipeline> selection_pipeline, values_pipeline;
  bool fill_is_undefined = false;
  std::string progress = "auto";
};

/// Validates the options (conflicts, values, the list file) and reads the list.
Plan make_plan(const Arguments& args);

}  // namespace h5sparse::tool
