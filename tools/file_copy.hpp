// Copying one file into another object by object, so that chosen datasets can be rewritten on
// the way (repack): groups are recreated with their creation properties and attributes, soft
// and external links recreated, every other dataset and named datatype copied with H5Ocopy,
// and an object reached through several hard links is copied once and linked again.
#pragma once

#include <hdf5.h>

#include <functional>
#include <string>

namespace h5sparse::tool {

/// Decides, for a dataset path, whether `rewrite` makes it (true) or H5Ocopy copies it.
using RewritePredicate = std::function<bool(const std::string& path, hid_t dataset)>;
/// Creates the output dataset `name` in `out_group` from `dataset` (attributes are copied after).
using Rewriter = std::function<void(const std::string& path, hid_t dataset, hid_t out_group, const char* name)>;

void copy_file(hid_t in_file, hid_t out_file, const RewritePredicate& wants, const Rewriter& rewrite);

/// Copies every attribute of one object to another (values in their file types).
void copy_attributes(hid_t from, hid_t to);

}  // namespace h5sparse::tool
