/* H5Dset_extent, storage queries and H5Ocopy on sparse datasets through the C API and the
 * connector, against a dense model: for each chunk index (v1 B-tree, single chunk, fixed
 * array, extensible array, v2 B-tree, chosen by HDF5 from the library-version low bound and the
 * maximum dimensions) and both allocation times, the sequence write, grow, write, shrink
 * (through a chunk), grow, write gives the model's values and defined set; H5Dget_storage_size
 * is the sum of the stored chunks, H5Dget_space_status counts them, H5Dget_create_plist makes a
 * sparse dataset again, and H5Ocopy (after a read that leaves decoded chunks in HDF5's cache)
 * copies the defined set and values exactly, in the file and into another one. */
#include <stdio.h>
#include <string.h>

#include "h5sparse.h"

static int failures = 0;
static char where[128];
#define CHECK(cond, what)                                                            \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "FAILED line %d [%s]: %s (%s)\n", __LINE__, where, what, #cond); \
      failures++;                                                                    \
    }                                                                                \
  } while (0)

enum { MAXR = 30, MAXC = 25, FILL = -9 };

typedef struct {
  hsize_t dims[2];
  int value[MAXR][MAXC];
  int defined[MAXR][MAXC];
} Model;

typedef struct {
  const char *name;
  hsize_t dims[2], chunk[2], maxdims[2];
  H5D_chunk_index_t index; /* from library version 1.10 on */
} Layout;

static const Layout kLayouts[] = {
    {"single", {12, 10}, {12, 10}, {12, 10}, H5D_CHUNK_IDX_SINGLE},
    {"farray", {13, 11}, {4, 3}, {MAXR, MAXC}, H5D_CHUNK_IDX_FARRAY},
    {"earray", {13, 11}, {4, 3}, {H5S_UNLIMITED, MAXC}, H5D_CHUNK_IDX_EARRAY},
    {"btree2", {13, 11}, {4, 3}, {H5S_UNLIMITED, H5S_UNLIMITED}, H5D_CHUNK_IDX_BT2},
};

static void model_resize(Model *m, const hsize_t dims[2]) {
  for (int r = 0; r < MAXR; r++)
    for (int c = 0; c < MAXC; c++)
      if ((hsize_t)r >= dims[0] || (hsize_t)c >= dims[1]) m->defined[r][c] = 0;
  m->dims[0] = dims[0];
  m->dims[1] = dims[1];
}

/* Writes value r*100+c into the block [r0,r1)x[c0,c1) clipped to the extent, dataset and model. */
static void write_block(hid_t dset, Model *m, hsize_t r0, hsize_t r1, hsize_t c0, hsize_t c1) {
  if (r1 > m->dims[0]) r1 = m->dims[0];
  if (c1 > m->dims[1]) c1 = m->dims[1];
  if (r0 >= r1 || c0 >= c1) return;
  const hsize_t start[2] = {r0, c0}, count[2] = {r1 - r0, c1 - c0};
  int buf[MAXR * MAXC];
  size_t n = 0;
  for (hsize_t r = r0; r < r1; r++)
    for (hsize_t c = c0; c < c1; c++) {
      buf[n++] = (int)(r * 100 + c);
      m->value[r][c] = (int)(r * 100 + c);
      m->defined[r][c] = 1;
    }
  hid_t space = H5Dget_space(dset);
  hid_t mem = H5Screate_simple(2, count, NULL);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  CHECK(H5Dwrite(dset, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, buf) >= 0, "write");
  H5Sclose(mem);
  H5Sclose(space);
}

static void set_extent(hid_t dset, Model *m, hsize_t rows, hsize_t cols) {
  const hsize_t dims[2] = {rows, cols};
  CHECK(H5Dset_extent(dset, dims) >= 0, "set_extent");
  model_resize(m, dims);
}

/* Values (undefined = fill) and the defined set equal the model's. */
static void check_model(hid_t dset, const Model *m) {
  hid_t space = H5Dget_space(dset);
  hsize_t dims[2];
  H5Sget_simple_extent_dims(space, dims, NULL);
  CHECK(dims[0] == m->dims[0] && dims[1] == m->dims[1], "extent");
  static int buf[MAXR * MAXC];
  CHECK(H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "read");
  long expected_defined = 0;
  int values_ok = 1;
  for (hsize_t r = 0; r < dims[0]; r++)
    for (hsize_t c = 0; c < dims[1]; c++) {
      const int want = m->defined[r][c] ? m->value[r][c] : FILL;
      values_ok = values_ok && buf[r * dims[1] + c] == want;
      expected_defined += m->defined[r][c];
    }
  CHECK(values_ok, "values equal the model (undefined read as the fill value)");
  hid_t defined = h5sparse_dget_defined(dset, H5S_ALL, H5P_DEFAULT);
  CHECK(defined >= 0, "get_defined");
  if (defined >= 0) {
    const hssize_t n = H5Sget_select_npoints(defined);
    CHECK(n == expected_defined, "as many defined elements as the model");
    if (n > 0 && H5Sget_select_type(defined) == H5S_SEL_POINTS) {
      static hsize_t coords[MAXR * MAXC * 2];
      H5Sget_select_elem_pointlist(defined, 0, (hsize_t)n, coords);
      int set_ok = 1;
      for (hssize_t i = 0; i < n; i++) set_ok = set_ok && m->defined[coords[2 * i]][coords[2 * i + 1]];
      CHECK(set_ok, "the defined elements are the model's");
    }
    H5Sclose(defined);
  }
  H5Sclose(space);
}

/* Sum of H5Dget_chunk_storage_size over the chunk grid, and the number of stored chunks. */
static hsize_t stored(hid_t dset, const hsize_t chunk[2], hsize_t *nstored, hsize_t *ntotal) {
  hid_t space = H5Dget_space(dset);
  hsize_t dims[2], total = 0;
  H5Sget_simple_extent_dims(space, dims, NULL);
  H5Sclose(space);
  *nstored = *ntotal = 0;
  for (hsize_t r = 0; r < dims[0]; r += chunk[0])
    for (hsize_t c = 0; c < dims[1]; c += chunk[1]) {
      const hsize_t offset[2] = {r, c};
      hsize_t size = 0;
      herr_t rc;
      H5E_BEGIN_TRY { rc = H5Dget_chunk_storage_size(dset, offset, &size); }
      H5E_END_TRY
      if (rc >= 0 && size > 0) {
        total += size;
        (*nstored)++;
      }
      (*ntotal)++;
    }
  return total;
}

static void check_storage(hid_t dset, const hsize_t chunk[2], int early) {
  hsize_t nstored, ntotal;
  const hsize_t total = stored(dset, chunk, &nstored, &ntotal);
  CHECK(H5Dget_storage_size(dset) == total, "H5Dget_storage_size is the sum of the stored chunks");
  H5D_space_status_t status;
  CHECK(H5Dget_space_status(dset, &status) >= 0, "space status");
  const H5D_space_status_t want = nstored == 0        ? H5D_SPACE_STATUS_NOT_ALLOCATED
                                  : nstored == ntotal ? H5D_SPACE_STATUS_ALLOCATED
                                                      : H5D_SPACE_STATUS_PART_ALLOCATED;
  CHECK(status == want, "H5Dget_space_status counts the stored chunks");
  if (early) CHECK(status == H5D_SPACE_STATUS_ALLOCATED, "early allocation stores every chunk");
}

static void copies_stay_sparse(hid_t file, hid_t other, const char *name, const Model *m) {
  hid_t dset = H5Dopen2(file, name, H5P_DEFAULT);
  /* A converting read takes HDF5's own path, which leaves decoded chunks in its cache. */
  static double as_double[MAXR * MAXC];
  CHECK(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, as_double) >= 0, "converting read");
  char copy_name[64];
  snprintf(copy_name, sizeof copy_name, "%s_copy", name);
  CHECK(H5Ocopy(file, name, file, copy_name, H5P_DEFAULT, H5P_DEFAULT) >= 0, "H5Ocopy in the file");
  CHECK(H5Ocopy(file, name, other, name, H5P_DEFAULT, H5P_DEFAULT) >= 0, "H5Ocopy to another file");
  hid_t copies[2] = {H5Dopen2(file, copy_name, H5P_DEFAULT), H5Dopen2(other, name, H5P_DEFAULT)};
  for (int i = 0; i < 2; i++) {
    CHECK(h5sparse_is_sparse(copies[i]) > 0, "the copy is sparse");
    check_model(copies[i], m);
    H5Dclose(copies[i]);
  }
  /* The creation property list makes a sparse dataset again. */
  hid_t dcpl = H5Dget_create_plist(dset);
  CHECK(h5sparse_is_sparse(dcpl) > 0, "the dataset's DCPL describes a sparse layout");
  hid_t space = H5Dget_space(dset);
  snprintf(copy_name, sizeof copy_name, "%s_from_dcpl", name);
  hid_t again = H5Dcreate2(file, copy_name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(h5sparse_is_sparse(again) > 0, "a dataset made from the DCPL is sparse");
  const hsize_t point[2] = {0, 0};
  const int one = 1;
  hid_t mem = H5Screate(H5S_SCALAR);
  H5Sselect_elements(space, H5S_SELECT_SET, 1, point);
  CHECK(H5Dwrite(again, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, &one) >= 0, "write one element");
  hid_t defined = h5sparse_dget_defined(again, H5S_ALL, H5P_DEFAULT);
  CHECK(defined >= 0 && H5Sget_select_npoints(defined) == 1, "only the written element is defined");
  if (defined >= 0) H5Sclose(defined);
  H5Sclose(mem);
  H5Sclose(space);
  H5Dclose(again);
  H5Pclose(dcpl);
  H5Dclose(dset);
}

static void run(const char *dir, H5F_libver_t low, const Layout *layout, H5D_alloc_time_t alloc) {
  static const char *const kLibvers[] = {"earliest", "v18", "v110", "v112", "v114"};
  snprintf(where, sizeof where, "%s, %s, %s", layout->name, kLibvers[low],
           alloc == H5D_ALLOC_TIME_EARLY ? "early" : "late");
  char path[512], other_path[512];
  snprintf(path, sizeof path, "%s/extent_%s_%d_%d.h5", dir, layout->name, (int)low, (int)alloc);
  snprintf(other_path, sizeof other_path, "%s/extent_%s_%d_%d_copy.h5", dir, layout->name, (int)low, (int)alloc);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, low, H5F_LIBVER_LATEST);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hid_t other = H5Fcreate(other_path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  h5sparse_pset_sparse_chunk(dcpl, 2, layout->chunk);
  const unsigned level = 4;
  h5sparse_pset_section_filter(dcpl, H5SPARSE_SECTION_VALUES, H5Z_FILTER_DEFLATE, 0, 1, &level);
  const int fill = FILL;
  H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
  H5Pset_alloc_time(dcpl, alloc);
  hid_t space = H5Screate_simple(2, layout->dims, layout->maxdims);
  hid_t dset = H5Dcreate2(file, "d", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(dset >= 0 && h5sparse_is_sparse(dset) > 0, "sparse dataset created");
  H5D_chunk_index_t index;
  CHECK(H5Dget_chunk_index_type(dset, &index) >= 0, "chunk index type");
  CHECK(index == (low < H5F_LIBVER_V110 ? H5D_CHUNK_IDX_BTREE : layout->index), "HDF5 picked the expected index");

  static Model m;
  memset(&m, 0, sizeof m);
  m.dims[0] = layout->dims[0];
  m.dims[1] = layout->dims[1];
  const int single = layout->maxdims[0] == layout->dims[0] && layout->maxdims[1] == layout->dims[1];
  const hsize_t grow[2] = {single ? layout->dims[0] : 20, single ? layout->dims[1] : 17};
  check_model(dset, &m);
  check_storage(dset, layout->chunk, alloc == H5D_ALLOC_TIME_EARLY);
  write_block(dset, &m, 1, 9, 2, 9);
  set_extent(dset, &m, grow[0], grow[1]);
  write_block(dset, &m, 10, 18, 6, 16);
  check_model(dset, &m);
  check_storage(dset, layout->chunk, alloc == H5D_ALLOC_TIME_EARLY);
  set_extent(dset, &m, 6, 5); /* through chunks: rows 6-7 and column 5 of their chunks are cut */
  check_model(dset, &m);
  set_extent(dset, &m, grow[0], grow[1]);
  write_block(dset, &m, grow[0] - 1, grow[0], grow[1] - 1, grow[1]);
  check_model(dset, &m);
  check_storage(dset, layout->chunk, alloc == H5D_ALLOC_TIME_EARLY);
  H5Dclose(dset);
  copies_stay_sparse(file, other, "d", &m);

  H5Sclose(space);
  H5Pclose(dcpl);
  H5Fclose(other);
  H5Fclose(file);
  /* Reopened: still the model. */
  file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  dset = H5Dopen2(file, "d", H5P_DEFAULT);
  check_model(dset, &m);
  H5Dclose(dset);
  H5Fclose(file);
  H5Pclose(fapl);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  const H5F_libver_t lows[] = {H5F_LIBVER_EARLIEST, H5F_LIBVER_V18, H5F_LIBVER_V110, H5F_LIBVER_V112,
                               H5F_LIBVER_V114};
  for (size_t l = 0; l < sizeof kLayouts / sizeof kLayouts[0]; l++)
    for (size_t v = 0; v < sizeof lows / sizeof lows[0]; v++) {
      run(dir, lows[v], &kLayouts[l], H5D_ALLOC_TIME_EARLY);
      run(dir, lows[v], &kLayouts[l], H5D_ALLOC_TIME_LATE);
    }
  const ssize_t open_ids = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  CHECK(open_ids == 0, "no identifiers left open");
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("extent_storage: all checks passed\n");
  return failures ? 1 : 0;
}
