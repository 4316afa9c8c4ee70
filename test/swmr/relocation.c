/* relocation DIR: an SWMR writer never overwrites a flushed sparse chunk.
 *
 * HDF5 writes a chunk whose stored size is unchanged back at the same address, and an SWMR
 * writer never frees the copy of a chunk that moved (readers may still hold the old index).
 * So the connector gives a rewritten chunk another size when the file is in SWMR-write mode,
 * and every flushed copy stays intact, byte for byte, for readers and after a crash.
 *
 * One chunk is rewritten 40 times (same-size overwrites of defined elements, growth, erase),
 * then 3 times with the same sections through h5sparse_dwrite_struct_chunk, flushing each time: in SWMR-write mode every version has a new address and all earlier
 * versions still hold their bytes (read back from the file with pread); in a plain file the
 * same-size overwrites stay in place (control: shows the test can see the difference). The
 * values read back are the last ones written. Needs the h5sparse connector. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../c/test_support.h"
#include "append_model.h"
#include "h5sparse.h"

enum { VERSIONS = 40, MAX_STORED = 4096 };

typedef struct {
  haddr_t addr;
  hsize_t size;
  unsigned char bytes[MAX_STORED];
} Version;

static int stored_version(hid_t dset, Version *v) {
  const hsize_t origin[2] = {0, 0};
  unsigned mask = 0;
  if (H5Dget_chunk_info_by_coord(dset, origin, &mask, &v->addr, &v->size) < 0 || v->size > MAX_STORED) return -1;
  uint32_t filters = 0;
  return H5Dread_chunk(dset, H5P_DEFAULT, origin, &filters, v->bytes);
}

/* Version k: which of the chunk's first 16 elements are defined and their values. Versions
 * alternate between overwriting the same elements (same size) and growing or shrinking. */
static void write_version(hid_t dset, int k, int *expected) {
  const int defined = 4 + (k / 2) % 6; /* elements 0 .. defined-1, same set for k = 2j, 2j+1 */
  hsize_t coords[2 * 16];
  int values[16];
  for (int i = 0; i < defined; i++) {
    coords[2 * i] = 0;
    coords[2 * i + 1] = (hsize_t)i;
    values[i] = 1000 * (k + 1) + i;
  }
  hid_t space = H5Dget_space(dset);
  if (k > 0 && (k / 2) % 6 == 0) { /* the set shrank: erase what is no longer defined */
    const hsize_t start[2] = {0, (hsize_t)defined}, count[2] = {1, (hsize_t)(16 - defined)};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    check(h5sparse_derase(dset, space, H5P_DEFAULT) >= 0, "erase in version %d", k);
  }
  const hsize_t n = (hsize_t)defined;
  hid_t mem = H5Screate_simple(1, &n, NULL);
  H5Sselect_elements(space, H5S_SELECT_SET, (size_t)defined, coords);
  check(H5Dwrite(dset, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, values) >= 0, "write of version %d", k);
  H5Sclose(mem);
  H5Sclose(space);
  for (int i = 0; i < 16; i++) expected[i] = i < defined ? values[i] : APPEND_FILL;
}

static void run(const char *path, int swmr) {
  hid_t dset = -1;
  hid_t file = append_create(path, &dset);
  check(file >= 0, "create %s", path);
  if (file < 0) return;
  if (swmr) check(H5Fstart_swmr_write(file) >= 0, "H5Fstart_swmr_write");
  const hsize_t dims[2] = {APPEND_CHUNK_ROWS, APPEND_WIDTH};
  check(H5Dset_extent(dset, dims) >= 0, "grow");
  static Version versions[VERSIONS];
  int expected[16];
  int same_size = 0, moved_same_size = 0, distinct = 1, intact = 1;
  const int fd = open(path, O_RDONLY);
  for (int k = 0; k < VERSIONS; k++) {
    write_version(dset, k, expected);
    check(H5Dflush(dset) >= 0 && H5Fflush(file, H5F_SCOPE_LOCAL) >= 0, "flush of version %d", k);
    check(stored_version(dset, &versions[k]) >= 0, "chunk info of version %d", k);
    if (k > 0 && k % 2 == 1) { /* rewrote the same defined set with new values */
      same_size++;
      moved_same_size += versions[k].addr != versions[k - 1].addr;
    }
    for (int j = 0; j < k; j++) {
      distinct &= versions[j].addr != versions[k].addr;
      unsigned char now[MAX_STORED];
      intact &= pread(fd, now, (size_t)versions[j].size, (off_t)versions[j].addr) == (ssize_t)versions[j].size &&
                memcmp(now, versions[j].bytes, (size_t)versions[j].size) == 0;
    }
  }
  /* The RFC's direct write (H5Dwrite_struct_chunk) of the same sections: same size again. */
  int struct_moved = 0;
  for (int k = 0; k < 3; k++) {
    const hsize_t origin[2] = {0, 0};
    h5sparse_struct_chunk_info_t info;
    unsigned char section0[MAX_STORED], section1[MAX_STORED];
    void *bufs[2] = {section0, section1};
    Version before, after;
    check(h5sparse_dread_struct_chunk(dset, H5P_DEFAULT, origin, &info, NULL) >= 0, "struct chunk size query");
    check(h5sparse_dread_struct_chunk(dset, H5P_DEFAULT, origin, &info, bufs) >= 0, "struct chunk read");
    check(stored_version(dset, &before) >= 0, "chunk info before a direct write");
    const void *const cbufs[2] = {section0, section1};
    check(h5sparse_dwrite_struct_chunk(dset, H5P_DEFAULT, &info, origin, cbufs) >= 0, "struct chunk write");
    check(H5Dflush(dset) >= 0 && stored_version(dset, &after) >= 0, "chunk info after a direct write");
    struct_moved += after.addr != before.addr;
    unsigned char now[MAX_STORED];
    intact &= pread(fd, now, (size_t)before.size, (off_t)before.addr) == (ssize_t)before.size &&
              memcmp(now, before.bytes, (size_t)before.size) == 0;
  }
  close(fd);
  check(struct_moved == (swmr ? 3 : 0), "%s: %d of 3 direct same-size writes moved", swmr ? "SWMR" : "plain",
        struct_moved);
  int values[APPEND_CHUNK_ROWS * APPEND_WIDTH];
  check(H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) >= 0, "read back");
  check(memcmp(values, expected, sizeof expected) == 0, "the last version reads back");
  if (swmr) {
    check(moved_same_size == same_size, "SWMR: %d of %d same-content-size rewrites moved", moved_same_size, same_size);
    check(distinct, "SWMR: every version of the chunk has its own address");
    check(intact, "SWMR: every flushed version is still intact in the file");
  } else {
    check(moved_same_size == 0, "plain file: same-size rewrites stay in place (%d of %d moved)", moved_same_size,
          same_size);
  }
  printf("%s: %d same-size rewrites, %d moved, 3 direct struct-chunk writes, %d moved; all addresses distinct: %s; "
         "earlier versions intact: %s\n",
         swmr ? "SWMR-write" : "plain", same_size, moved_same_size, struct_moved, distinct ? "yes" : "no",
         intact ? "yes" : "no");
  H5Dclose(dset);
  H5Fclose(file);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: relocation DIR\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/relocation_swmr.h5", argv[1]);
  run(path, 1);
  snprintf(path, sizeof path, "%s/relocation_plain.h5", argv[1]);
  run(path, 0);
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures != 0;
}
