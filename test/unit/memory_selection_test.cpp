// hdf5_support's memory_selection: the memory side of a transfer, on dataspaces alone.
#include "memory_selection.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

using namespace h5sparse;
using hdf5::checked;
using hdf5::Handle;

namespace {

Handle space_of(hsize_t n) { return checked(H5Screate_simple(1, &n, nullptr), "dataspace"); }

void select(hid_t space, hsize_t start, hsize_t stride, hsize_t count) {
  ASSERT_GE(H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, &stride, &count, nullptr), 0);
}

}  // namespace

TEST(MemorySelection, ValuesInTheFileTypeAreTheBufferItselfWhenTheyCanBe) {
  const std::int32_t buf[] = {1, 2, 3, 4};
  Handle all = space_of(4);
  Bytes storage;
  EXPECT_EQ(hdf5::values_in_file_type(H5T_NATIVE_INT32, all.get(), 4, H5T_NATIVE_INT32, {}, H5P_DATASET_XFER_DEFAULT,
                                      buf, storage),
            reinterpret_cast<const std::uint8_t*>(buf));
  EXPECT_TRUE(storage.empty());
}

TEST(MemorySelection, ValuesAreGatheredAndConverted) {
  const std::int32_t buf[] = {10, -1, 20, -1, 30, -1};
  Handle space = space_of(6);
  select(space.get(), 0, 2, 3);
  Bytes storage;
  const std::uint8_t* values = hdf5::values_in_file_type(H5T_NATIVE_INT32, space.get(), 3, H5T_NATIVE_INT64, {},
                                                         H5P_DATASET_XFER_DEFAULT, buf, storage);
  std::int64_t got[3];
  std::memcpy(got, values, sizeof got);
  EXPECT_EQ(got[0], 10);
  EXPECT_EQ(got[1], 20);
  EXPECT_EQ(got[2], 30);
}

TEST(MemorySelection, OneRunIsWrittenInPlaceOthersAreScattered) {
  std::int32_t buf[6] = {};
  Handle run = space_of(6);
  select(run.get(), 2, 1, 3);
  hdf5::MemoryDestination in_place(run.get(), 4, 3, buf);
  EXPECT_TRUE(in_place.in_place());
  EXPECT_EQ(in_place.data(), reinterpret_cast<std::uint8_t*>(buf + 2));

  Handle strided = space_of(6);
  select(strided.get(), 1, 2, 3);
  hdf5::MemoryDestination staged(strided.get(), 4, 3, buf);
  ASSERT_FALSE(staged.in_place());
  const std::int32_t values[] = {7, 8, 9};
  std::memcpy(staged.data(), values, sizeof values);
  staged.finish();
  EXPECT_EQ((std::vector<std::int32_t>(buf, buf + 6)), (std::vector<std::int32_t>{0, 7, 0, 8, 0, 9}));
}
