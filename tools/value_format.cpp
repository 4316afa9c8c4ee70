// Element printing driven by the file datatype (see value_format.hpp).
#include "value_format.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "tool_support.hpp"
#include "var_values.hpp"

namespace h5sparse::tool {
namespace {

std::uint64_t load_unsigned(const std::uint8_t* p, std::size_t size, bool big_endian) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < size; ++i) v |= std::uint64_t(p[big_endian ? size - 1 - i : i]) << (8 * i);
  return v;
}

template <typename T>
void append_number(std::string& out, T value) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

bool is_ieee(hid_t type, bool* big_endian) {
  const hid_t candidates[] = {H5T_IEEE_F32LE, H5T_IEEE_F64LE, H5T_IEEE_F32BE, H5T_IEEE_F64BE};
  for (int i = 0; i < 4; ++i) {
    if (H5Tequal(type, candidates[i]) > 0) {
      *big_endian = i >= 2;
      return true;
    }
  }
  return false;
}

}  // namespace

ValueFormatter::ValueFormatter(hid_t file_type) : root_(build(file_type)) {}

ValueFormatter::Node ValueFormatter::build(hid_t type) {
  Node n;
  n.size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      n.big_endian = H5Tget_order(type) == H5T_ORDER_BE;
      n.kind = n.size > 8 ? Kind::bytes : H5Tget_sign(type) == H5T_SGN_2 ? Kind::signed_int : Kind::unsigned_int;
      break;
    case H5T_FLOAT:
      if (is_ieee(type, &n.big_endian)) {
        n.kind = Kind::ieee_float;
      } else {
        n.kind = Kind::other_float;
        n.type = checked_handle(H5Tcopy(type), "cannot copy a datatype");
      }
      break;
    case H5T_ENUM:
      n.kind = Kind::enumeration;
      n.type = checked_handle(H5Tcopy(type), "cannot copy a datatype");
      break;
    case H5T_STRING:
      n.kind = Kind::string;
      break;
    case H5T_COMPOUND: {
      n.kind = Kind::compound;
      const int members = H5Tget_nmembers(type);
      for (int i = 0; i < members; ++i) {
        Handle member = checked_handle(H5Tget_member_type(type, unsigned(i)), "cannot read a compound member");
        n.offsets.push_back(H5Tget_member_offset(type, unsigned(i)));
        n.children.push_back(build(member.get()));
      }
      break;
    }
    case H5T_ARRAY: {
      n.kind = Kind::array;
      Handle base = checked_handle(H5Tget_super(type), "cannot read an array's base type");
      n.children.push_back(build(base.get()));
      n.count = n.children[0].size ? n.size / n.children[0].size : 0;
      break;
    }
    default:
      n.kind = Kind::bytes;
  }
  return n;
}

void ValueFormatter::append(std::string& out, const std::uint8_t* element) const { append(out, root_, element); }

void ValueFormatter::append(std::string& out, const Node& node, const std::uint8_t* p) {
  switch (node.kind) {
    case Kind::unsigned_int:
      append_number(out, load_unsigned(p, node.size, node.big_endian));
      return;
    case Kind::signed_int: {
      std::uint64_t v = load_unsigned(p, node.size, node.big_endian);
      if (node.size < 8 && (v >> (8 * node.size - 1)) & 1) v |= ~std::uint64_t(0) << (8 * node.size);
      append_number(out, static_cast<std::int64_t>(v));
      return;
    }
    case Kind::ieee_float: {
      const std::uint64_t bits = load_unsigned(p, node.size, node.big_endian);
      if (node.size == 4) {
        float f;
        const std::uint32_t b32 = std::uint32_t(bits);
        std::memcpy(&f, &b32, 4);
        append_number(out, f);
      } else {
        double d;
        std::memcpy(&d, &bits, 8);
        append_number(out, d);
      }
      return;
    }
    case Kind::other_float: {
      std::vector<std::uint8_t> buf(std::max<std::size_t>(node.size, sizeof(double)));
      std::memcpy(buf.data(), p, node.size);
      if (H5Tconvert(node.type.get(), H5T_NATIVE_DOUBLE, 1, buf.data(), nullptr, H5P_DEFAULT) >= 0) {
        double d;
        std::memcpy(&d, buf.data(), sizeof d);
        append_number(out, d);
        return;
      }
      break;  // print the bytes
    }
    case Kind::enumeration: {
      char name[256];
      if (H5Tenum_nameof(node.type.get(), p, name, sizeof name) >= 0) {
        out += name;
        return;
      }
      break;
    }
    case Kind::string:
      append_quoted(out, p, std::size_t(std::find(p, p + node.size, std::uint8_t(0)) - p));
      return;
    case Kind::compound:
      out += "{ ";
      for (std::size_t i = 0; i < node.children.size(); ++i) {
        if (i) out += ", ";
        append(out, node.children[i], p + node.offsets[i]);
      }
      out += " }";
      return;
    case Kind::array:
      out += "[ ";
      for (std::size_t i = 0; i < node.count; ++i) {
        if (i) out += ", ";
        append(out, node.children[0], p + i * node.children[0].size);
      }
      out += " ]";
      return;
    case Kind::bytes:
      break;
  }
  static const char kHex[] = "0123456789abcdef";
  out += "0x";
  for (std::size_t i = 0; i < node.size; ++i) {
    out += kHex[p[i] >> 4];
    out += kHex[p[i] & 15];
  }
}

void append_quoted(std::string& out, const std::uint8_t* chars, std::size_t size) {
  out += '"';
  for (std::size_t i = 0; i < size; ++i) {
    const std::uint8_t c = chars[i];
    const char* escape = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                       : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : nullptr;
    if (escape) {
      out += escape;
    } else if (c < 0x20 || c == 0x7F) {  // other control characters: octal, as h5dump -e
      const char octal[] = {'\\', char('0' + (c >> 6)), char('0' + (c >> 3 & 7)), char('0' + (c & 7)), 0};
      out += octal;
    } else {
      out += char(c);
    }
  }
  out += '"';
}

VarValueFormatter::VarValueFormatter(hid_t true_type) : compound_(H5Tget_class(true_type) == H5T_COMPOUND) {
  for (hdf5::VarMember& v : hdf5::var_members(true_type)) {
    Member m;
    m.slot = v.kind.has_value();
    m.string = m.slot && *v.kind != SlotKind::sequence;
    const hid_t value_type = m.slot ? v.base.get() : v.type.get();
    if (value_type != H5I_INVALID_HID) {
      m.format.emplace(value_type);
      m.size = H5Tget_size(value_type);
    }
    m.position = m.slot ? slots_++ : fixed_size_;
    if (!m.slot) fixed_size_ += m.size;
    members_.push_back(std::move(m));
  }
}

void VarValueFormatter::append(std::string& out, const VarValues& values, std::size_t e) const {
  if (!compound_) return append_member(out, members_[0], values, e);
  out += "{ ";
  for (std::size_t i = 0; i < members_.size(); ++i) {
    if (i) out += ", ";
    append_member(out, members_[i], values, e);
  }
  out += " }";
}

void VarValueFormatter::append_member(std::string& out, const Member& m, const VarValues& values,
                                      std::size_t e) const {
  if (!m.slot) return m.format->append(out, values.fixed.data() + e * fixed_size_ + m.position);
  const VarPayload p = values.payload(e * slots_ + m.position);
  if (p.null) {
    out += "NULL";
  } else if (m.string) {
    append_quoted(out, p.data, p.size);
  } else {
    out += '(';
    for (std::size_t at = 0; at < p.size; at += m.size) {
      if (at) out += ", ";
      m.format->append(out, p.data + at);
    }
    out += ')';
  }
}

}  // namespace h5sparse::tool
