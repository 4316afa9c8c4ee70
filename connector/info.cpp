// Connector info: copy, compare, free, and the string form parsed from HDF5_VOL_CONNECTOR.
#include "info.hpp"

#include <H5VLconnector_passthru.h>
#include <H5VLpassthru.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "error_stack.hpp"
#include "object.hpp"

namespace h5sparse::vol {
namespace {

using hdf5::call_guarded;
using hdf5::Origin;

// HDF5 frees the string with H5free_memory, so it must come from H5allocate_memory.
char* hdf5_string(const std::string& s) {
  auto* out = static_cast<char*>(H5allocate_memory(s.size() + 1, false));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

}  // namespace

void* info_copy(const void* info) noexcept {
  return call_guarded<void*>(Origin::connector, "info_copy", nullptr, [&]() -> void* {
    const auto* src = static_cast<const Info*>(info);
    auto* copy = new Info{src->under_vol_id, nullptr, src->native};
    H5Iinc_ref(src->under_vol_id);  // the copy's reference, which info_free drops
    if (src->under_vol_info != nullptr &&
        H5VLcopy_connector_info(src->under_vol_id, &copy->under_vol_info, src->under_vol_info) < 0) {
      info_free(copy);
      throw Error(ErrorCode::hdf5_call, "cannot copy the info of the connector below");
    }
    return copy;
  });
}

herr_t info_cmp(int* cmp_value, const void* info1, const void* info2) noexcept {
  return call_guarded<herr_t>(Origin::connector, "info_cmp", -1, [&]() -> herr_t {
    const auto* a = static_cast<const Info*>(info1);
    const auto* b = static_cast<const Info*>(info2);
    *cmp_value = 0;
    if (H5VLcmp_connector_cls(cmp_value, a->under_vol_id, b->under_vol_id) < 0) return -1;
    if (*cmp_value != 0) return 0;
    return H5VLcmp_connector_info(cmp_value, a->under_vol_id, a->under_vol_info, b->under_vol_info);
  });
}

herr_t info_free(void* info) noexcept {
  return call_guarded<herr_t>(Origin::connector, "info_free", -1, [&]() -> herr_t {
    auto* i = static_cast<Info*>(info);
    hdf5::preserving_error_stack([i] {
      if (i->under_vol_info != nullptr) H5VLfree_connector_info(i->under_vol_id, i->under_vol_info);
      H5Idec_ref(i->under_vol_id);
    });
    delete i;
    return 0;
  });
}

herr_t info_to_str(const void* info, char** str) noexcept {
  return call_guarded<herr_t>(Origin::connector, "info_to_str", -1, [&]() -> herr_t {
    const auto* i = static_cast<const Info*>(info);
    H5VL_class_value_t value = -1;
    if (H5VLget_value(i->under_vol_id, &value) < 0) return -1;
    char* under_string = nullptr;
    if (H5VLconnector_info_to_str(i->under_vol_info, i->under_vol_id, &under_string) < 0) return -1;
    std::string s = "under_vol=" + std::to_string(unsigned(value)) + ";under_info={" +
                    (under_string ? under_string : "") + "}";
    if (under_string != nullptr) H5free_memory(under_string);
    *str = hdf5_string(s);
    return 0;
  });
}

herr_t str_to_info(const char* str, void** info) noexcept {
  return call_guarded<herr_t>(Origin::connector, "str_to_info", -1, [&]() -> herr_t {
    // An empty string (HDF5_VOL_CONNECTOR="h5sparse") means: on top of the native connector.
    const std::string text = str ? str : "";
    unsigned value = H5_VOL_NATIVE;
    std::string under_info;
    if (!text.empty()) {
      const std::string key = "under_vol=";
      const std::size_t start = text.find(key);
      H5SPARSE_FAIL_IF(start == std::string::npos, ErrorCode::invalid_argument,
              "connector info '" + text + "' must read under_vol=<value>;under_info={...}");
      char* end = nullptr;
      value = unsigned(std::strtoul(text.c_str() + start + key.size(), &end, 10));
      H5SPARSE_FAIL_IF(end == text.c_str() + start + key.size(), ErrorCode::invalid_argument,
              "connector info '" + text + "': under_vol needs a connector value");
      const std::size_t open = text.find("under_info={");
      const std::size_t close = text.rfind('}');
      if (open != std::string::npos) {
        H5SPARSE_FAIL_IF(close == std::string::npos || close < open + 12, ErrorCode::invalid_argument,
                "connector info '" + text + "': unbalanced braces in under_info");
        under_info = text.substr(open + 12, close - open - 12);
      }
    }
    // HDF5 registers its built-in pass_through lazily (first use of H5VL_PASSTHRU); until then a
    // lookup by value searches the plugin path and fails.
    H5SPARSE_FAIL_IF(value == H5VL_PASSTHRU_VALUE && H5VL_PASSTHRU < 0, ErrorCode::invalid_argument,
            "connector info: cannot register HDF5's pass_through connector");
    const hid_t under_vol_id = H5VLregister_connector_by_value(H5VL_class_value_t(value), H5P_DEFAULT);
    H5SPARSE_FAIL_IF(under_vol_id < 0, ErrorCode::invalid_argument,
            "connector info: no VOL connector with value " + std::to_string(value) + " can be loaded");
    void* under_vol_info = nullptr;
    if (!under_info.empty() &&
        H5VLconnector_str_to_info(under_info.c_str(), under_vol_id, &under_vol_info) < 0) {
      H5VLclose(under_vol_id);
      throw Error(ErrorCode::invalid_argument, "connector info: the connector below rejects '" + under_info + "'");
    }
    // Takes over the registration reference.
    *info = new Info{under_vol_id, under_vol_info, names_native_connector(under_vol_id)};
    return 0;
  });
}

hdf5::Handle under_fapl(hid_t fapl, const Info* info) {
  hdf5::Handle copy = hdf5::checked(H5Pcopy(fapl), "cannot copy the file access property list");
  hdf5::throw_if_negative(info ? H5Pset_vol(copy.get(), info->under_vol_id, info->under_vol_info)
                               : H5Pset_vol(copy.get(), H5VL_NATIVE, nullptr),
                          "cannot set the connector below on the file access property list");
  return copy;
}

Info* info_from_fapl(hid_t fapl) {
  void* info = nullptr;
  hdf5::throw_if_negative(H5Pget_vol_info(fapl, &info), "cannot read the connector info of the FAPL");
  return static_cast<Info*>(info);
}

}  // namespace h5sparse::vol
