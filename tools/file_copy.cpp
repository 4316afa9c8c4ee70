// Object-by-object file copy with rewritten datasets (see file_copy.hpp).
#include "file_copy.hpp"

#include "error_stack.hpp"

#include <map>
#include <vector>

#include "tool_support.hpp"

namespace h5sparse::tool {
namespace {

struct CopyState {
  hid_t in_file;
  const RewritePredicate& wants;
  const Rewriter& rewrite;
  std::map<std::string, std::string> copied;  // object token (as bytes) -> output path
};

std::string token_key(const H5O_token_t& token) {
  return std::string(reinterpret_cast<const char*>(token.__data), sizeof token.__data);
}

std::string child_path(const std::string& parent, const char* name) {
  return (parent == "/" ? "" : parent) + "/" + name;
}

void copy_group(CopyState& state, hid_t in_group, hid_t out_group, const std::string& path);

void copy_link(CopyState& state, hid_t in_group, hid_t out_group, const std::string& parent, const char* name) {
  const std::string path = child_path(parent, name);
  H5L_info2_t link;
  check(H5Lget_info2(in_group, name, &link, H5P_DEFAULT), "cannot read link " + path);
  if (link.type == H5L_TYPE_SOFT || link.type == H5L_TYPE_EXTERNAL) {
    std::vector<char> value(link.u.val_size + 1);
    check(H5Lget_val(in_group, name, value.data(), value.size(), H5P_DEFAULT), "cannot read link " + path);
    if (link.type == H5L_TYPE_SOFT) {
      check(H5Lcreate_soft(value.data(), out_group, name, H5P_DEFAULT, H5P_DEFAULT), "cannot copy link " + path);
    } else {
      const char *file = nullptr, *object = nullptr;
      check(H5Lunpack_elink_val(value.data(), value.size(), nullptr, &file, &object), "cannot read link " + path);
      check(H5Lcreate_external(file, object, out_group, name, H5P_DEFAULT, H5P_DEFAULT), "cannot copy link " + path);
    }
    return;
  }
  if (link.type != H5L_TYPE_HARD) fail(ErrorCode::unsupported, path + ": user-defined links are not copied");
  H5O_info2_t info;
  check(H5Oget_info_by_name3(in_group, name, &info, H5O_INFO_BASIC, H5P_DEFAULT), "cannot inspect " + path);
  const std::string key = token_key(info.token);
  if (const auto seen = state.copied.find(key); seen != state.copied.end()) {
    check(H5Lcreate_hard(out_group, seen->second.c_str(), out_group, name, H5P_DEFAULT, H5P_DEFAULT),
          "cannot link " + path);
    return;
  }
  state.copied.emplace(key, path);
  if (info.type == H5O_TYPE_GROUP) {
    Handle in = checked_handle(H5Gopen2(in_group, name, H5P_DEFAULT), "cannot open group " + path);
    Handle gcpl = checked_handle(H5Gget_create_plist(in.get()), "cannot read the properties of " + path);
    Handle out = checked_handle(H5Gcreate2(out_group, name, H5P_DEFAULT, gcpl.get(), H5P_DEFAULT),
                                "cannot create group " + path);
    copy_attributes(in.get(), out.get());
    copy_group(state, in.get(), out.get(), path);
    return;
  }
  if (info.type == H5O_TYPE_DATASET) {
    Handle in = checked_handle(H5Dopen2(in_group, name, H5P_DEFAULT), "cannot open dataset " + path);
    if (state.wants(path, in.get())) {
      state.rewrite(path, in.get(), out_group, name);
      Handle out = checked_handle(H5Dopen2(out_group, name, H5P_DEFAULT), "cannot open the new dataset " + path);
      copy_attributes(in.get(), out.get());
      return;
    }
  }
  check(H5Ocopy(in_group, name, out_group, name, H5P_DEFAULT, H5P_DEFAULT), "cannot copy " + path);
}

void copy_group(CopyState& state, hid_t in_group, hid_t out_group, const std::string& path) {
  std::vector<std::string> names;
  auto collect = [](hid_t, const char* name, const H5L_info2_t*, void* data) -> herr_t {
    return hdf5::call_guarded(hdf5::Origin::tool, "list_group", herr_t(-1), [&] {
      static_cast<std::vector<std::string>*>(data)->push_back(name);
      return herr_t(0);
    });
  };
  check(H5Literate2(in_group, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect, &names), "cannot list group " + path);
  for (const std::string& name : names) copy_link(state, in_group, out_group, path, name.c_str());
}

}  // namespace

void copy_attributes(hid_t from, hid_t to) {
  H5O_info2_t info;
  check(H5Oget_info3(from, &info, H5O_INFO_NUM_ATTRS), "cannot count attributes");
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    Handle attr = checked_handle(H5Aopen_by_idx(from, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT,
                                                H5P_DEFAULT), "cannot open an attribute");
    const ssize_t name_len = H5Aget_name(attr.get(), 0, nullptr);
    check(name_len, "cannot read an attribute name");
    std::string name(std::size_t(name_len) + 1, '\0');
    check(H5Aget_name(attr.get(), name.size(), name.data()), "cannot read an attribute name");
    name.resize(std::size_t(name_len));
    Handle type = checked_handle(H5Aget_type(attr.get()), "cannot read the type of attribute " + name);
    Handle copy = checked_handle(H5Tcopy(type.get()), "cannot copy the type of attribute " + name);
    Handle space = checked_handle(H5Aget_space(attr.get()), "cannot read the space of attribute " + name);
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    std::vector<std::uint8_t> buf(std::size_t(n < 1 ? 1 : n) * H5Tget_size(type.get()));
    check(H5Aread(attr.get(), type.get(), buf.data()), "cannot read attribute " + name);
    Handle out = checked_handle(H5Acreate2(to, name.c_str(), copy.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                                "cannot create attribute " + name);
    const herr_t written = H5Awrite(out.get(), type.get(), buf.data());
    if (H5Tdetect_class(type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(type.get()) > 0)
      H5Treclaim(type.get(), space.get(), H5P_DEFAULT, buf.data());
    check(written, "cannot write attribute " + name);
  }
}

void copy_file(hid_t in_file, hid_t out_file, const RewritePredicate& wants, const Rewriter& rewrite) {
  CopyState state{in_file, wants, rewrite, {}};
  Handle in_root = checked_handle(H5Gopen2(in_file, "/", H5P_DEFAULT), "cannot open the root group");
  Handle out_root = checked_handle(H5Gopen2(out_file, "/", H5P_DEFAULT), "cannot open the root group");
  H5O_info2_t info;
  check(H5Oget_info3(in_root.get(), &info, H5O_INFO_BASIC), "cannot inspect the root group");
  state.copied.emplace(token_key(info.token), "/");
  copy_attributes(in_root.get(), out_root.get());
  copy_group(state, in_root.get(), out_root.get(), "/");
}

}  // namespace h5sparse::tool
