// The sample dtypes of the store (Hangar's HDF5_00 list minus float16 and longdouble), with
// numpy's names and type numbers (Hangar records schema_dtype_num) and their HDF5 types.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <string>
#include <vector>

namespace hangar {

enum class Dtype { b1, u1, u2, u4, u8, i1, i2, i4, i8, f4, f8 };

struct DtypeInfo {
  Dtype dtype;
  const char* name;   ///< numpy's short name ("u1", "f4", "b1" for bool)
  std::size_t size;   ///< bytes per element
  int numpy_num;      ///< numpy type number (np.dtype(name).num on Linux x86-64)
};

const DtypeInfo& info(Dtype dtype);
const std::vector<DtypeInfo>& all_dtypes();
/// By numpy short name ("u1", "float32" and "bool" are accepted too); throws std::invalid_argument.
Dtype parse_dtype(const std::string& name);
/// By numpy type number; throws std::invalid_argument.
Dtype dtype_from_numpy_num(int num);

/// A new HDF5 datatype id (caller closes) for the dtype; bool is h5py's enum {FALSE, TRUE} on int8,
/// so h5py reads it as numpy bool.
hid_t make_hdf5_type(Dtype dtype);

}  // namespace hangar
