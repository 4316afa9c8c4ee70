/* HDF5's close releases the memory our plugins keep between calls (core/kept_memory.hpp): a
 * Blosc write of 48 MiB chunks leaves this thread's spare chunk buffer (HDF5's previous input,
 * kept to receive the next compression), and H5close must give it back. 48 MiB lies above
 * glibc's largest mmap threshold, so a freed buffer leaves the resident set at once.
 *   close_releases_memory FILE   (HDF5_PLUGIN_PATH: the build's plugins) */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_support.h"

#define CHUNK_ELEMENTS (12u << 20) /* float32: 48 MiB */

static long resident_kib(void) {
  FILE *status = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (status != NULL && fgets(line, sizeof line, status) != NULL)
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  if (status != NULL) fclose(status);
  return kib;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "close_releases_memory.h5";
  float *data = malloc(sizeof(float) * CHUNK_ELEMENTS);
  for (unsigned i = 0; i < CHUNK_ELEMENTS; ++i) data[i] = (float)(i % 1000);
  hsize_t dims[1] = {2 * CHUNK_ELEMENTS}, chunk[1] = {CHUNK_ELEMENTS};
  unsigned cd[7] = {0, 0, 0, 0, 5, 1, 1}; /* clevel 5, byte shuffle, lz4 */
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  check(H5Pset_filter(dcpl, 32001, H5Z_FLAG_MANDATORY, 7, cd) >= 0, "cannot set the Blosc filter");
  hid_t dset = H5Dcreate2(file, "d", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  for (hsize_t c = 0; c < 2; ++c) { /* two chunks: the spare buffer is kept after the first */
    hsize_t start[1] = {c * CHUNK_ELEMENTS}, count[1] = {CHUNK_ELEMENTS};
    hid_t mem = H5Screate_simple(1, count, NULL);
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    check(H5Dwrite(dset, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, data) >= 0, "H5Dwrite of chunk %d", (int)c);
    H5Sclose(mem);
  }
  check(mapped("libh5sparse_blosc"), "our Blosc plugin was not loaded");
  H5Dclose(dset);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  free(data);
  const long before = resident_kib();
  H5close();
  const long after = resident_kib();
  printf("resident before H5close %ld KiB, after %ld KiB\n", before, after);
  check(before - after >= 40 * 1024, "H5close gave back %ld KiB, not the 48 MiB spare chunk buffer", before - after);
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
