// The few attribute reads and writes the store's file header needs (root group attributes,
// after Hangar's: schema_shape, schema_dtype_num, next_location, ...).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hangar::attributes {

void write_ints(hid_t loc, const char* name, const std::vector<std::int64_t>& values);
void write_double(hid_t loc, const char* name, double value);
void write_string(hid_t loc, const char* name, const std::string& value);
/// Overwrites an existing integer attribute of the same length (allowed while SWMR-writing).
void modify_ints(hid_t loc, const char* name, const std::vector<std::int64_t>& values);

std::vector<std::int64_t> read_ints(hid_t loc, const char* name);
std::string read_string(hid_t loc, const char* name);

}  // namespace hangar::attributes
