// Prints one element of a dataset, given its bytes in the file datatype, the way h5dump
// writes values: integers and floats as numbers (floats in the shortest form that reads back
// exactly), enums by name, fixed strings quoted, compounds as { a, b }, arrays as [ a, b ],
// anything else as hex bytes.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "handle.hpp"

namespace h5sparse::tool {

class ValueFormatter {
 public:
  explicit ValueFormatter(hid_t file_type);
  void append(std::string& out, const std::uint8_t* element) const;
  std::string format(const std::uint8_t* element) const {
    std::string s;
    append(s, element);
    return s;
  }

 private:
  enum class Kind { signed_int, unsigned_int, ieee_float, other_float, enumeration, string, compound, array, bytes };
  struct Node {
    Kind kind = Kind::bytes;
    std::size_t size = 0;
    bool big_endian = false;
    hdf5::Handle type;                  // for enums and non-IEEE floats
    std::vector<std::size_t> offsets;   // compound member offsets
    std::vector<Node> children;         // compound members, or the array's base type
    std::size_t count = 0;              // array elements
  };
  static Node build(hid_t type);
  static void append(std::string& out, const Node& node, const std::uint8_t* p);

  Node root_;
};

}  // namespace h5sparse::tool
