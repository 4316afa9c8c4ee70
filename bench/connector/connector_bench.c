/* Connector overhead benchmark: the same HDF5 workload with or without HDF5_VOL_CONNECTOR
 * (the runner sets it). Prints one line per phase: "<phase> <wall seconds> <CPU seconds>".
 *   groups:    create 20,000 groups with 5 attributes each, then iterate them and read the attributes
 *   write/read: a 1 GiB chunked dataset (1 MiB chunks), written then read back
 *   open_close: open and close a file 2,000 times */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

/* A point in time, on the wall clock and in the CPU time of the process (user + system): CPU
 * time leaves out what other processes on a shared machine take, wall time does not. */
typedef struct {
  double wall, cpu;
} stamp;

static double seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static stamp now(void) {
  stamp s = {seconds(CLOCK_MONOTONIC), seconds(CLOCK_PROCESS_CPUTIME_ID)};
  return s;
}

/* One result line: "<phase> <wall seconds> <cpu seconds>". */
static void report(const char *phase, stamp from, stamp to) {
  printf("%s %.4f %.4f\n", phase, to.wall - from.wall, to.cpu - from.cpu);
}

static herr_t visit_group(hid_t group, const char *name, const H5L_info2_t *info, void *data) {
  (void)info;
  hid_t g = H5Gopen2(group, name, H5P_DEFAULT);
  H5O_info2_t oinfo;
  H5Oget_info3(g, &oinfo, H5O_INFO_NUM_ATTRS);
  for (hsize_t a = 0; a < oinfo.num_attrs; a++) {
    hid_t attr = H5Aopen_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, a, H5P_DEFAULT, H5P_DEFAULT);
    int value;
    H5Aread(attr, H5T_NATIVE_INT, &value);
    *(long long *)data += value;
    H5Aclose(attr);
  }
  H5Gclose(g);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: connector_bench DIR groups|io|open_close [GROUPS] [MIB] [OPENS]\n");
    return 2;
  }
  const char *dir = argv[1], *phase = argv[2];
  const int ngroups = argc > 3 ? atoi(argv[3]) : 20000;
  const int mib = argc > 4 ? atoi(argv[4]) : 1024;
  const int opens = argc > 5 ? atoi(argv[5]) : 2000;
  char path[4096];
  snprintf(path, sizeof path, "%s/bench.h5", dir);
  /* Library start-up (which loads the connector plugin once per process) is not timed, nor is
   * removing the previous run's file: truncating it inside the clock would charge each setup
   * for freeing the previous setup's pages (1 GiB after an io phase). */
  H5open();
  unlink(path);
  if (strcmp(phase, "groups") == 0) {
    stamp t0 = now();
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t scalar = H5Screate(H5S_SCALAR);
    for (int i = 0; i < ngroups; i++) {
      char name[32];
      snprintf(name, sizeof name, "g%06d", i);
      hid_t g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      for (int a = 0; a < 5; a++) {
        char aname[16];
        snprintf(aname, sizeof aname, "a%d", a);
        hid_t attr = H5Acreate2(g, aname, H5T_NATIVE_INT, scalar, H5P_DEFAULT, H5P_DEFAULT);
        int value = i + a;
        H5Awrite(attr, H5T_NATIVE_INT, &value);
        H5Aclose(attr);
      }
      H5Gclose(g);
    }
    H5Sclose(scalar);
    H5Fclose(f);
    stamp t1 = now();
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    long long sum = 0;
    H5Literate2(f, H5_INDEX_NAME, H5_ITER_INC, NULL, visit_group, &sum);
    H5Fclose(f);
    stamp t2 = now();
    report("groups_create", t0, t1);
    report("groups_iterate", t1, t2);
    return sum > 0 ? 0 : 1;
  }
  if (strcmp(phase, "io") == 0) {
    const hsize_t cols = 1 << 18; /* 1 MiB rows of float32 */
    const hsize_t dims[2] = {(hsize_t)mib, cols}, chunk[2] = {1, cols};
    float *row = malloc(cols * sizeof(float));
    for (hsize_t j = 0; j < cols; j++) row[j] = (float)j;
    stamp t0 = now();
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    hid_t d = H5Dcreate2(f, "data", H5T_NATIVE_FLOAT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    hid_t mem = H5Screate_simple(2, chunk, NULL);
    for (hsize_t r = 0; r < dims[0]; r++) {
      const hsize_t start[2] = {r, 0};
      H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, chunk, NULL);
      H5Dwrite(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, row);
    }
    H5Dclose(d);
    H5Fclose(f);
    stamp t1 = now();
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    d = H5Dopen2(f, "data", H5P_DEFAULT);
    double check = 0;
    for (hsize_t r = 0; r < dims[0]; r++) {
      const hsize_t start[2] = {r, 0};
      H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, chunk, NULL);
      H5Dread(d, H5T_NATIVE_FLOAT, mem, space, H5P_DEFAULT, row);
      check += row[cols - 1];
    }
    H5Dclose(d);
    H5Fclose(f);
    stamp t2 = now();
    H5Sclose(mem);
    H5Sclose(space);
    H5Pclose(dcpl);
    free(row);
    report("dataset_write", t0, t1);
    report("dataset_read", t1, t2);
    return check > 0 ? 0 : 1;
  }
  if (strcmp(phase, "open_close") == 0) {
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    stamp t0 = now();
    for (int i = 0; i < opens; i++) {
      f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
      H5Fclose(f);
    }
    report("open_close", t0, now());
    return 0;
  }
  fprintf(stderr, "unknown phase %s\n", phase);
  return 2;
}
