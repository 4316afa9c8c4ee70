// HDF5 plumbing shared by the tool's commands (see tool_support.hpp).
#include "tool_support.hpp"

#include "error_stack.hpp"

#include <H5LTpublic.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sys/stat.h>

namespace h5sparse::tool {

void fail(ErrorCode code, const std::string& message, const char* file, int line) {
  throw Error(code, message, file, line);
}

void check(long long result, const std::string& what, const char* file, int line) {
  if (result < 0) throw Error(ErrorCode::hdf5_call, what, file, line);
}

Handle checked_handle(hid_t id, const std::string& what, const char* file, int line) {
  check(id, what, file, line);
  return Handle(id);
}

namespace {

Handle native_fapl() {
  Handle fapl = checked_handle(H5Pcreate(H5P_FILE_ACCESS), "cannot create a file access property list");
  check(H5Pset_vol(fapl.get(), H5VL_NATIVE, nullptr), "cannot select the native VOL connector");
  return fapl;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string path(buf, std::size_t(n));
  return path.substr(0, path.find_last_of('/'));
}

}  // namespace

Handle open_file(const std::string& path, bool writable) {
  Handle fapl = native_fapl();
  const htri_t is_hdf5 = H5Fis_accessible(path.c_str(), fapl.get());
  if (is_hdf5 <= 0) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) fail(ErrorCode::invalid_argument, path + ": no such file");
    fail(ErrorCode::invalid_argument, path + ": not an HDF5 file");
  }
  return checked_handle(H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.get()),
                        "cannot open " + path);
}

Handle create_file(const std::string& path) {
  Handle fapl = native_fapl();
  return checked_handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), "cannot create " + path);
}

std::string add_own_plugin_directory() {
  std::string dir;
  if (const char* env = std::getenv("H5SPARSE_PLUGIN_DIR"); env && is_directory(env)) dir = env;
  const std::string here = executable_dir();
  for (const std::string& candidate : {here + "/../plugins", here + "/../" H5SPARSE_INSTALL_PLUGIN_SUBDIR}) {
    if (dir.empty() && is_directory(candidate)) dir = candidate;
  }
  if (!dir.empty()) check(H5PLappend(dir.c_str()), "cannot add " + dir + " to the plugin search path");
  return dir;
}

namespace {

herr_t collect_dataset(hid_t, const char* name, const H5O_info2_t* info, void* data) {
  return hdf5::call_guarded(hdf5::Origin::tool, "list_datasets", herr_t(-1), [&] {
    if (info->type == H5O_TYPE_DATASET)
      static_cast<std::vector<std::string>*>(data)->push_back(std::string("/") + name);
    return herr_t(0);
  });
}

}  // namespace

std::vector<std::string> list_datasets(hid_t file) {
  std::vector<std::string> paths;
  check(H5Ovisit3(file, H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &paths, H5O_INFO_BASIC),
        "cannot walk the file's groups");
  return paths;
}

Handle open_dataset(hid_t file, const std::string& path) {
  H5O_info2_t info;
  htri_t exists = 0;
  H5E_BEGIN_TRY { exists = H5LTpath_valid(file, path.c_str(), 1); }
  H5E_END_TRY;
  if (exists <= 0) fail(ErrorCode::invalid_argument, "no object " + path + " in the file");
  check(H5Oget_info_by_name3(file, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT), "cannot inspect " + path);
  if (info.type != H5O_TYPE_DATASET) fail(ErrorCode::invalid_argument, path + " is not a dataset");
  return checked_handle(H5Dopen2(file, path.c_str(), H5P_DEFAULT), "cannot open dataset " + path);
}

std::string object_key(hid_t object) {
  H5O_info2_t info;
  check(H5Oget_info3(object, &info, H5O_INFO_BASIC), "cannot inspect an object");
  return std::string(reinterpret_cast<const char*>(info.token.__data), sizeof info.token.__data);
}

namespace {

std::vector<std::uint64_t> extent(hid_t dset, bool max) {
  Handle space = checked_handle(H5Dget_space(dset), "cannot read a dataspace");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  check(rank, "cannot read a dataspace");
  std::vector<hsize_t> dims(std::size_t(rank) + 1), maxdims(std::size_t(rank) + 1);
  check(H5Sget_simple_extent_dims(space.get(), dims.data(), maxdims.data()), "cannot read a dataspace");
  const std::vector<hsize_t>& v = max ? maxdims : dims;
  return std::vector<std::uint64_t>(v.begin(), v.begin() + rank);
}

}  // namespace

std::vector<std::uint64_t> dataset_dims(hid_t dset) { return extent(dset, false); }
std::vector<std::uint64_t> dataset_maxdims(hid_t dset) { return extent(dset, true); }

std::string type_text(hid_t type) {
  std::size_t len = 0;
  check(H5LTdtype_to_text(type, nullptr, H5LT_DDL, &len), "cannot describe a datatype");
  std::string text(len, '\0');
  check(H5LTdtype_to_text(type, text.data(), H5LT_DDL, &len), "cannot describe a datatype");
  text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
  // H5LT writes compound members as `TYPE "name" : offset;`, h5dump as `TYPE "name";`.
  std::string ddl;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 3, "\" :") == 0) {
      std::size_t j = i + 3;
      while (j < text.size() && (text[j] == ' ' || std::isdigit(static_cast<unsigned char>(text[j])))) ++j;
      if (j < text.size() && text[j] == ';') {
        ddl += '"';
        i = j - 1;
        continue;
      }
    }
    ddl += text[i];
  }
  return ddl;
}

std::string dims_text(const std::vector<std::uint64_t>& dims) {
  std::string text = "( ";
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d) text += ", ";
    text += dims[d] == H5S_UNLIMITED ? "H5S_UNLIMITED" : std::to_string(dims[d]);
  }
  return text + " )";
}

std::string dataspace_text(hid_t dset) {
  Handle space = checked_handle(H5Dget_space(dset), "cannot read a dataspace");
  const H5S_class_t kind = H5Sget_simple_extent_type(space.get());
  if (kind == H5S_SCALAR) return "SCALAR";
  if (kind == H5S_NULL) return "NULL";
  return "SIMPLE { " + dims_text(dataset_dims(dset)) + " / " + dims_text(dataset_maxdims(dset)) + " }";
}

std::vector<std::uint64_t> parse_numbers(const std::string& text, const char* separators, const std::string& complaint) {
  std::vector<std::uint64_t> values;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find_first_of(separators, at), text.size());
    const std::string part = text.substr(at, end - at);
    char* stop = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(part.c_str(), &stop, 10);
    if (part.empty() || !std::isdigit(static_cast<unsigned char>(part[0])) || *stop != '\0' || errno == ERANGE)
      fail(ErrorCode::invalid_argument, complaint);
    values.push_back(v);
    at = end + 1;
  }
  return values;
}

std::string thousands(std::uint64_t v) {
  std::string s = std::to_string(v);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
  return s;
}

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

}  // namespace h5sparse::tool
