/* Append benchmark: 1,000,000 scattered elements in 1,000 writes to a dataset with an
 * unlimited first dimension, sparse (through the h5sparse connector) against dense chunked,
 * in one run. Each write grows the dataset by 16 rows of 1,024 float32 and writes 1,000
 * distinct random elements of those rows (6.1% of them) with one point selection, in random
 * order; chunks are 64 x 1,024, so four writes share a chunk. Configurations: no compression
 * and deflate level 1 (dense: the dataset's pipeline; sparse: both sections); "plain" (file
 * closed at the end) and "swmr" (latest format, SWMR-write mode, H5Dflush after every write,
 * as a writer that readers follow). Time = create + 1,000 writes + close, best of REPS
 * repetitions run in rounds; size = the file's final size. After each run the dataset is read
 * back and compared with what was written (sparse and dense must agree).
 *
 *   scripts/dev run build/bin/append_bench DIR [REPS [ONLY]]   # DIR: a scratch directory
 *
 * ONLY (e.g. "sparse/none/plain", for a profiler) runs the configurations whose
 * "layout/compression/mode" name contains it and prints their times only.
 *
 * Needs HDF5_VOL_CONNECTOR (scripts/dev run sets it); prints a Markdown table. */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../bench_support.h"
#include "h5sparse.h"

enum { WRITES = 1000, PER_WRITE = 1000, ROWS_PER_WRITE = 16, WIDTH = 1024, CHUNK_ROWS = 64 };

/* Write w's points (row, column pairs) and values: distinct, in random order, never 0. */
static void make_write(unsigned w, hsize_t *coords, float *values) {
  static unsigned char taken[ROWS_PER_WRITE * WIDTH];
  memset(taken, 0, sizeof taken);
  uint64_t state = 0xA99E4Dull + w;
  for (int i = 0; i < PER_WRITE;) {
    const unsigned k = (unsigned)(bench_splitmix64(&state) % (ROWS_PER_WRITE * WIDTH));
    if (taken[k]) continue;
    taken[k] = 1;
    coords[2 * i] = (hsize_t)w * ROWS_PER_WRITE + k / WIDTH;
    coords[2 * i + 1] = k % WIDTH;
    values[i] = 1.0f + (float)(bench_splitmix64(&state) % 1000000) / 7.0f;
    i++;
  }
}

typedef struct {
  const char *layout, *compression, *mode;
  int sparse, deflate, swmr;
  double best;
  long long size;
} Config;

static int run(Config *c, const char *path) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (c->swmr) H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk[2] = {CHUNK_ROWS, WIDTH};
  const unsigned level = 1;
  if (c->sparse) {
    h5sparse_pset_sparse_chunk(dcpl, 2, chunk);
    if (c->deflate)
      for (unsigned s = 0; s < 2; s++) h5sparse_pset_section_filter(dcpl, s, H5Z_FILTER_DEFLATE, 0, 1, &level);
  } else {
    H5Pset_chunk(dcpl, 2, chunk);
    if (c->deflate) H5Pset_deflate(dcpl, level);
  }
  const float zero = 0;
  H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &zero);
  hsize_t dims[2] = {0, WIDTH};
  const hsize_t maxdims[2] = {H5S_UNLIMITED, WIDTH};
  static hsize_t coords[2 * PER_WRITE];
  static float values[PER_WRITE];
  const hsize_t n = PER_WRITE;

  const double t0 = bench_now();
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hid_t space = H5Screate_simple(2, dims, maxdims);
  hid_t dset = H5Dcreate2(file, "x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Sclose(space);
  if (dset < 0 || (c->swmr && H5Fstart_swmr_write(file) < 0)) return -1;
  hid_t mem = H5Screate_simple(1, &n, NULL);
  for (unsigned w = 0; w < WRITES; w++) {
    make_write(w, coords, values);
    dims[0] += ROWS_PER_WRITE;
    if (H5Dset_extent(dset, dims) < 0) return -1;
    hid_t fspace = H5Dget_space(dset);
    H5Sselect_elements(fspace, H5S_SELECT_SET, PER_WRITE, coords);
    if (H5Dwrite(dset, H5T_NATIVE_FLOAT, mem, fspace, H5P_DEFAULT, values) < 0) return -1;
    H5Sclose(fspace);
    if (c->swmr && H5Dflush(dset) < 0) return -1;
  }
  H5Sclose(mem);
  if (H5Dclose(dset) < 0 || H5Fclose(file) < 0) return -1;
  const double elapsed = bench_now() - t0;
  H5Pclose(dcpl);
  H5Pclose(fapl);
  if (c->best == 0 || elapsed < c->best) c->best = elapsed;
  struct stat st;
  c->size = stat(path, &st) == 0 ? (long long)st.st_size : -1;

  /* Read back: every written value where it was written, 0 elsewhere. */
  file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  dset = H5Dopen2(file, "x", H5P_DEFAULT);
  const size_t total = (size_t)WRITES * ROWS_PER_WRITE * WIDTH;
  float *all = malloc(total * sizeof(float));
  float *expected = calloc(total, sizeof(float));
  int ok = H5Dread(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0;
  for (unsigned w = 0; w < WRITES; w++) {
    make_write(w, coords, values);
    for (int i = 0; i < PER_WRITE; i++) expected[coords[2 * i] * WIDTH + coords[2 * i + 1]] = values[i];
  }
  ok = ok && memcmp(all, expected, total * sizeof(float)) == 0;
  free(all);
  free(expected);
  H5Dclose(dset);
  H5Fclose(file);
  return ok ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: append_bench DIR [REPS]\n");
    return 2;
  }
  const int reps = argc > 2 ? atoi(argv[2]) : 3;
  Config configs[] = {
      {"sparse", "none", "plain", 1, 0, 0, 0, 0},  {"dense", "none", "plain", 0, 0, 0, 0, 0},
      {"sparse", "deflate 1", "plain", 1, 1, 0, 0, 0}, {"dense", "deflate 1", "plain", 0, 1, 0, 0, 0},
      {"sparse", "none", "swmr", 1, 0, 1, 0, 0},   {"dense", "none", "swmr", 0, 0, 1, 0, 0},
      {"sparse", "deflate 1", "swmr", 1, 1, 1, 0, 0},  {"dense", "deflate 1", "swmr", 0, 1, 1, 0, 0},
  };
  const int nconfigs = (int)(sizeof configs / sizeof configs[0]);
  char path[4096];
  snprintf(path, sizeof path, "%s/append_bench.h5", argv[1]);
  const char *only = argc > 3 ? argv[3] : NULL;
  H5open();
  for (int r = 0; r < reps; r++)
    for (int i = 0; i < nconfigs; i++) {
      char name[128];
      snprintf(name, sizeof name, "%s/%s/%s", configs[i].layout, configs[i].compression, configs[i].mode);
      if (only != NULL && strstr(name, only) == NULL) continue;
      if (run(&configs[i], path) < 0) {
        fprintf(stderr, "%s/%s/%s failed or read back wrong data\n", configs[i].layout, configs[i].compression,
                configs[i].mode);
        H5Eprint2(H5E_DEFAULT, stderr);
        return 1;
      }
      if (only != NULL) printf("%s: %.3f s, %lld bytes\n", name, configs[i].best, configs[i].size);
    }
  remove(path);
  if (only != NULL) return 0;
  printf("| compression | mode | sparse time (s) | dense time (s) | sparse/dense time | sparse size (MiB) | dense size "
         "(MiB) | sparse/dense size |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (int i = 0; i < nconfigs; i += 2) {
    const Config *s = &configs[i], *d = &configs[i + 1];
    printf("| %s | %s | %.3f | %.3f | %.2f | %.2f | %.2f | %.3f |\n", s->compression, s->mode, s->best, d->best,
           s->best / d->best, (double)s->size / 1048576.0, (double)d->size / 1048576.0,
           (double)s->size / (double)d->size);
  }
  return 0;
}
