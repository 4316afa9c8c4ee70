// HDF5's error stack as text for StoreError messages.
#include "hangar/errors.hpp"

#include "error_stack.hpp"

namespace hangar {
namespace {

herr_t append_record(unsigned n, const H5E_error2_t* err, void* data) {
  return h5sparse::hdf5::call_guarded(h5sparse::hdf5::Origin::tool, "error_text", herr_t(-1), [&] {
    auto* text = static_cast<std::string*>(data);
    char cls[64] = "", major[128] = "", minor[128] = "";
    H5Eget_class_name(err->cls_id, cls, sizeof(cls));
    H5Eget_msg(err->maj_num, nullptr, major, sizeof(major));
    H5Eget_msg(err->min_num, nullptr, minor, sizeof(minor));
    *text += "  #" + std::to_string(n) + " " + cls + " " + (err->func_name ? err->func_name : "") + "(): " +
             (err->desc ? err->desc : "") + " [" + major + " / " + minor + "]\n";
    return herr_t(0);
  });
}

}  // namespace

std::string hdf5_error_stack_text() {
  // Walk a copy: the message lookups in the callback are API calls, which clear the default stack.
  const hid_t stack = H5Eget_current_stack();
  if (stack < 0) return {};
  std::string text;
  H5Ewalk2(stack, H5E_WALK_DOWNWARD, append_record, &text);
  H5Eclose_stack(stack);
  return text;
}

long long hdf5_check(long long result, const std::string& what) {
  if (result >= 0) return result;
  std::string message = what;
  const std::string stack = hdf5_error_stack_text();
  if (!stack.empty()) message += "\nHDF5 error stack:\n" + stack;
  throw StoreError(message);
}

}  // namespace hangar
