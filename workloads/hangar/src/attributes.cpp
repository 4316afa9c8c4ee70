// Root-group attributes of a store file.
#include "attributes.hpp"

#include "handle.hpp"
#include "hangar/errors.hpp"

namespace hangar::attributes {
namespace {

using h5sparse::hdf5::Handle;

Handle owned(hid_t id, const std::string& what) { return Handle(hid_t(hdf5_check(id, what))); }

void create_and_write(hid_t loc, const char* name, hid_t type, hid_t space, const void* data) {
  const std::string what = std::string("cannot write attribute '") + name + "'";
  Handle attr = owned(H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT), what);
  hdf5_check(H5Awrite(attr.get(), type, data), what);
}

}  // namespace

void write_ints(hid_t loc, const char* name, const std::vector<std::int64_t>& values) {
  const hsize_t n = values.size();
  Handle space = owned(n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), "cannot create a dataspace");
  create_and_write(loc, name, H5T_NATIVE_INT64, space.get(), values.data());
}

void write_double(hid_t loc, const char* name, double value) {
  Handle space = owned(H5Screate(H5S_SCALAR), "cannot create a dataspace");
  create_and_write(loc, name, H5T_NATIVE_DOUBLE, space.get(), &value);
}

void write_string(hid_t loc, const char* name, const std::string& value) {
  Handle type = owned(H5Tcopy(H5T_C_S1), "cannot create a string type");
  hdf5_check(H5Tset_size(type.get(), value.empty() ? 1 : value.size()), "cannot size a string type");
  hdf5_check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "cannot set a string type's character set");
  Handle space = owned(H5Screate(H5S_SCALAR), "cannot create a dataspace");
  const std::string stored = value.empty() ? std::string(1, '\0') : value;
  create_and_write(loc, name, type.get(), space.get(), stored.data());
}

void modify_ints(hid_t loc, const char* name, const std::vector<std::int64_t>& values) {
  const std::string what = std::string("cannot update attribute '") + name + "'";
  Handle attr = owned(H5Aopen(loc, name, H5P_DEFAULT), what);
  hdf5_check(H5Awrite(attr.get(), H5T_NATIVE_INT64, values.data()), what);
}

std::vector<std::int64_t> read_ints(hid_t loc, const char* name) {
  const std::string what = std::string("cannot read attribute '") + name + "'";
  Handle attr = owned(H5Aopen(loc, name, H5P_DEFAULT), what);
  Handle space = owned(H5Aget_space(attr.get()), what);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  hdf5_check(n, what);
  std::vector<std::int64_t> values(static_cast<std::size_t>(n));
  if (n > 0) hdf5_check(H5Aread(attr.get(), H5T_NATIVE_INT64, values.data()), what);
  return values;
}

std::string read_string(hid_t loc, const char* name) {
  const std::string what = std::string("cannot read attribute '") + name + "'";
  Handle attr = owned(H5Aopen(loc, name, H5P_DEFAULT), what);
  Handle type = owned(H5Aget_type(attr.get()), what);
  if (H5Tis_variable_str(type.get()) > 0) throw StoreError(what + ": variable-length strings are not expected");
  const std::size_t size = H5Tget_size(type.get());
  std::string value(size, '\0');
  hdf5_check(H5Aread(attr.get(), type.get(), value.data()), what);
  value.resize(value.find('\0') == std::string::npos ? size : value.find('\0'));
  return value;
}

}  // namespace hangar::attributes
