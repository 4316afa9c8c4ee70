// The text form of defined locations, shared by the dump output and the repack input: h5dump's
// region notation as the Tools RFC uses it,
//     DATASET "/path" {
//        DEFINED_SPARSE_DATA BLOCK (2,2)-(4,7)
//        DEFINED_SPARSE_DATA POINT (5,9), (11,1), (12,8)
//     }
// so `h5sparse-tool dump` output is a valid `--defined` list. Plain C++ (no HDF5).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "box_list.hpp"

namespace h5sparse::tool {

/// "(2,2)": coordinates as h5dump prints them.
std::string format_coords(const std::uint64_t* coords, std::size_t rank);
/// Appends the same to `out` (no temporary string: dumps print millions of them).
void append_coords(std::string& out, const std::uint64_t* coords, std::size_t rank);

/// The boxes listed under one DATASET header; an empty name holds what came before any header.
struct DatasetLocations {
  std::string dataset;
  BoxList boxes;
};

/// Reads every BLOCK and POINT entry (lines naming neither keyword are ignored, so a dump with
/// --sparse-data parses too). Throws Error(invalid_argument) naming `source:line` for a
/// malformed entry, a rank that changes within a dataset, or a block whose corners are reversed.
std::vector<DatasetLocations> parse_locations(std::istream& in, const std::string& source);

}  // namespace h5sparse::tool
