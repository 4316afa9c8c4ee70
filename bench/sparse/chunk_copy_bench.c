/* Direct chunk copy in C, driven by bench/sparse/chunk_copy.py: copies dataset "x" of SRC into
 * a new file DST with the same creation properties, chunk by chunk, and prints the seconds
 * taken from opening SRC to closing DST (HDF5, the plugins and a first open of SRC before):
 *   struct  h5sparse_dstruct_chunk_iter; in the callback h5sparse_dread_struct_chunk +
 *           h5sparse_dwrite_struct_chunk (sections; each write verified by decoding)
 *   native  H5Dchunk_iter lists the chunks, then H5Dread_chunk + H5Dwrite_chunk (whole
 *           structured chunks; each write verified by decoding)
 * Needs the h5sparse connector (HDF5_VOL_CONNECTOR). Usage: chunk_copy_bench SRC DST METHOD */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "h5sparse.h"

struct Copy {
  hid_t src, dst;
  unsigned char *buf[2];
  size_t capacity[2];
  int failed;
};

static int copy_sections(const hsize_t *offset, h5sparse_struct_chunk_info_t *info, haddr_t *addr, hsize_t *size,
                         size_t op_data_size, void *op_data) {
  (void)addr, (void)size, (void)op_data_size;
  struct Copy *c = op_data;
  for (int i = 0; i < 2; i++)
    if (info->section_size[i] > c->capacity[i]) {
      c->capacity[i] = info->section_size[i];
      c->buf[i] = realloc(c->buf[i], c->capacity[i]);
    }
  void *buf[2] = {c->buf[0], c->buf[1]};
  if (h5sparse_dread_struct_chunk(c->src, H5P_DEFAULT, offset, info, buf) < 0 ||
      h5sparse_dwrite_struct_chunk(c->dst, H5P_DEFAULT, info, offset, (const void *const *)buf) < 0)
    return -1;
  return 0;
}

struct Listing {
  int rank;
  size_t count, capacity;
  hsize_t *offsets, *sizes;
};

static int list_chunk(const hsize_t *offset, unsigned mask, haddr_t addr, hsize_t size, void *op_data) {
  (void)mask, (void)addr;
  struct Listing *l = op_data;
  if (l->count == l->capacity) {
    l->capacity = l->capacity ? 2 * l->capacity : 256;
    l->offsets = realloc(l->offsets, l->capacity * (size_t)l->rank * sizeof(hsize_t));
    l->sizes = realloc(l->sizes, l->capacity * sizeof(hsize_t));
  }
  memcpy(l->offsets + l->count * (size_t)l->rank, offset, (size_t)l->rank * sizeof(hsize_t));
  l->sizes[l->count++] = size;
  return 0;
}

static int copy_native(hid_t src, hid_t dst, int rank) {
  struct Listing l = {rank, 0, 0, NULL, NULL};
  if (H5Dchunk_iter(src, H5P_DEFAULT, list_chunk, &l) < 0) return -1;
  unsigned char *buf = NULL;
  size_t capacity = 0;
  int rc = 0;
  for (size_t i = 0; i < l.count && rc == 0; i++) {
    if (l.sizes[i] > capacity) buf = realloc(buf, capacity = l.sizes[i]);
    uint32_t mask = 0;
    const hsize_t *offset = l.offsets + i * (size_t)rank;
    if (H5Dread_chunk(src, H5P_DEFAULT, offset, &mask, buf) < 0 ||
        H5Dwrite_chunk(dst, H5P_DEFAULT, mask, offset, l.sizes[i], buf) < 0)
      rc = -1;
  }
  free(buf);
  free(l.offsets);
  free(l.sizes);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[3], "struct") != 0 && strcmp(argv[3], "native") != 0)) {
    fprintf(stderr, "usage: chunk_copy_bench SRC DST struct|native\n");
    return 2;
  }
  /* Library, connector and filter plugins loaded before timing, as in a running program. A
   * DCPL taken from a dataset does not load filter plugins (H5Pset_filter would): ask. */
  H5open();
  if (H5Zfilter_avail(H5SPARSE_FILTER_STRUCTURED_CHUNK) <= 0) fprintf(stderr, "structured-chunk filter missing\n");
  if (H5Zfilter_avail(32001) <= 0) fprintf(stderr, "blosc filter missing\n");
  H5Fclose(H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT)); /* first-open costs paid once, too */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  hid_t fs = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t src = H5Dopen2(fs, "x", H5P_DEFAULT);
  hid_t dcpl = H5Dget_create_plist(src), type = H5Dget_type(src), space = H5Dget_space(src);
  hid_t fd = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t dst = H5Dcreate2(fd, "x", type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  int rc;
  if (strcmp(argv[3], "struct") == 0) {
    struct Copy c = {src, dst, {NULL, NULL}, {0, 0}, 0};
    rc = h5sparse_dstruct_chunk_iter(src, H5P_DEFAULT, copy_sections, sizeof c, &c) < 0 ? -1 : 0;
    free(c.buf[0]);
    free(c.buf[1]);
  } else {
    rc = copy_native(src, dst, H5Sget_simple_extent_ndims(space));
  }
  H5Dclose(dst);
  H5Fclose(fd);
  H5Sclose(space);
  H5Tclose(type);
  H5Pclose(dcpl);
  H5Dclose(src);
  H5Fclose(fs);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (rc < 0) {
    fprintf(stderr, "chunk_copy_bench: copy failed\n");
    return 1;
  }
  printf("%.6f\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  return 0;
}
