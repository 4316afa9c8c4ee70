// HDF5 plumbing shared by the tool's commands: files opened on the native connector, the
// project's plugin directory, dataset discovery, dataspace and datatype descriptions, and the
// one way a command fails (an h5sparse::Error that main() puts on the HDF5 error stack).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "handle.hpp"
#include "h5sparse/error.hpp"

namespace h5sparse::tool {

using hdf5::Handle;

/// Throws Error(code, message): every failure of a command goes through here or H5SPARSE_FAIL_IF.
[[noreturn]] void fail(ErrorCode code, const std::string& message, const char* file = __builtin_FILE(),
                       int line = __builtin_LINE());

/// Runs an HDF5 call's result check: on a negative result HDF5 has pushed its own record;
/// this adds ours saying what the tool was doing.
void check(long long result, const std::string& what, const char* file = __builtin_FILE(), int line = __builtin_LINE());
Handle checked_handle(hid_t id, const std::string& what, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE());

/// Opens a file on the native connector, whatever HDF5_VOL_CONNECTOR says: the tool reads and
/// writes stored chunks as they are, so it needs no connector and sees files from anywhere.
Handle open_file(const std::string& path, bool writable);
Handle create_file(const std::string& path);

/// Appends the project's plugin directory (found beside the executable, in the build tree or
/// an install, or $H5SPARSE_PLUGIN_DIR) to HDF5's plugin search path, so sparse datasets can
/// be created and blosc/lzf data read without HDF5_PLUGIN_PATH. Returns the directory or "".
std::string add_own_plugin_directory();

/// Paths ("/a/b") of every dataset reachable from the root group, each object once, in
/// HDF5's visiting order (by name).
std::vector<std::string> list_datasets(hid_t file);

/// Opens a dataset by path; a clear error when the path is missing or not a dataset.
Handle open_dataset(hid_t file, const std::string& path);

/// Identity of an object in its file (its token as bytes): equal for every hard link to it.
std::string object_key(hid_t object);

/// Current and maximum dimensions of a dataset.
std::vector<std::uint64_t> dataset_dims(hid_t dset);
std::vector<std::uint64_t> dataset_maxdims(hid_t dset);

/// h5dump's DDL for a datatype ("H5T_STD_I32LE", "H5T_COMPOUND { ... }").
std::string type_text(hid_t type);
/// h5dump's DATASPACE line body: "SIMPLE { ( 13, 10 ) / ( 13, H5S_UNLIMITED ) }" or "SCALAR".
std::string dataspace_text(hid_t dset);
/// "( 16, 16 )"
std::string dims_text(const std::vector<std::uint64_t>& dims);

/// Non-negative integers separated by any of `separators` ("64x64", "0,10"); throws
/// Error(invalid_argument, complaint) on anything else.
std::vector<std::uint64_t> parse_numbers(const std::string& text, const char* separators, const std::string& complaint);

/// "1,234,567": counts in reports.
std::string thousands(std::uint64_t v);

/// Quotes a dataset path for DDL output as h5dump does ("/a/b" -> "\"/a/b\"").
std::string quoted(const std::string& text);

}  // namespace h5sparse::tool
