/* Coordinate I/O from C through the connector, on a real file:
 *  1. h5sparse_dwrite_coo defines elements given in any order, converting values (int to
 *     double); a repeated coordinate takes its last value; H5Dread sees them, the fill value
 *     elsewhere.
 *  2. h5sparse_diterate_coo returns them in row-major order, whole, in a region, coordinates
 *     only, and resumed batch by batch through its cursor; a callback's stop value is returned,
 *     a failing callback fails the call.
 *     h5sparse_dread_coo writes them into the caller's memory (in one batch or several, values
 *     converted or not); a room callback that fails or gives no memory fails the call.
 *     h5sparse_dread_csr writes a box's elements in compressed-row form: each row's count,
 *     columns from the box's first (4 or 8 bytes), values; more than one box is refused.
 *  3. h5sparse_derase_coo undefines elements.
 *  4. Bad input (a coordinate outside the extent, a dense dataset, no callback, a spent
 *     cursor) fails with an h5sparse error and changes nothing. No identifiers leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h5sparse.h"
#include "../c/test_support.h"

enum { ROWS = 30, COLS = 40, MAX = 2000 };

struct collected {
  size_t n, batches;
  hsize_t coords[MAX][2];
  double values[MAX];
  int stop_after;  /* batches before returning 1 (0: never) */
};

static herr_t collect(size_t n, const hsize_t *coords, const void *values, void *op_data) {
  struct collected *c = op_data;
  for (size_t i = 0; i < n && c->n < MAX; i++, c->n++) {
    c->coords[c->n][0] = coords[2 * i];
    c->coords[c->n][1] = coords[2 * i + 1];
    c->values[c->n] = values ? ((const double *)values)[i] : 0;
  }
  c->batches++;
  return c->stop_after && (int)c->batches >= c->stop_after ? 1 : 0;
}

static herr_t fail(size_t n, const hsize_t *coords, const void *values, void *op_data) {
  (void)n, (void)coords, (void)values, (void)op_data;
  return -1;
}

static int row_major(const struct collected *c) {
  for (size_t i = 1; i < c->n; i++)
    if (c->coords[i - 1][0] > c->coords[i][0] ||
        (c->coords[i - 1][0] == c->coords[i][0] && c->coords[i - 1][1] >= c->coords[i][1]))
      return 0;
  return 1;
}

static hid_t make_sparse(hid_t file) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk[2] = {8, 16}, dims[2] = {ROWS, COLS};
  h5sparse_pset_sparse_chunk(dcpl, 2, chunk);
  const double fill = -1;
  H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &fill);
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dset = H5Dcreate2(file, "x", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Sclose(space);
  H5Pclose(dcpl);
  return dset;
}

static int failed_with_ours(herr_t rc, const char *what) {
  /* A failure of ours pushes a record of the h5sparse class; the stack is cleared after. */
  check(rc < 0, "%s fails", what);
  const ssize_t records = H5Eget_num(H5E_DEFAULT);
  check(records > 0, "%s leaves records on the error stack", what);
  H5Eclear2(H5E_DEFAULT);
  return rc < 0;
}

/* Memory for h5sparse_dread_coo: the batches one after the other. */
struct room {
  size_t used, batches;
  hsize_t coords[MAX][2];
  double doubles[MAX];
  float floats[MAX];
  int as_float, give_nothing;
};

static herr_t give_room(size_t n, hsize_t **coords, void **values, void *op_data) {
  struct room *r = op_data;
  if (r->give_nothing == 2) *coords = &r->coords[0][0]; /* coordinates only: values stay NULL */
  if (r->give_nothing) return 0; /* the pointers stay NULL */
  if (r->used + n > MAX) return -1;
  *coords = &r->coords[r->used][0];
  if (values) *values = r->as_float ? (void *)&r->floats[r->used] : (void *)&r->doubles[r->used];
  r->used += n;
  r->batches++;
  return 0;
}

static void read_into_callers_memory(hid_t dset, const struct collected *all) {
  static struct room whole, batched, nothing;
  memset(&whole, 0, sizeof whole);
  check(h5sparse_dread_coo(dset, H5S_ALL, H5T_NATIVE_DOUBLE, SIZE_MAX, NULL, give_room, NULL, &whole,
                           H5P_DEFAULT) == 0, "read into the caller's memory");
  check(whole.batches == 1 && whole.used == all->n, "in one batch (%zu) of every element (%zu)", whole.batches,
        whole.used);
  check(memcmp(whole.coords, all->coords, all->n * sizeof all->coords[0]) == 0 &&
            memcmp(whole.doubles, all->values, all->n * sizeof(double)) == 0,
        "the coordinates and values the iteration gives");
  memset(&batched, 0, sizeof batched);
  batched.as_float = 1;
  check(h5sparse_dread_coo(dset, H5S_ALL, H5T_NATIVE_FLOAT, 1, NULL, give_room, NULL, &batched, H5P_DEFAULT) == 0,
        "read in small batches, values converted");
  int same = batched.used == all->n && batched.batches > 1;
  for (size_t i = 0; same && i < all->n; i++) { /* batches of bands cut in groups: in any order */
    size_t j = 0;
    while (j < all->n && (all->coords[j][0] != batched.coords[i][0] || all->coords[j][1] != batched.coords[i][1])) j++;
    same = j < all->n && batched.floats[i] == (float)all->values[j];
  }
  check(same, "%zu batches hold every element, converted to float", batched.batches);
  memset(&nothing, 0, sizeof nothing);
  nothing.give_nothing = 1;
  failed_with_ours(h5sparse_dread_coo(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 0, NULL, give_room, NULL, &nothing,
                                      H5P_DEFAULT), "a room callback giving no memory");
  nothing.give_nothing = 2;
  nothing.as_float = 1;
  failed_with_ours(h5sparse_dread_coo(dset, H5S_ALL, H5T_NATIVE_FLOAT, 0, NULL, give_room, NULL, &nothing,
                                      H5P_DEFAULT), "a room callback giving no memory for converted values");
  static struct room small;
  memset(&small, 0, sizeof small);
  small.used = MAX - 1; /* give_room fails: too little left */
  failed_with_ours(h5sparse_dread_coo(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 0, NULL, give_room, NULL, &small,
                                      H5P_DEFAULT), "a failing room callback");
  failed_with_ours(h5sparse_dread_coo(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 0, NULL, NULL, collect, NULL, H5P_DEFAULT),
                   "no room callback");
}

/* Memory for h5sparse_dread_csr: columns of either width and the values. */
struct csr_room {
  size_t n, calls;
  int32_t columns32[MAX];
  int64_t columns64[MAX];
  double values[MAX];
  size_t index_size;
};

static herr_t give_csr_room(size_t n, hsize_t **coords, void **values, void *op_data) {
  struct csr_room *r = op_data;
  if (n > MAX) return -1;
  r->n = n;
  r->calls++;
  *coords = r->index_size == 4 ? (hsize_t *)(void *)r->columns32 : (hsize_t *)(void *)r->columns64;
  *values = r->values;
  return 0;
}

/* The elements of box (start, count) in compressed-row form against those the iteration gave. */
static void check_compressed_rows(hid_t dset, const struct collected *all, const hsize_t start[2],
                                  const hsize_t count[2], size_t index_size) {
  hid_t space = H5Dget_space(dset);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  static struct csr_room r;
  memset(&r, 0, sizeof r);
  r.index_size = index_size;
  hsize_t row_counts[ROWS];
  memset(row_counts, 0xff, sizeof row_counts);
  check(h5sparse_dread_csr(dset, space, H5T_NATIVE_DOUBLE, index_size, row_counts, give_csr_room, &r,
                           H5P_DEFAULT) == 0 && r.calls == 1,
        "box read in compressed rows, %zu-byte columns", index_size);
  size_t k = 0, counted = 0;
  int same = 1;
  for (size_t i = 0; i < all->n; i++) {
    const hsize_t row = all->coords[i][0], col = all->coords[i][1];
    if (row < start[0] || row >= start[0] + count[0] || col < start[1] || col >= start[1] + count[1]) continue;
    const int64_t column = index_size == 4 ? r.columns32[k] : r.columns64[k];
    same &= k < r.n && column == (int64_t)(col - start[1]) && r.values[k] == all->values[i];
    k++;
  }
  for (hsize_t row = 0; row < count[0]; row++) counted += row_counts[row];
  check(same && k == r.n && counted == r.n, "its %zu elements in row-major order, columns from the box's (%zu)", k,
        r.n);
  for (hsize_t row = 0, first = 0; row < count[0]; first += row_counts[row], row++) {
    size_t in_row = 0;
    for (size_t i = 0; i < all->n; i++)
      in_row += all->coords[i][0] == start[0] + row && all->coords[i][1] >= start[1] &&
                all->coords[i][1] < start[1] + count[1];
    same &= row_counts[row] == in_row;
  }
  check(same, "each row's count");
  H5Sclose(space);
}

static void read_compressed_rows(hid_t dset, const struct collected *all) {
  const hsize_t box_start[2] = {5, 9}, box_count[2] = {10, 20}, whole_start[2] = {0, 0},
                whole_count[2] = {ROWS, COLS};
  check_compressed_rows(dset, all, box_start, box_count, 4);
  check_compressed_rows(dset, all, box_start, box_count, 8);
  check_compressed_rows(dset, all, whole_start, whole_count, 4);
  static struct csr_room r;
  hsize_t row_counts[ROWS];
  r.index_size = 4;
  failed_with_ours(h5sparse_dread_csr(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 3, row_counts, give_csr_room, &r,
                                      H5P_DEFAULT), "3-byte column indices");
  failed_with_ours(h5sparse_dread_csr(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 4, NULL, give_csr_room, &r, H5P_DEFAULT),
                   "no row counts");
  hid_t two_boxes = H5Dget_space(dset);
  const hsize_t a[2] = {0, 0}, b[2] = {20, 20}, count[2] = {2, 2};
  H5Sselect_hyperslab(two_boxes, H5S_SELECT_SET, a, NULL, count, NULL);
  H5Sselect_hyperslab(two_boxes, H5S_SELECT_OR, b, NULL, count, NULL);
  failed_with_ours(h5sparse_dread_csr(dset, two_boxes, H5T_NATIVE_DOUBLE, 4, row_counts, give_csr_room, &r,
                                      H5P_DEFAULT), "compressed rows of two boxes");
  H5Sclose(two_boxes);
}

static void write_and_read(hid_t dset) {
  /* 300 points in no order (120 distinct: the pattern repeats), the first repeated last. */
  static hsize_t coords[301][2];
  static int values[301];
  size_t n = 0;
  for (int k = 299; k >= 0; k--, n++) {
    coords[n][0] = (hsize_t)((k * 7) % ROWS);
    coords[n][1] = (hsize_t)((k * 11) % COLS);
    values[n] = k;
  }
  coords[n][0] = coords[0][0], coords[n][1] = coords[0][1], values[n] = 5000;
  n++;
  check(h5sparse_dwrite_coo(dset, n, &coords[0][0], H5T_NATIVE_INT, values, H5P_DEFAULT) >= 0, "coo written");
  static double dense[ROWS][COLS];
  check(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, dense) >= 0, "dense read");
  static double model[ROWS][COLS];  /* the points applied in order: the last write of each wins */
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++) model[r][c] = -1;
  for (size_t i = 0; i < n; i++) model[coords[i][0]][coords[i][1]] = values[i];
  check(dense[coords[0][0]][coords[0][1]] == 5000, "the last value of a repeated coordinate wins");
  check(memcmp(dense, model, sizeof dense) == 0, "H5Dread reads the model");
  int defined = 0;
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++) defined += model[r][c] != -1;
  static struct collected all;
  memset(&all, 0, sizeof all);
  check(h5sparse_diterate_coo(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 0, NULL, collect, &all, H5P_DEFAULT) == 0,
        "iteration runs to its end");
  check((int)all.n == defined, "iteration returns the %d defined elements (%zu)", defined, all.n);
  check(row_major(&all), "in row-major order");
  int same = 1;
  for (size_t i = 0; i < all.n; i++) same &= dense[all.coords[i][0]][all.coords[i][1]] == all.values[i];
  check(same, "with the values H5Dread reads");

  /* A region, coordinates only. */
  hid_t space = H5Dget_space(dset);
  const hsize_t start[2] = {5, 9}, count[2] = {10, 20};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  static struct collected region;
  memset(&region, 0, sizeof region);
  check(h5sparse_diterate_coo(dset, space, H5I_INVALID_HID, 0, NULL, collect, &region, H5P_DEFAULT) == 0,
        "region iterated");
  size_t inside = 0;
  for (size_t i = 0; i < all.n; i++)
    inside += all.coords[i][0] >= 5 && all.coords[i][0] < 15 && all.coords[i][1] >= 9 && all.coords[i][1] < 29;
  check(region.n == inside && row_major(&region), "the region's %zu elements (%zu)", inside, region.n);
  H5Sclose(space);

  /* Batch by batch through the cursor: small batches, one per call. */
  static struct collected resumed;
  memset(&resumed, 0, sizeof resumed);
  hsize_t cursor[2] = {0, 0};
  int calls = 0;
  while (cursor[0] != HSIZE_UNDEF && calls < 100) {
    resumed.stop_after = (int)resumed.batches + 1;
    const herr_t rc = h5sparse_diterate_coo(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 1, cursor, collect, &resumed, H5P_DEFAULT);
    check(rc >= 0, "a resumed call succeeds");
    calls++;
  }
  check(calls > 1 && resumed.n == all.n, "resumed calls (%d) see every element (%zu of %zu)", calls, resumed.n, all.n);
  check(failed_with_ours(h5sparse_diterate_coo(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 1, cursor, collect, &resumed,
                                               H5P_DEFAULT), "a spent cursor"),
        "a spent cursor is refused");

  /* A callback that stops, one that fails. */
  static struct collected stopped;
  memset(&stopped, 0, sizeof stopped);
  stopped.stop_after = 1;
  check(h5sparse_diterate_coo(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 1, NULL, collect, &stopped, H5P_DEFAULT) == 1,
        "the callback's stop value is returned");
  failed_with_ours(h5sparse_diterate_coo(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 0, NULL, fail, NULL, H5P_DEFAULT),
                   "a failing callback");
  read_into_callers_memory(dset, &all);
  read_compressed_rows(dset, &all);

  /* Erase 50 of them (distinct: the pattern repeats every 120 points). */
  check(h5sparse_derase_coo(dset, 50, &coords[0][0], H5P_DEFAULT) >= 0, "coo erased");
  static struct collected after;
  memset(&after, 0, sizeof after);
  h5sparse_diterate_coo(dset, H5S_ALL, H5I_INVALID_HID, 0, NULL, collect, &after, H5P_DEFAULT);
  check(after.n == all.n - 50, "erasing 50 leaves %zu of %zu", after.n, all.n);

  /* Bad input changes nothing. */
  const hsize_t outside[2][2] = {{1, 1}, {ROWS, 0}};
  const int two[2] = {1, 2};
  failed_with_ours(h5sparse_dwrite_coo(dset, 2, &outside[0][0], H5T_NATIVE_INT, two, H5P_DEFAULT),
                   "a coordinate outside the extent");
  failed_with_ours(h5sparse_derase_coo(dset, 2, &outside[0][0], H5P_DEFAULT), "an erase outside the extent");
  failed_with_ours(h5sparse_diterate_coo(dset, H5S_ALL, H5T_NATIVE_DOUBLE, 0, NULL, NULL, NULL, H5P_DEFAULT),
                   "no callback");
  static struct collected unchanged;
  memset(&unchanged, 0, sizeof unchanged);
  h5sparse_diterate_coo(dset, H5S_ALL, H5I_INVALID_HID, 0, NULL, collect, &unchanged, H5P_DEFAULT);
  check(unchanged.n == after.n, "refused calls change nothing");
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "coordinate_io.h5";
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  check(file >= 0, "file created");
  hid_t dset = make_sparse(file);
  check(dset >= 0, "sparse dataset created");
  write_and_read(dset);
  const hsize_t dims[2] = {4, 4}, point[2] = {1, 1};
  const double one = 1;
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dense = H5Dcreate2(file, "dense", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  failed_with_ours(h5sparse_dwrite_coo(dense, 1, point, H5T_NATIVE_DOUBLE, &one, H5P_DEFAULT), "coo on a dense dataset");
  H5Dclose(dense);
  H5Sclose(space);
  H5Dclose(dset);
  H5Fclose(file);
  return finish_checks();
}
