// The compression vocabulary users type, after Hangar's HDF5_00 backend:
//   complib   blosc:blosclz | blosc:lz4 | blosc:lz4hc | blosc:zlib | blosc:zstd | lzf | gzip
//   complevel 0-9 (blosc, gzip); False/None/'none' (lzf)
//   shuffle   None/'none'/'byte'/'bit' (blosc); False/None/'none'/True/'byte' (lzf, gzip)
// and its translation into an HDF5 filter pipeline (IDs and cd_values, no HDF5 types here).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "h5sparse/codecs.hpp"
#include "h5sparse/filter_ids.hpp"

namespace h5sparse {

enum class Complib { blosc_blosclz, blosc_lz4, blosc_lz4hc, blosc_zlib, blosc_zstd, lzf, gzip };

/// A value as a Python caller would pass it: missing, None, a bool, an integer or a string.
struct OptionValue {
  enum class Kind { absent, none, boolean, integer, text };
  Kind kind = Kind::absent;
  bool boolean = false;
  long long integer = 0;
  std::string text;

  static OptionValue absent_value() { return {}; }
  static OptionValue none() { return {Kind::none, false, 0, {}}; }
  static OptionValue of(bool b) { return {Kind::boolean, b, 0, {}}; }
  static OptionValue of(long long i) { return {Kind::integer, false, i, {}}; }
  static OptionValue of(int i) { return of(static_cast<long long>(i)); }
  static OptionValue of(const char* s) { return {Kind::text, false, 0, s}; }
  static OptionValue of(std::string s) { return {Kind::text, false, 0, std::move(s)}; }
  /// Reads a token of the text form: None, True/False, an integer, otherwise a string.
  static OptionValue parse(const std::string& token);
  /// How the value reads in an error message ('byte', None, 5, True).
  std::string repr() const;
};

struct CompressionOptions {
  Complib complib = Complib::blosc_lz4hc;  // Hangar's default
  int complevel = 5;
  Shuffle shuffle = Shuffle::byte;
};

/// Validates one combination; throws Error(invalid_argument) whose message lists what is valid.
/// An absent complib means Hangar's default (blosc:lz4hc); absent complevel means 5 for blosc
/// and gzip; absent shuffle means 'byte' for blosc and none for lzf and gzip.
CompressionOptions parse_compression_options(const OptionValue& complib, const OptionValue& complevel,
                                             const OptionValue& shuffle);

/// The text form "complib=blosc:zstd,complevel=5,shuffle=bit" (keys in any order, each optional).
CompressionOptions parse_compression_spec(const std::string& spec);

/// Canonical text form of a validated combination (parses back to the same options).
std::string to_spec(const CompressionOptions& options);

const char* complib_name(Complib complib) noexcept;

/// One filter of an HDF5 pipeline, as H5Pset_filter takes it.
struct FilterSpec {
  int id;                            ///< HDF5 filter ID
  bool optional;                     ///< H5Z_FLAG_OPTIONAL
  std::vector<unsigned> cd_values;   ///< client data (set_local fills the rest)
};

/// The pipeline Hangar (and h5py/hdf5plugin) would set for these options.
std::vector<FilterSpec> filter_pipeline(const CompressionOptions& options);

}  // namespace h5sparse
