/* What one touched chunk costs: coordinate I/O through the h5sparse connector against HDF5's own
 * direct chunk calls, in one process. Issue 19's bound: a touched chunk costs at most 2x
 * H5Dwrite_chunk.
 *
 * A SIDE x SIDE float32 dataset with CHUNK x CHUNK chunks gets one element in each of N
 * distinct random chunks (so every element touches a chunk of its own):
 *   coo-write     h5sparse_dwrite_coo of the N elements into a sparse dataset;
 *   direct-write  N H5Dwrite_chunk calls of 40 bytes each (about the size of a stored
 *                 one-element structured chunk) into a chunked dataset with a deflate filter
 *                 (as the sparse one has a filter: stored sizes vary), native VOL;
 *   coo-read      h5sparse_diterate_coo of the whole sparse dataset (one batch);
 *   direct-read   H5Dchunk_iter over the plain dataset, then N H5Dread_chunk calls.
 * Both files use the same file format defaults and chunk index; the sparse file is made by
 * coo-write, the plain one by direct-write, so a read mode needs its write mode run before it.
 * Each mode runs in `measured_phase` only (a callgrind run collects just there:
 * --toggle-collect=measured_phase) and prints "MODE seconds N".
 *
 *   scripts/dev run build/bin/coo_chunk_cost MODE DIR [N [SIDE [CHUNK]]]
 *
 * Needs HDF5_VOL_CONNECTOR for the coo modes (scripts/dev run sets it). */
#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bench_support.h"
#include "h5sparse.h"

enum { STORED_BYTES = 40 };

struct job {
  const char *mode;
  char path[4096];
  size_t n;
  hsize_t side, chunk;
  hsize_t *coords; /* n x 2: one element in each of n distinct chunks */
  float *values;
};

static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* n distinct chunks in random order (drawn, sorted to drop repeats, then shuffled), one random
 * element in each. */
static int make_points(struct job *j) {
  const hsize_t per_side = j->side / j->chunk;
  if (j->n > per_side * per_side / 2) return fprintf(stderr, "N is over half the chunks\n"), -1;
  uint64_t state = 0xC0FFEE, *ids = malloc(2 * j->n * sizeof *ids);
  size_t have = 0;
  while (have < j->n) {
    for (size_t i = have; i < 2 * j->n; i++) ids[i] = bench_splitmix64(&state) % (per_side * per_side);
    qsort(ids, 2 * j->n, sizeof *ids, cmp_u64);
    have = 0;
    for (size_t i = 0; i < 2 * j->n; i++)
      if (have == 0 || ids[have - 1] != ids[i]) ids[have++] = ids[i];
  }
  for (size_t i = j->n - 1; i > 0; i--) {
    const size_t k = (size_t)(bench_splitmix64(&state) % (i + 1));
    const uint64_t t = ids[i];
    ids[i] = ids[k], ids[k] = t;
  }
  j->coords = malloc(2 * j->n * sizeof *j->coords);
  j->values = malloc(j->n * sizeof *j->values);
  for (size_t i = 0; i < j->n; i++) {
    j->coords[2 * i] = ids[i] / per_side * j->chunk + bench_splitmix64(&state) % j->chunk;
    j->coords[2 * i + 1] = ids[i] % per_side * j->chunk + bench_splitmix64(&state) % j->chunk;
    j->values[i] = (float)(i + 1);
  }
  free(ids);
  return 0;
}

static hid_t native_fapl(void) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_vol(fapl, H5VL_NATIVE, NULL);
  return fapl;
}

static hid_t create_dataset(hid_t file, const struct job *j, int sparse) {
  const hsize_t dims[2] = {j->side, j->side}, chunk[2] = {j->chunk, j->chunk};
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(2, dims, NULL);
  if (sparse) {
    h5sparse_pset_sparse_chunk(dcpl, 2, chunk);
  } else {  /* a filter, so that chunks may have any stored size (the bytes are never decoded) */
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_deflate(dcpl, 1);
  }
  hid_t dset = H5Dcreate2(file, "x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Sclose(space);
  H5Pclose(dcpl);
  return dset;
}

static int coo_write(const struct job *j) {
  hid_t file = H5Fcreate(j->path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), dset = create_dataset(file, j, 1);
  herr_t rc = h5sparse_dwrite_coo(dset, j->n, j->coords, H5T_NATIVE_FLOAT, j->values, H5P_DEFAULT);
  H5Dclose(dset);
  return (H5Fclose(file) < 0 || rc < 0) ? -1 : 0;
}

static int direct_write(const struct job *j) {
  hid_t fapl = native_fapl();
  hid_t file = H5Fcreate(j->path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl), dset = create_dataset(file, j, 0);
  unsigned char bytes[STORED_BYTES];
  herr_t rc = 0;
  for (size_t i = 0; i < j->n && rc >= 0; i++) {
    const hsize_t origin[2] = {j->coords[2 * i] / j->chunk * j->chunk, j->coords[2 * i + 1] / j->chunk * j->chunk};
    memset(bytes, (int)i, sizeof bytes);
    rc = H5Dwrite_chunk(dset, H5P_DEFAULT, 0, origin, sizeof bytes, bytes);
  }
  H5Dclose(dset);
  H5Pclose(fapl);
  return (H5Fclose(file) < 0 || rc < 0) ? -1 : 0;
}

static herr_t count_batch(size_t n, const hsize_t *coords, const void *values, void *op_data) {
  (void)coords, (void)values;
  *(size_t *)op_data += n;
  return 0;
}

static int coo_read(const struct job *j) {
  hid_t file = H5Fopen(j->path, H5F_ACC_RDONLY, H5P_DEFAULT), dset = H5Dopen2(file, "x", H5P_DEFAULT);
  size_t seen = 0;
  herr_t rc = h5sparse_diterate_coo(dset, H5S_ALL, H5T_NATIVE_FLOAT, 0, NULL, count_batch, &seen, H5P_DEFAULT);
  H5Dclose(dset);
  return (H5Fclose(file) < 0 || rc < 0 || seen != j->n) ? -1 : 0;
}

struct listed {
  hsize_t *origins;
  size_t n;
};

static int list_chunk(const hsize_t *offset, unsigned mask, haddr_t addr, hsize_t size, void *op_data) {
  (void)mask, (void)addr, (void)size;
  struct listed *l = op_data;
  l->origins[2 * l->n] = offset[0], l->origins[2 * l->n + 1] = offset[1];
  l->n++;
  return H5_ITER_CONT;
}

static int direct_read(const struct job *j) {
  hid_t fapl = native_fapl();
  hid_t file = H5Fopen(j->path, H5F_ACC_RDONLY, fapl), dset = H5Dopen2(file, "x", H5P_DEFAULT);
  struct listed l = {malloc(2 * j->n * sizeof(hsize_t)), 0};
  herr_t rc = H5Dchunk_iter(dset, H5P_DEFAULT, list_chunk, &l);
  unsigned char bytes[STORED_BYTES];
  for (size_t i = 0; i < l.n && rc >= 0; i++) {
    uint32_t mask = 0;
    rc = H5Dread_chunk(dset, H5P_DEFAULT, l.origins + 2 * i, &mask, bytes);  /* the 1.14 API on 2.x too */
  }
  free(l.origins);
  H5Dclose(dset);
  H5Pclose(fapl);
  return (H5Fclose(file) < 0 || rc < 0 || l.n != j->n) ? -1 : 0;
}

/* The only function a callgrind run collects in. */
__attribute__((noinline)) int measured_phase(const struct job *j) {
  if (!strcmp(j->mode, "coo-write")) return coo_write(j);
  if (!strcmp(j->mode, "direct-write")) return direct_write(j);
  if (!strcmp(j->mode, "coo-read")) return coo_read(j);
  if (!strcmp(j->mode, "direct-read")) return direct_read(j);
  return fprintf(stderr, "unknown mode %s\n", j->mode), -1;
}

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: %s MODE DIR [N [SIDE [CHUNK]]]\n", argv[0]), 2;
  struct job j = {argv[1], "", argc > 3 ? strtoull(argv[3], NULL, 10) : 20000,
                  argc > 4 ? strtoull(argv[4], NULL, 10) : (1ull << 20), argc > 5 ? strtoull(argv[5], NULL, 10) : 1024,
                  NULL, NULL};
  const int sparse = !strncmp(j.mode, "coo", 3);
  snprintf(j.path, sizeof j.path, "%s/chunk_cost_%s.h5", argv[2], sparse ? "sparse" : "plain");
  if (j.n == 0 || j.chunk == 0 || j.side % j.chunk || make_points(&j) < 0) return 2;
  const double start = bench_now();
  const int rc = measured_phase(&j);
  const double seconds = bench_now() - start;
  free(j.coords);
  free(j.values);
  if (rc < 0) return fprintf(stderr, "%s failed\n", j.mode), 1;
  printf("%s %.6f %zu\n", j.mode, seconds, j.n);
  return 0;
}
