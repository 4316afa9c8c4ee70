// Validation of Hangar's compression vocabulary and its mapping onto HDF5 filters.
#include "h5sparse/compression_options.hpp"

#include <cctype>

#include "h5sparse/error.hpp"

namespace h5sparse {
namespace {

struct ComplibEntry {
  const char* name;
  Complib complib;
};
constexpr ComplibEntry kComplibs[] = {
    {"blosc:blosclz", Complib::blosc_blosclz}, {"blosc:lz4", Complib::blosc_lz4},
    {"blosc:lz4hc", Complib::blosc_lz4hc},     {"blosc:zlib", Complib::blosc_zlib},
    {"blosc:zstd", Complib::blosc_zstd},       {"lzf", Complib::lzf},
    {"gzip", Complib::gzip},
};

const char kValidComplibs[] =
    "valid complib values: 'blosc:blosclz', 'blosc:lz4', 'blosc:lz4hc', 'blosc:zlib', "
    "'blosc:zstd', 'lzf', 'gzip'";

bool is_blosc(Complib c) { return c != Complib::lzf && c != Complib::gzip; }

BloscCompressor blosc_compressor_of(Complib c) {
  switch (c) {
    case Complib::blosc_blosclz: return BloscCompressor::blosclz;
    case Complib::blosc_lz4: return BloscCompressor::lz4;
    case Complib::blosc_lz4hc: return BloscCompressor::lz4hc;
    case Complib::blosc_zlib: return BloscCompressor::zlib;
    default: return BloscCompressor::zstd;
  }
}

[[noreturn]] void reject(const std::string& what, const OptionValue& value, const std::string& complib,
                         const char* valid) {
  throw Error(ErrorCode::invalid_argument, "invalid " + what + " " + value.repr() + " for complib '" +
                                               complib + "'; " + valid);
}

bool is_text(const OptionValue& v, const char* s) { return v.kind == OptionValue::Kind::text && v.text == s; }
bool is_none_like(const OptionValue& v) {  // None or 'none' (absent counts as None)
  return v.kind == OptionValue::Kind::absent || v.kind == OptionValue::Kind::none || is_text(v, "none");
}
bool is_false(const OptionValue& v) { return v.kind == OptionValue::Kind::boolean && !v.boolean; }
bool is_true(const OptionValue& v) { return v.kind == OptionValue::Kind::boolean && v.boolean; }

int parse_level(const OptionValue& v, const std::string& complib) {
  if (v.kind == OptionValue::Kind::absent) return 5;
  if (v.kind != OptionValue::Kind::integer || v.integer < 0 || v.integer > 9)
    reject("complevel", v, complib, "valid complevel values: integers 0 to 9");
  return int(v.integer);
}

}  // namespace

OptionValue OptionValue::parse(const std::string& token) {
  if (token == "None") return none();
  if (token == "True" || token == "true") return of(true);
  if (token == "False" || token == "false") return of(false);
  if (!token.empty() && token.size() < 19) {
    std::size_t i = token[0] == '-' ? 1 : 0;
    bool digits = i < token.size();
    for (; i < token.size(); ++i) digits = digits && std::isdigit(static_cast<unsigned char>(token[i]));
    if (digits) return of(std::stoll(token));
  }
  return of(token);
}

std::string OptionValue::repr() const {
  switch (kind) {
    case Kind::absent: return "(missing)";
    case Kind::none: return "None";
    case Kind::boolean: return boolean ? "True" : "False";
    case Kind::integer: return std::to_string(integer);
    case Kind::text: return "'" + text + "'";
  }
  return "?";
}

const char* complib_name(Complib complib) noexcept {
  for (const auto& entry : kComplibs)
    if (entry.complib == complib) return entry.name;
  return "?";
}

CompressionOptions parse_compression_options(const OptionValue& complib, const OptionValue& complevel,
                                             const OptionValue& shuffle) {
  CompressionOptions options;
  if (complib.kind != OptionValue::Kind::absent) {
    bool found = false;
    for (const auto& entry : kComplibs) {
      if (is_text(complib, entry.name)) {
        options.complib = entry.complib;
        found = true;
      }
    }
    if (!found)
      throw Error(ErrorCode::invalid_argument, "invalid complib " + complib.repr() + "; " + kValidComplibs);
  }
  const std::string name = complib_name(options.complib);
  if (is_blosc(options.complib)) {
    options.complevel = parse_level(complevel, name);
    if (shuffle.kind == OptionValue::Kind::absent) options.shuffle = Shuffle::byte;
    else if (is_none_like(shuffle)) options.shuffle = Shuffle::none;
    else if (is_text(shuffle, "byte")) options.shuffle = Shuffle::byte;
    else if (is_text(shuffle, "bit")) options.shuffle = Shuffle::bit;
    else reject("shuffle", shuffle, name, "valid shuffle values: None, 'none', 'byte', 'bit'");
    return options;
  }
  if (options.complib == Complib::lzf) {
    if (!is_none_like(complevel) && !is_false(complevel))
      reject("complevel", complevel, name, "valid complevel values: False, None, 'none'");
    options.complevel = 0;
  } else {
    options.complevel = parse_level(complevel, name);
  }
  if (is_none_like(shuffle) || is_false(shuffle)) options.shuffle = Shuffle::none;
  else if (is_true(shuffle) || is_text(shuffle, "byte")) options.shuffle = Shuffle::byte;
  else reject("shuffle", shuffle, name, "valid shuffle values: False, None, 'none', True, 'byte'");
  return options;
}

CompressionOptions parse_compression_spec(const std::string& spec) {
  OptionValue complib, complevel, shuffle;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    H5SPARSE_FAIL_IF(eq == std::string::npos, ErrorCode::invalid_argument,
            "compression option '" + item + "' is not key=value; keys: complib, complevel, shuffle");
    const std::string key = item.substr(0, eq);
    const OptionValue value = OptionValue::parse(item.substr(eq + 1));
    if (key == "complib") complib = value;
    else if (key == "complevel") complevel = value;
    else if (key == "shuffle") shuffle = value;
    else throw Error(ErrorCode::invalid_argument,
                     "unknown compression option '" + key + "'; keys: complib, complevel, shuffle");
  }
  return parse_compression_options(complib, complevel, shuffle);
}

std::string to_spec(const CompressionOptions& options) {
  std::string spec = std::string("complib=") + complib_name(options.complib);
  if (options.complib != Complib::lzf) spec += ",complevel=" + std::to_string(options.complevel);
  static const char* const kShuffleNames[] = {"none", "byte", "bit"};
  spec += std::string(",shuffle=") + kShuffleNames[int(options.shuffle)];
  return spec;
}

std::vector<FilterSpec> filter_pipeline(const CompressionOptions& options) {
  if (is_blosc(options.complib)) {
    // hdf5-blosc layout: [0..3] filled by set_local, [4] clevel, [5] shuffle, [6] compressor.
    return {{kFilterBlosc, true,
             {0, 0, 0, 0, unsigned(options.complevel), unsigned(options.shuffle),
              unsigned(blosc_compressor_of(options.complib))}}};
  }
  std::vector<FilterSpec> pipeline;
  if (options.shuffle == Shuffle::byte) pipeline.push_back({kFilterShuffle, false, {}});
  if (options.complib == Complib::lzf) pipeline.push_back({kFilterLzf, true, {}});
  else pipeline.push_back({kFilterDeflate, false, {unsigned(options.complevel)}});
  return pipeline;
}

}  // namespace h5sparse
