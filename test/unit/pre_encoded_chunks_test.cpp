// The hook of the parallel write (filters/pre_encoded_chunks.hpp): a copy of the
// structured-chunk filter class replaces the plugin's for one scope only.
#include "pre_encoded_chunks.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <vector>

#include "h5sparse/error.hpp"

namespace h5sparse::hdf5 {
namespace {

constexpr H5Z_filter_t kStructuredChunk = 45100;

int spy_calls = 0;
// Counts the chunks HDF5 hands it and stores them unchanged.
std::size_t spy(unsigned, std::size_t, const unsigned*, std::size_t nbytes, std::size_t*, void**) {
  ++spy_calls;
  return nbytes;
}
const H5Z_class2_t kSpyClass = {H5Z_CLASS_T_VERS, kStructuredChunk, 1, 1, "spy", nullptr, nullptr, spy};

// A 1-D int dataset of two chunks of 8 with the structured-chunk filter, in an in-memory file.
struct TwoChunkDataset {
  hid_t file, dataset;
  TwoChunkDataset() {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 1 << 16, false);
    file = H5Fcreate("pre_encoded_chunks_test.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    const hsize_t dims = 16, chunk = 8;
    hid_t space = H5Screate_simple(1, &dims, nullptr);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    H5Pset_filter(dcpl, kStructuredChunk, H5Z_FLAG_OPTIONAL, 0, nullptr);  // loads the plugin
    dataset = H5Dcreate2(file, "d", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Pclose(dcpl);
    H5Sclose(space);
  }
  ~TwoChunkDataset() {
    H5Dclose(dataset);
    H5Fclose(file);
  }
  /// Writes `values` into chunk `index` and flushes it through the filter.
  herr_t write_chunk(int index, const std::vector<int>& values) const {
    const hsize_t start = hsize_t(index) * 8, count = 8;
    hid_t file_space = H5Dget_space(dataset);
    hid_t mem_space = H5Screate_simple(1, &count, nullptr);
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &count, nullptr);
    herr_t rc = H5Dwrite(dataset, H5T_NATIVE_INT, mem_space, file_space, H5P_DEFAULT, values.data());
    if (rc >= 0) rc = H5Dflush(dataset);
    H5Sclose(mem_space);
    H5Sclose(file_space);
    return rc;
  }
  std::vector<int> read_chunk(int index) const {
    std::vector<int> values(8, -1);
    const hsize_t start = hsize_t(index) * 8, count = 8;
    hid_t file_space = H5Dget_space(dataset);
    hid_t mem_space = H5Screate_simple(1, &count, nullptr);
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &count, nullptr);
    EXPECT_GE(H5Dread(dataset, H5T_NATIVE_INT, mem_space, file_space, H5P_DEFAULT, values.data()), 0);
    H5Sclose(mem_space);
    H5Sclose(file_space);
    return values;
  }
};

TEST(StructuredChunkClassOverride, ReplacesThePluginsClassForItsScopeOnly) {
  TwoChunkDataset d;
  ASSERT_GE(d.dataset, 0) << "the structured-chunk plugin must be on HDF5_PLUGIN_PATH";
  spy_calls = 0;
  {
    StructuredChunkClassOverride override(&kSpyClass);
    ASSERT_GE(d.write_chunk(0, {1, 2, 3, 4, 5, 6, 7, 8}), 0);
    EXPECT_EQ(spy_calls, 1);
  }
  // The plugin's class again: it encodes the chunk and decodes it on the way back.
  const std::vector<int> values = {9, 10, 11, 12, 13, 14, 15, 16};
  ASSERT_GE(d.write_chunk(1, values), 0);
  EXPECT_EQ(spy_calls, 1);
  EXPECT_EQ(d.read_chunk(1), values);
}

TEST(StructuredChunkClassOverride, FindsTheClassOfTheLoadedPluginOnly) {
  TwoChunkDataset d;  // loads the plugin
  const H5Z_class2_t* plugin = loaded_plugin_filter_class(kStructuredChunk);
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->id, kStructuredChunk);
  EXPECT_NE(plugin, &kSpyClass);
  EXPECT_EQ(loaded_plugin_filter_class(32767), nullptr);  // no loaded plugin provides it
}

}  // namespace
}  // namespace h5sparse::hdf5
