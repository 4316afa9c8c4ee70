// Parsing `repack`'s options into a Plan (see repack_plan.hpp).
#include "repack_plan.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "h5sparse/compression_options.hpp"
#include "tool_support.hpp"

namespace h5sparse::tool {
namespace {

std::vector<std::uint64_t> parse_dims(const std::string& text) {
  const std::string complaint = "--chunk wants positive dimensions like 64x64, got \"" + text + "\"";
  std::vector<std::uint64_t> dims = parse_numbers(text, "x,", complaint);
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) fail(ErrorCode::invalid_argument, complaint);
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

}  // namespace

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

}  // namespace h5sparse::tool
