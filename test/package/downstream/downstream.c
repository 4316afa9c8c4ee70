/* A downstream program of an installed h5sparse (built by test_installed.py through the CMake
 * package and through pkg-config): writes three elements of a sparse dataset through the
 * connector, then reads back which elements are defined and their values. Needs the install's
 * plugin environment (h5plugin-config --env). Usage: downstream FILE; exit 0 when all is well. */
#include <stdio.h>

#include "h5sparse.h"

#define FAIL_IF(cond, what)                               \
  do {                                                    \
    if (cond) {                                           \
      fprintf(stderr, "downstream: %s failed\n", what);   \
      return 1;                                           \
    }                                                     \
  } while (0)

static int write_points(hid_t file, const hsize_t points[3][2], const float values[3]) {
  const hsize_t dims[2] = {100, 100}, chunk[2] = {10, 10}, n = 3;
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  FAIL_IF(h5sparse_pset_sparse_chunk(dcpl, 2, chunk) < 0, "h5sparse_pset_sparse_chunk");
  hid_t space = H5Screate_simple(2, dims, NULL), mem = H5Screate_simple(1, &n, NULL);
  hid_t dset = H5Dcreate2(file, "x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  FAIL_IF(dset < 0, "H5Dcreate2");
  H5Sselect_elements(space, H5S_SELECT_SET, 3, &points[0][0]);
  FAIL_IF(H5Dwrite(dset, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, values) < 0, "H5Dwrite");
  H5Dclose(dset);
  H5Sclose(mem);
  H5Sclose(space);
  H5Pclose(dcpl);
  return 0;
}

static int read_points(hid_t file, const float values[3]) {
  hid_t dset = H5Dopen2(file, "x", H5P_DEFAULT);
  FAIL_IF(h5sparse_is_sparse(dset) <= 0, "h5sparse_is_sparse");
  hid_t defined = h5sparse_dget_defined(dset, H5S_ALL, H5P_DEFAULT);
  FAIL_IF(defined < 0 || H5Sget_select_npoints(defined) != 3, "h5sparse_dget_defined (3 elements)");
  float back[3] = {0, 0, 0};
  const hsize_t n = 3;
  hid_t mem = H5Screate_simple(1, &n, NULL);
  FAIL_IF(H5Dread(dset, H5T_NATIVE_FLOAT, mem, defined, H5P_DEFAULT, back) < 0, "H5Dread");
  for (int i = 0; i < 3; i++) FAIL_IF(back[i] != values[i], "reading the values back");
  H5Sclose(mem);
  H5Sclose(defined);
  H5Dclose(dset);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  const hsize_t points[3][2] = {{1, 2}, {50, 50}, {99, 0}};
  const float values[3] = {1.5f, -2.0f, 3.25f};
  hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  FAIL_IF(file < 0, "H5Fcreate");
  if (write_points(file, points, values)) return 1;
  char version[64] = "";
  FAIL_IF(h5sparse_connector_version(file, version, sizeof version) < 0, "h5sparse_connector_version");
  H5Fclose(file);
  file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  if (read_points(file, values)) return 1;
  H5Fclose(file);
  printf("%s: 3 elements written and read back\n", version);
  return 0;
}
