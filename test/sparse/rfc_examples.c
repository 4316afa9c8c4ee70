/* The Lifeboat RFC's programming-model examples, translated to the h5sparse C API, run through
 * the connector (also in the ASan+UBSan build). Each CHECK names what the RFC says happens.
 *
 *  1. An 8x10 matrix in 4x5 chunks (the last chunks have ghost zones); the upper-left chunk
 *     holds a [2,2]-[3,4] hyperslab with 66 69 72 96 99 102, the lower-right chunk the value 3.
 *  2. Create: sparse chunk layout + a filter on both sections (H5Pset_deflate's meaning) and a
 *     different one per section (H5Pset_filter2's meaning); write a selection; close.
 *  3. Read: open, get the defined elements in a bounding box, count them, read them; undefined
 *     elements read as the fill value.
 *  4. Erase: erased elements read as the fill value and leave the defined set.
 *  5. Datatype conversion: int32 in memory, big-endian int64 in the file; point selections;
 *     memory and file shapes that differ.
 *  6. Dense datasets: get-defined returns the selection; erase fails. No identifiers leak. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5sparse.h"

static int failures = 0;
#define CHECK(cond, what)                                              \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "FAILED line %d: %s (%s)\n", __LINE__, what, #cond); \
      failures++;                                                      \
    }                                                                  \
  } while (0)

enum { ROWS = 8, COLS = 10, FILL = -1 };

static hid_t make_dcpl(int per_section) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk[2] = {4, 5};
  CHECK(h5sparse_pset_sparse_chunk(dcpl, 2, chunk) >= 0, "sparse chunk layout accepted");
  int fill = FILL;
  H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
  const unsigned level = 9;
  if (per_section) {
    CHECK(h5sparse_pset_section_filter(dcpl, H5SPARSE_SECTION_SELECTION, H5Z_FILTER_DEFLATE, 0, 1, &level) >= 0,
          "deflate on the encoded selection");
    const unsigned blosc[7] = {0, 0, 0, 0, 5, 1, 5}; /* zstd, byte shuffle */
    CHECK(h5sparse_pset_section_filter(dcpl, H5SPARSE_SECTION_VALUES, 32001, H5Z_FLAG_OPTIONAL, 7, blosc) >= 0,
          "blosc on the values");
  } else {
    for (unsigned s = 0; s < 2; s++)
      CHECK(h5sparse_pset_section_filter(dcpl, s, H5Z_FILTER_DEFLATE, 0, 1, &level) >= 0, "deflate on each section");
  }
  return dcpl;
}

static void write_example(hid_t file, const char *name, int per_section) {
  hid_t dcpl = make_dcpl(per_section);
  const hsize_t dims[2] = {ROWS, COLS};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dset = H5Dcreate2(file, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(dset >= 0, "sparse dataset created");
  /* Upper-left chunk: [2,2]-[3,4]. */
  const hsize_t start[2] = {2, 2}, count[2] = {2, 3};
  const int block[6] = {66, 69, 72, 96, 99, 102};
  hid_t mem = H5Screate_simple(2, count, NULL);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  CHECK(H5Dwrite(dset, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, block) >= 0, "hyperslab written");
  /* Lower-right chunk (a ghost-zone chunk): one point, from a 1-element memory space. */
  const hsize_t point[2] = {7, 9}, one = 1;
  const int three = 3;
  hid_t mem1 = H5Screate_simple(1, &one, NULL);
  H5Sselect_elements(space, H5S_SELECT_SET, 1, point);
  CHECK(H5Dwrite(dset, H5T_NATIVE_INT, mem1, space, H5P_DEFAULT, &three) >= 0, "point written");
  H5Sclose(mem1);
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(dset);
  H5Pclose(dcpl);
}

static void read_example(hid_t file, const char *name) {
  hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  CHECK(h5sparse_is_sparse(dset) > 0, "the dataset reports a sparse layout");
  CHECK(h5sparse_pget_section_nfilters(dset, 0) == 1, "section 0 pipeline kept");
  /* Defined elements in the bounding box of the upper-left chunk. */
  hid_t space = H5Dget_space(dset);
  const hsize_t box_start[2] = {0, 0}, box_count[2] = {4, 5};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, box_start, NULL, box_count, NULL);
  hid_t defined = h5sparse_dget_defined(dset, space, H5P_DEFAULT);
  CHECK(defined >= 0, "get-defined succeeds");
  CHECK(H5Sget_select_npoints(defined) == 6, "six elements defined in the upper-left chunk");
  int values[6] = {0};
  const hsize_t six = 6;
  hid_t mem = H5Screate_simple(1, &six, NULL);
  CHECK(H5Dread(dset, H5T_NATIVE_INT, mem, defined, H5P_DEFAULT, values) >= 0, "defined elements read");
  const int expected[6] = {66, 69, 72, 96, 99, 102};
  CHECK(memcmp(values, expected, sizeof values) == 0, "values of the defined elements in row-major order");
  H5Sclose(mem);
  H5Sclose(defined);
  /* Whole dataset: 7 defined, the rest reads as the fill value. */
  defined = h5sparse_dget_defined(dset, H5S_ALL, H5P_DEFAULT);
  CHECK(H5Sget_select_npoints(defined) == 7, "seven elements defined in all");
  H5Sclose(defined);
  int all[ROWS][COLS];
  CHECK(H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0, "whole dataset read");
  CHECK(all[0][0] == FILL && all[2][1] == FILL && all[7][8] == FILL, "undefined elements read as fill");
  CHECK(all[3][4] == 102 && all[7][9] == 3, "defined elements read back");
  /* Erase the middle of the hyperslab and the point. */
  const hsize_t erase_start[2] = {2, 3}, erase_count[2] = {2, 1};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, erase_start, NULL, erase_count, NULL);
  CHECK(h5sparse_derase(dset, space, H5P_DEFAULT) >= 0, "erase succeeds");
  const hsize_t point[2] = {7, 9};
  H5Sselect_elements(space, H5S_SELECT_SET, 1, point);
  CHECK(h5sparse_derase(dset, space, H5P_DEFAULT) >= 0, "erase of a point succeeds");
  defined = h5sparse_dget_defined(dset, H5S_ALL, H5P_DEFAULT);
  CHECK(H5Sget_select_npoints(defined) == 4, "four elements stay defined");
  H5Sclose(defined);
  CHECK(H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0, "read after erase");
  CHECK(all[2][3] == FILL && all[3][3] == FILL && all[7][9] == FILL, "erased elements read as fill");
  CHECK(all[2][2] == 66 && all[3][4] == 102, "other elements untouched");
  H5Sclose(space);
  H5Dclose(dset);
}

static void conversion_example(hid_t file) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk[1] = {16}, dims[1] = {100};
  h5sparse_pset_sparse_chunk(dcpl, 1, chunk);
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dset = H5Dcreate2(file, "converted", H5T_STD_I64BE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  /* Points in decreasing order, from a 2x2 memory block: pairing follows selection order. */
  const hsize_t points[4] = {90, 40, 17, 3}, mdims[2] = {2, 2};
  const int data[4] = {-5, 1000000, 7, -2147483647};
  hid_t mem = H5Screate_simple(2, mdims, NULL);
  H5Sselect_elements(space, H5S_SELECT_SET, 4, points);
  CHECK(H5Dwrite(dset, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, data) >= 0, "int32 -> int64 BE write");
  long long back[100];
  CHECK(H5Dread(dset, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "read as native int64");
  CHECK(back[90] == -5 && back[40] == 1000000 && back[17] == 7 && back[3] == -2147483647, "converted values");
  CHECK(back[0] == 0 && back[99] == 0, "default fill value is zero");
  /* Mismatched selection sizes are refused. */
  const hsize_t three = 3;
  hid_t mem3 = H5Screate_simple(1, &three, NULL);
  herr_t rc;
  H5E_BEGIN_TRY { rc = H5Dwrite(dset, H5T_NATIVE_INT, mem3, space, H5P_DEFAULT, data); }
  H5E_END_TRY
  CHECK(rc < 0, "a 3-element memory selection against 4 file points fails");
  H5Sclose(mem3);
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(dset);
  H5Pclose(dcpl);
}

/* An irregular hyperslab (union of blocks, one of them strided) written from a 1-D buffer. */
static void irregular_example(hid_t file) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk[2] = {3, 7}, dims[2] = {20, 30};
  h5sparse_pset_sparse_chunk(dcpl, 2, chunk);
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dset = H5Dcreate2(file, "irregular", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  const hsize_t s1[2] = {1, 1}, c1[2] = {4, 5}, s2[2] = {10, 2}, st2[2] = {3, 4}, c2[2] = {3, 6};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, s1, NULL, c1, NULL);
  H5Sselect_hyperslab(space, H5S_SELECT_OR, s2, st2, c2, NULL);
  const hssize_t n = H5Sget_select_npoints(space);
  CHECK(n == 4 * 5 + 3 * 6, "union of a block and a strided hyperslab");
  double values[38];
  for (int i = 0; i < 38; i++) values[i] = i + 0.5;
  const hsize_t mdims = (hsize_t)n;
  hid_t mem = H5Screate_simple(1, &mdims, NULL);
  CHECK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, values) >= 0, "irregular write, float64 -> float32");
  hid_t defined = h5sparse_dget_defined(dset, H5S_ALL, H5P_DEFAULT);
  CHECK(H5Sget_select_npoints(defined) == n, "exactly the irregular selection is defined");
  float all[20][30];
  H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all);
  CHECK(all[1][1] == 0.5f && all[4][5] == 19.5f, "block values in row-major order");
  CHECK(all[10][2] == 20.5f && all[10][6] == 21.5f && all[16][22] == 37.5f, "strided block values");
  CHECK(all[0][0] == 0.0f && all[11][2] == 0.0f && all[10][3] == 0.0f, "gaps stay undefined");
  H5Sclose(defined);
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(dset);
  H5Pclose(dcpl);
}

static void dense_example(hid_t file) {
  const hsize_t dims[1] = {10};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dset = H5Dcreate2(file, "dense", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t start = 2, count = 5;
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL);
  hid_t defined = h5sparse_dget_defined(dset, space, H5P_DEFAULT);
  CHECK(defined >= 0 && H5Sget_select_npoints(defined) == 5, "dense: get-defined returns the selection");
  if (defined >= 0) H5Sclose(defined);
  herr_t rc;
  H5E_BEGIN_TRY { rc = h5sparse_derase(dset, space, H5P_DEFAULT); }
  H5E_END_TRY
  CHECK(rc < 0, "dense: erase is an error");
  H5Sclose(space);
  H5Dclose(dset);
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "rfc_examples.h5";
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  char version[64] = "";
  CHECK(h5sparse_connector_version(file, version, sizeof version) >= 0, "the h5sparse connector is in use");
  write_example(file, "matrix", 0);
  write_example(file, "matrix_per_section", 1);
  conversion_example(file);
  irregular_example(file);
  dense_example(file);
  H5Fclose(file);
  file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  read_example(file, "matrix");
  read_example(file, "matrix_per_section");
  CHECK(H5Fget_obj_count(file, H5F_OBJ_ALL) == 1, "only the file itself is open");
  H5Fclose(file);
  CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0, "no identifiers leaked");
  printf("%s: %d failures (%s)\n", failures ? "FAILED" : "passed", failures, version);
  return failures ? 1 : 0;
}
