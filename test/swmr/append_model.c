/* The append workload and its checker (see append_model.h). */
#include "append_model.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5sparse.h"

hsize_t append_rows(unsigned batches) { return (hsize_t)batches * APPEND_ROWS_PER_BATCH; }

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Batch number and position in one positive int32: 11 bits of batch + 1, 20 bits of element. */
static int value_of(unsigned b, uint64_t element) { return (int)(((uint32_t)(b + 1) << 20) | (element & 0xFFFFF)); }

static int contains(const AppendBatch *batch, hsize_t row, hsize_t col) {
  for (size_t i = 0; i < batch->count; i++)
    if (batch->coords[2 * i] == row && batch->coords[2 * i + 1] == col) return 1;
  return 0;
}

static void add_point(AppendBatch *batch, unsigned b, hsize_t row, hsize_t col) {
  batch->coords[2 * batch->count] = row;
  batch->coords[2 * batch->count + 1] = col;
  batch->values[batch->count] = value_of(b, row * APPEND_WIDTH + col);
  batch->count++;
}

void append_batch(unsigned b, AppendBatch *out) {
  uint64_t state = 0x5EEDull * (b + 1);
  out->count = 0;
  const hsize_t first_new = append_rows(b);
  while (out->count < APPEND_NEW_POINTS) {
    const hsize_t row = first_new + splitmix64(&state) % APPEND_ROWS_PER_BATCH;
    const hsize_t col = splitmix64(&state) % APPEND_WIDTH;
    if (!contains(out, row, col)) add_point(out, b, row, col);
  }
  if (b == 0) return;
  while (out->count < APPEND_BATCH_POINTS) {
    const hsize_t row = splitmix64(&state) % first_new;
    const hsize_t col = splitmix64(&state) % APPEND_WIDTH;
    if (!contains(out, row, col)) add_point(out, b, row, col);
  }
}

hid_t append_create(const char *path, hid_t *dset) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  const hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (file < 0) return -1;
  const hsize_t dims[2] = {0, APPEND_WIDTH}, maxdims[2] = {H5S_UNLIMITED, APPEND_WIDTH};
  const hsize_t chunk[2] = {APPEND_CHUNK_ROWS, APPEND_CHUNK_COLS};
  const int fill = APPEND_FILL;
  const unsigned level = 1;
  hid_t space = H5Screate_simple(2, dims, maxdims);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
  *dset = -1;
  if (h5sparse_pset_sparse_chunk(dcpl, 2, chunk) >= 0 &&
      h5sparse_pset_section_filter(dcpl, H5SPARSE_SECTION_SELECTION, H5Z_FILTER_DEFLATE, 0, 1, &level) >= 0)
    *dset = H5Dcreate2(file, APPEND_DATASET, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(space);
  if (*dset < 0) {
    H5Fclose(file);
    return -1;
  }
  return file;
}

herr_t append_write_batch(hid_t dset, unsigned b) {
  AppendBatch batch;
  append_batch(b, &batch);
  const hsize_t dims[2] = {append_rows(b + 1), APPEND_WIDTH};
  if (H5Dset_extent(dset, dims) < 0) return -1;
  const hsize_t n = batch.count;
  hid_t file_space = H5Dget_space(dset);
  hid_t mem_space = H5Screate_simple(1, &n, NULL);
  herr_t rc = H5Sselect_elements(file_space, H5S_SELECT_SET, batch.count, batch.coords);
  if (rc >= 0) rc = H5Dwrite(dset, H5T_NATIVE_INT, mem_space, file_space, H5P_DEFAULT, batch.values);
  H5Sclose(mem_space);
  H5Sclose(file_space);
  return rc;
}

int append_snapshot(hid_t dset, int with_defined, AppendSnapshot *snap) {
  memset(snap, 0, sizeof *snap);
  hid_t space = H5Dget_space(dset);
  hsize_t dims[2] = {0, 0};
  if (space < 0 || H5Sget_simple_extent_dims(space, dims, NULL) != 2 || dims[1] != APPEND_WIDTH) {
    fprintf(stderr, "cannot read the dataset's extent\n");
    H5Eprint2(H5E_DEFAULT, stderr);
    if (space >= 0) H5Sclose(space);
    return -1;
  }
  H5Sclose(space);
  snap->rows = dims[0];
  const size_t n = (size_t)(dims[0] * dims[1]);
  snap->values = malloc((n ? n : 1) * sizeof(int));
  if (n > 0 && H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, snap->values) < 0) {
    fprintf(stderr, "H5Dread of %zu elements failed\n", n);
    H5Eprint2(H5E_DEFAULT, stderr);
    return -1;
  }
  if (!with_defined) return 0;
  snap->defined = calloc(n ? n : 1, 1);
  const hid_t defined = h5sparse_dget_defined(dset, H5S_ALL, H5P_DEFAULT);
  if (defined < 0) {
    fprintf(stderr, "h5sparse_dget_defined failed\n");
    H5Eprint2(H5E_DEFAULT, stderr);
    return -1;
  }
  const hssize_t count = H5Sget_select_elem_npoints(defined);
  int rc = 0;
  if (count > 0) {
    hsize_t *coords = malloc((size_t)count * 2 * sizeof(hsize_t));
    if (H5Sget_select_elem_pointlist(defined, 0, (hsize_t)count, coords) < 0) {
      H5Eprint2(H5E_DEFAULT, stderr);
      rc = -1;
    }
    for (hssize_t i = 0; rc == 0 && i < count; i++) snap->defined[coords[2 * i] * APPEND_WIDTH + coords[2 * i + 1]] = 1;
    free(coords);
  } else if (count < 0 && H5Sget_select_type(defined) != H5S_SEL_NONE) {
    rc = -1;
  }
  H5Sclose(defined);
  return rc;
}

void append_snapshot_free(AppendSnapshot *snap) {
  free(snap->values);
  free(snap->defined);
  memset(snap, 0, sizeof *snap);
}

/* For every element, the batches that write it, ascending (compressed rows). */
struct AppendModel {
  unsigned batches;
  size_t elements;
  size_t *first;      /* elements + 1 offsets into `writers` */
  unsigned *writers;  /* batch numbers */
};

AppendModel *append_model_new(unsigned batches) {
  AppendModel *m = calloc(1, sizeof *m);
  m->batches = batches;
  m->elements = (size_t)append_rows(batches) * APPEND_WIDTH;
  m->first = calloc(m->elements + 1, sizeof(size_t));
  m->writers = malloc(((size_t)batches * APPEND_BATCH_POINTS + 1) * sizeof(unsigned));
  AppendBatch batch;
  for (unsigned b = 0; b < batches; b++) {
    append_batch(b, &batch);
    for (size_t i = 0; i < batch.count; i++) m->first[batch.coords[2 * i] * APPEND_WIDTH + batch.coords[2 * i + 1] + 1]++;
  }
  for (size_t e = 0; e < m->elements; e++) m->first[e + 1] += m->first[e];
  size_t *next = malloc((m->elements + 1) * sizeof(size_t));
  memcpy(next, m->first, (m->elements + 1) * sizeof(size_t));
  for (unsigned b = 0; b < batches; b++) {
    append_batch(b, &batch);
    for (size_t i = 0; i < batch.count; i++)
      m->writers[next[batch.coords[2 * i] * APPEND_WIDTH + batch.coords[2 * i + 1]]++] = b;
  }
  free(next);
  return m;
}

void append_model_free(AppendModel *model) {
  if (model == NULL) return;
  free(model->first);
  free(model->writers);
  free(model);
}

static void report(const char *who, long *shown, const char *fmt, hsize_t row, hsize_t col, long a, long b) {
  if ((*shown)++ >= 10) return;
  fprintf(stderr, "%s: element (%llu, %llu): ", who, (unsigned long long)row, (unsigned long long)col);
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
}

AppendVerdict append_check(const AppendModel *m, const AppendSnapshot *snap, unsigned flushed, unsigned started,
                           const char *who) {
  AppendVerdict v = {0, 0, 0};
  long shown = 0;
  if (started > m->batches) started = m->batches;
  if (snap->rows < append_rows(flushed) || snap->rows > append_rows(started)) {
    fprintf(stderr, "%s: %llu rows, expected %llu to %llu (batches flushed %u, started %u)\n", who,
            (unsigned long long)snap->rows, (unsigned long long)append_rows(flushed),
            (unsigned long long)append_rows(started), flushed, started);
    v.mismatches++;
    return v;
  }
  const size_t n = (size_t)snap->rows * APPEND_WIDTH;
  for (size_t e = 0; e < n; e++) {
    const hsize_t row = e / APPEND_WIDTH, col = e % APPEND_WIDTH;
    const unsigned *w = m->writers + m->first[e], *end = m->writers + m->first[e + 1];
    long base = -1;  /* last batch before `flushed` that wrote e */
    int written_before_start = 0;
    for (const unsigned *p = w; p < end; p++) {
      if (*p < flushed) base = *p;
      if (*p < started) written_before_start = 1;
    }
    const int value = snap->values[e];
    v.checked++;
    if (value == APPEND_FILL) {
      if (base >= 0) report(who, &shown, "reads the fill value, flushed value of batch %ld (%ld)", row, col, base, 0), v.mismatches++;
    } else {
      const long b = (long)((uint32_t)value >> 20) - 1;
      int allowed = ((uint32_t)value & 0xFFFFF) == (e & 0xFFFFF) && (b == base || (b >= (long)flushed && b < (long)started));
      int wrote = 0;
      for (const unsigned *p = w; p < end; p++) wrote |= (long)*p == b;
      if (!allowed || !wrote)
        report(who, &shown, "value %ld, expected the value of batch %ld or of a later started batch", row, col, value, base),
            v.mismatches++;
      else if (b != base)
        v.from_unflushed++;
    }
    if (snap->defined != NULL) {
      v.checked++;
      const int defined = snap->defined[e];
      if (!defined && base >= 0) report(who, &shown, "undefined, but defined by flushed batch %ld (%ld)", row, col, base, 0), v.mismatches++;
      if (defined && !written_before_start) report(who, &shown, "defined, but never written (%ld %ld)", row, col, 0, 0), v.mismatches++;
    }
  }
  if (shown > 10) fprintf(stderr, "%s: ... %ld mismatches in all\n", who, v.mismatches);
  return v;
}

long append_log_last(const char *path) {
  char buf[8192];
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  const off_t size = lseek(fd, 0, SEEK_END);
  const off_t from = size > (off_t)sizeof buf - 1 ? size - (off_t)sizeof buf + 1 : 0;
  const ssize_t got = pread(fd, buf, sizeof buf - 1, from);
  close(fd);
  if (got <= 0) return -1;
  buf[got] = '\0';
  /* The last line that ends in a newline. */
  char *end = strrchr(buf, '\n');
  if (end == NULL) return -1;
  *end = '\0';
  char *start = strrchr(buf, '\n');
  start = start ? start + 1 : buf;
  if (start == end) return -1;
  return strtol(start, NULL, 10);
}

int append_log_write(int fd, unsigned flushed) {
  char line[32];
  const int len = snprintf(line, sizeof line, "%u\n", flushed);
  return write(fd, line, (size_t)len) == len ? 0 : -1;
}
