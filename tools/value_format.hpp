// Prints one element of a dataset, given its bytes in the file datatype, the way h5dump
// writes values: integers and floats as numbers (floats in the shortest form that reads back
// exactly), enums by name, strings quoted (escaped as h5dump -e escapes them, except that
// bytes above 0x7F stay as they are, so UTF-8 text reads as text), compounds as { a, b },
// arrays as [ a, b ], anything else as hex bytes. Variable-length elements (VarValueFormatter)
// print as h5dump prints them too: strings quoted, sequences as (a, b), NULL as NULL; unlike
// h5dump, which cannot tell them apart, a NULL sequence prints NULL and an empty one ().
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "h5sparse/var_chunk.hpp"
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

/// Appends `size` bytes of string characters in double quotes.
void append_quoted(std::string& out, const std::uint8_t* chars, std::size_t size);

/// Prints elements of a variable-length dataset from the engine's form (VarValues): the fixed
/// part's members and each slot's payload, in the order of the true datatype's members.
class VarValueFormatter {
 public:
  explicit VarValueFormatter(hid_t true_type);
  /// Element `e` of `values` (values of this dataset's VarType).
  void append(std::string& out, const h5sparse::VarValues& values, std::size_t e) const;

 private:
  struct Member {
    bool slot = false;          // a variable-length member
    bool string = false;        // a string slot
    std::size_t position = 0;   // byte in the fixed part, or slot index
    std::size_t size = 0;       // bytes of a fixed member, or of a sequence's base element
    std::optional<ValueFormatter> format;  // a fixed member, or a sequence's base type
  };
  void append_member(std::string& out, const Member& m, const h5sparse::VarValues& values, std::size_t e) const;

  std::vector<Member> members_;
  bool compound_ = false;
  std::size_t slots_ = 0, fixed_size_ = 0;
};

}  // namespace h5sparse::tool
