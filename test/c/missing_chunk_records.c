/* The records HDF5 leaves when H5Dget_chunk_storage_size is asked for a chunk that is not
 * stored: the connector reads "no chunk" from them on every write of a new chunk (one index
 * probe; the public alternative, chunk info by coordinate, walks the whole index). This test
 * pins that assumption on each supported HDF5: it fails loudly on one that words them
 * otherwise (the connector then falls back to the slow public query, see native_dataset.cpp).
 *
 *   missing_chunk_records FILE
 * Cases: a chunk never written (no index yet, and beside a stored chunk), and a chunk the cache
 * holds clean after a read of it (an entry with no address). A stored chunk answers its size. */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

static const char *innermost_func, *innermost_desc;

static herr_t innermost(unsigned n, const H5E_error2_t *err, void *data) {
  (void)data;
  if (n == 0) {
    innermost_func = err->func_name ? strdup(err->func_name) : "";
    innermost_desc = err->desc ? strdup(err->desc) : "";
  }
  return 0;
}

/* A missing chunk: the query answers size 0, or fails with one of the records the connector
 * reads as "no chunk" (HDF5 1.14 and 2.2 word the clean-cache case differently). */
static void expect_missing(hid_t dset, hsize_t row, const char *what) {
  /* 0 first, as the connector does: before the first chunk HDF5 succeeds without writing it. */
  hsize_t offset[2] = {row, 0}, size = 0;
  herr_t rc;
  H5E_BEGIN_TRY { rc = H5Dget_chunk_storage_size(dset, offset, &size); }
  H5E_END_TRY
  innermost_func = innermost_desc = "";
  if (rc < 0) H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, NULL);
  printf("%s: rc %d, size %llu, innermost record %s(): %s\n", what, (int)rc, (unsigned long long)size,
         innermost_func, innermost_desc);
  if (rc >= 0) {
    check(size == 0, "%s: a missing chunk has size %llu", what, (unsigned long long)size);
  } else {
    check(strcmp(innermost_func, "H5D__get_chunk_storage_size") == 0 &&
              (strcmp(innermost_desc, "chunk storage is not allocated") == 0 ||
               strcmp(innermost_desc, "chunk address isn't defined") == 0),
          "%s: innermost record is %s(): '%s', not one the connector reads as 'no chunk' "
          "(H5D__get_chunk_storage_size(): 'chunk storage is not allocated' or 'chunk address isn't defined')",
          what, innermost_func, innermost_desc);
  }
  H5Eclear2(H5E_DEFAULT);
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "missing_chunk_records.h5";
  printf("HDF5 %d.%d.%d\n", H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[2] = {40, 10}, chunk[2] = {10, 10};
  hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_deflate(dcpl, 1); /* filtered, like every sparse dataset */
  hid_t dset = H5Dcreate2(file, "d", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(file >= 0 && dset >= 0, "cannot create %s", path);

  expect_missing(dset, 0, "no chunk stored yet");

  int values[100];
  for (int i = 0; i < 100; ++i) values[i] = i;
  hsize_t start[2] = {10, 0}, count[2] = {10, 10};
  hid_t mem = H5Screate_simple(2, count, NULL);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  check(H5Dwrite(dset, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, values) >= 0, "write chunk 1");
  H5Dflush(dset);
  expect_missing(dset, 0, "beside a stored chunk");
  hsize_t offset[2] = {0, 0}, size = 99;
  herr_t rc;
  H5E_BEGIN_TRY { rc = H5Dget_chunk_storage_size(dset, offset, &size); }
  H5E_END_TRY
  H5Eclear2(H5E_DEFAULT);
  check(rc < 0, "beside a stored chunk: the query of a missing chunk no longer fails: the connector's probe is "
                "then the query alone (simplify stored_chunk_size)");

  start[0] = 20; /* read a missing chunk: the cache keeps a clean entry with no address */
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  check(H5Dread(dset, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, values) >= 0, "read chunk 2");
  expect_missing(dset, 20, "clean cache entry of a missing chunk");

  offset[0] = 10;
  check(H5Dget_chunk_storage_size(dset, offset, &size) >= 0 && size > 0, "stored chunk: size %llu",
        (unsigned long long)size);

  H5Sclose(mem);
  H5Dclose(dset);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  printf("%d checks, %d failed\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
