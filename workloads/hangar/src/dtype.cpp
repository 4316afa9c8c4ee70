// Sample dtypes: numpy names and numbers, HDF5 types.
#include "hangar/dtype.hpp"

#include <stdexcept>

#include "hangar/errors.hpp"

namespace hangar {

const std::vector<DtypeInfo>& all_dtypes() {
  static const std::vector<DtypeInfo> table = {
      {Dtype::b1, "b1", 1, 0},  {Dtype::u1, "u1", 1, 2}, {Dtype::u2, "u2", 2, 4},  {Dtype::u4, "u4", 4, 6},
      {Dtype::u8, "u8", 8, 8},  {Dtype::i1, "i1", 1, 1}, {Dtype::i2, "i2", 2, 3},  {Dtype::i4, "i4", 4, 5},
      {Dtype::i8, "i8", 8, 7},  {Dtype::f4, "f4", 4, 11}, {Dtype::f8, "f8", 8, 12},
  };
  return table;
}

const DtypeInfo& info(Dtype dtype) { return all_dtypes().at(std::size_t(dtype)); }

Dtype parse_dtype(const std::string& name) {
  static const std::pair<const char*, Dtype> kLongNames[] = {
      {"bool", Dtype::b1},   {"uint8", Dtype::u1}, {"uint16", Dtype::u2},  {"uint32", Dtype::u4},
      {"uint64", Dtype::u8}, {"int8", Dtype::i1},  {"int16", Dtype::i2},   {"int32", Dtype::i4},
      {"int64", Dtype::i8},  {"float32", Dtype::f4}, {"float64", Dtype::f8}};
  for (const DtypeInfo& d : all_dtypes())
    if (name == d.name) return d.dtype;
  for (const auto& [long_name, dtype] : kLongNames)
    if (name == long_name) return dtype;
  std::string valid;
  for (const DtypeInfo& d : all_dtypes()) valid += std::string(valid.empty() ? "" : ", ") + d.name;
  throw std::invalid_argument("unknown dtype '" + name + "' (valid: " + valid + ")");
}

Dtype dtype_from_numpy_num(int num) {
  for (const DtypeInfo& d : all_dtypes())
    if (d.numpy_num == num) return d.dtype;
  throw std::invalid_argument("unsupported numpy dtype number " + std::to_string(num));
}

hid_t make_hdf5_type(Dtype dtype) {
  switch (dtype) {
    case Dtype::b1: {
      const hid_t type = H5Tenum_create(H5T_NATIVE_INT8);
      hdf5_check(type, "cannot create the bool enum type");
      const signed char no = 0, yes = 1;
      if (H5Tenum_insert(type, "FALSE", &no) < 0 || H5Tenum_insert(type, "TRUE", &yes) < 0) {
        H5Tclose(type);
        hdf5_check(-1, "cannot create the bool enum type");
      }
      return type;
    }
    case Dtype::u1: return H5Tcopy(H5T_NATIVE_UINT8);
    case Dtype::u2: return H5Tcopy(H5T_NATIVE_UINT16);
    case Dtype::u4: return H5Tcopy(H5T_NATIVE_UINT32);
    case Dtype::u8: return H5Tcopy(H5T_NATIVE_UINT64);
    case Dtype::i1: return H5Tcopy(H5T_NATIVE_INT8);
    case Dtype::i2: return H5Tcopy(H5T_NATIVE_INT16);
    case Dtype::i4: return H5Tcopy(H5T_NATIVE_INT32);
    case Dtype::i8: return H5Tcopy(H5T_NATIVE_INT64);
    case Dtype::f4: return H5Tcopy(H5T_NATIVE_FLOAT);
    case Dtype::f8: return H5Tcopy(H5T_NATIVE_DOUBLE);
  }
  throw std::invalid_argument("unknown dtype");
}

}  // namespace hangar
