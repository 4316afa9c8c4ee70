// Dense -> sparse: creates the sparse carrier dataset and stores each chunk with
// H5Dwrite_chunk after the core's encode_chunk, defining the elements the plan's rule picks.
// No connector is involved (docs/DESIGN.md, "Command-line tool").
#pragma once

#include <hdf5.h>

#include <ostream>
#include <string>

#include "repack_plan.hpp"

namespace h5sparse::tool {

class SparseWriter {
 public:
  SparseWriter(const Plan& plan, std::ostream& out) : plan_(plan), out_(out) {}

  /// True when the dataset can become sparse: simple dataspace, fixed-size type, not sparse yet.
  bool convertible(hid_t dset) const;

  /// Writes `in` as sparse dataset `name`; `path` names it in messages, `list_name` picks its
  /// entries in the defined-elements list.
  void write(const std::string& path, const std::string& list_name, hid_t in, hid_t out_group,
             const char* name) const;

 private:
  const BoxList* list_for(const std::string& path, std::size_t rank) const;

  const Plan& plan_;
  std::ostream& out_;
};

}  // namespace h5sparse::tool
