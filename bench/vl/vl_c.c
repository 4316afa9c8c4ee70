/* Variable-length data from C: H5Dwrite and H5Dread of char* strings and hvl_t sequences into
 * a VarChunks dataset through the h5sparse connector, against stock HDF5 VL datasets (no
 * filter, and gzip 6), in one process each. bench/vl/vl_c.py drives it.
 *
 *   scripts/dev run build/bin/vl_c LAYOUT OP CASE DIR [N]
 *
 * LAYOUT: varchunks (as Python's h5sparse.VarChunks(): lengths Blosc zstd 1, byte shuffle;
 * data the same for strings, zstd 3 for sequences), varchunks-zstd1, varchunks-zstd5 and
 * varchunks-lz4 (the data in zstd 1, zstd 5 or LZ4), stock, gzip. OP: write (creates
 * DIR/LAYOUT-CASE.h5 with one 1-D dataset of N elements, chunks of 65,536, one H5Dwrite) or
 * read (one H5Dread of it, then H5Treclaim). CASE: words (English-like, 3-10 letters) or sequences (int32, lengths 0-100,
 * smooth: k consecutive numbers). The data is made before the measured part; the operation,
 * file open and close included, runs in `measured_phase` only (callgrind:
 * --toggle-collect=measured_phase) and prints "seconds S". */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench_support.h"
#include "h5sparse.h"

enum { CHUNK = 65536, BLOSC_ID = 32001 };

struct job {
  const char *layout, *op, *kind;
  char path[4096];
  size_t n;
  int strings;
  char **words;  /* strings: n pointers into one block */
  hvl_t *seqs;   /* sequences */
  void *block;
};

static void make_data(struct job *j) {
  static const char letters[] = "etaoinshrdlucmfwypvbgkjqxz";
  uint64_t state = 20261128;
  if (j->strings) {
    char *block = j->block = malloc(j->n * 11);
    j->words = malloc(j->n * sizeof *j->words);
    for (size_t i = 0; i < j->n; i++) {
      const size_t k = 3 + bench_splitmix64(&state) % 8;
      j->words[i] = block;
      for (size_t c = 0; c < k; c++) {  /* skewed letter frequencies: the square of a uniform draw */
        const uint64_t u = bench_splitmix64(&state) % 26;
        *block++ = letters[u * u / 26];
      }
      *block++ = '\0';
    }
    return;
  }
  int *block = j->block = malloc(j->n * 101 * sizeof(int));
  j->seqs = malloc(j->n * sizeof *j->seqs);
  for (size_t i = 0; i < j->n; i++) {
    const size_t k = bench_splitmix64(&state) % 101;
    j->seqs[i] = (hvl_t){k, k ? block : NULL};
    for (size_t e = 0; e < k; e++) *block++ = (int)(i + e);
  }
}

static hid_t memory_type(const struct job *j) {
  if (!j->strings) return H5Tvlen_create(H5T_NATIVE_INT);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  return t;
}

static hid_t creation_plist(const struct job *j) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk[1] = {j->n < CHUNK ? j->n : CHUNK};
  if (strncmp(j->layout, "varchunks", 9) == 0) {
    /* Blosc cd_values (0, 0, 0, 0, level, shuffle, compressor): zstd is 5, LZ4 1 */
    const unsigned lengths[7] = {0, 0, 0, 0, 1, 1, 5};
    unsigned data[7] = {0, 0, 0, 0, j->strings ? 1 : 3, 1, 5};
    if (strcmp(j->layout, "varchunks-zstd1") == 0) data[4] = 1;
    if (strcmp(j->layout, "varchunks-zstd5") == 0) data[4] = 5;
    if (strcmp(j->layout, "varchunks-lz4") == 0) data[6] = 1;
    h5sparse_pset_sparse_chunk(dcpl, 1, chunk);
    h5sparse_pset_section_filter(dcpl, 2, BLOSC_ID, H5Z_FLAG_OPTIONAL, 7, lengths);
    h5sparse_pset_section_filter(dcpl, 3, BLOSC_ID, H5Z_FLAG_OPTIONAL, 7, data);
    return dcpl;
  }
  H5Pset_chunk(dcpl, 1, chunk);
  if (strcmp(j->layout, "gzip") == 0) H5Pset_deflate(dcpl, 6);
  return dcpl;
}

static int write_all(const struct job *j) {
  hid_t type = memory_type(j), dcpl = creation_plist(j);
  const hsize_t dims[1] = {j->n};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t file = H5Fcreate(j->path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t dset = H5Dcreate2(file, "x", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  const void *buf = j->strings ? (const void *)j->words : (const void *)j->seqs;
  const int rc = dset < 0 || H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ? -1 : 0;
  H5Dclose(dset), H5Fclose(file), H5Sclose(space), H5Pclose(dcpl), H5Tclose(type);
  return rc;
}

/* Reads everything back and checks it against the data written. */
static int read_all(const struct job *j) {
  hid_t type = memory_type(j);
  hid_t file = H5Fopen(j->path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t dset = H5Dopen2(file, "x", H5P_DEFAULT), space = H5Dget_space(dset);
  const size_t size = j->strings ? sizeof(char *) : sizeof(hvl_t);
  void *buf = malloc(j->n * size);
  int rc = dset < 0 || H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0 ? -1 : 0;
  for (size_t i = 0; rc == 0 && i < j->n; i++) {
    if (j->strings) {
      const char *got = ((char **)buf)[i];
      rc = got && strcmp(got, j->words[i]) == 0 ? 0 : -1;
    } else {
      const hvl_t got = ((hvl_t *)buf)[i];
      rc = got.len == j->seqs[i].len && (!got.len || !memcmp(got.p, j->seqs[i].p, got.len * sizeof(int))) ? 0 : -1;
    }
  }
  if (rc < 0) fprintf(stderr, "the data read back differs from the data written\n");
  H5Treclaim(type, space, H5P_DEFAULT, buf);
  free(buf);
  H5Sclose(space), H5Dclose(dset), H5Fclose(file), H5Tclose(type);
  return rc;
}

__attribute__((noinline)) int measured_phase(const struct job *j) {
  if (strcmp(j->op, "write") == 0) return write_all(j);
  if (strcmp(j->op, "read") == 0) return read_all(j);
  return fprintf(stderr, "unknown operation %s\n", j->op), -1;
}

int main(int argc, char **argv) {
  if (argc < 5) return fprintf(stderr, "usage: %s LAYOUT OP CASE DIR [N]\n", argv[0]), 2;
  struct job j = {argv[1], argv[2], argv[3], "", argc > 5 ? strtoull(argv[5], NULL, 10) : 1000000, 0, NULL, NULL,
                  NULL};
  j.strings = strcmp(j.kind, "words") == 0;
  if (!j.strings && strcmp(j.kind, "sequences") != 0) return fprintf(stderr, "unknown case %s\n", j.kind), 2;
  snprintf(j.path, sizeof j.path, "%s/%s-%s.h5", argv[4], j.layout, j.kind);
  make_data(&j);
  const double start = bench_now();
  const int rc = measured_phase(&j);
  const double seconds = bench_now() - start;
  free(j.words), free(j.seqs), free(j.block);
  if (rc < 0) return fprintf(stderr, "%s %s %s failed\n", j.layout, j.op, j.kind), 1;
  printf("seconds %.6f\n", seconds);
  return 0;
}
