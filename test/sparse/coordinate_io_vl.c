/* Coordinate I/O of variable-length sparse datasets from C through the connector, on a real
 * file, against a model:
 *  1. Strings (UTF-8): h5sparse_dwrite_coo of char* values in any order, a repeated coordinate
 *     taking its last value, NULL and "" kept apart; H5Dread reads them. h5sparse_diterate_coo
 *     gives them in row-major order (payloads valid during the callback); h5sparse_dread_coo
 *     writes them into the caller's memory, which owns the payloads (H5Treclaim frees them),
 *     whole and in small batches, and in a region; h5sparse_derase_coo undefines elements.
 *  2. Sequences of int16 written as hvl_t of int and read as hvl_t of double; a compound with
 *     a string member in the dataset's own type.
 *  3. A fixed-size memory type and a coordinate outside the extent are refused and change
 *     nothing. No identifiers leak. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5sparse.h"
#include "../c/test_support.h"

enum { ROWS = 20, COLS = 30, WRITES = 200 };

static hid_t utf8_string(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

static hid_t create(hid_t file, const char *name, hid_t type) {
  const hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {4, 8};
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  h5sparse_pset_sparse_chunk(dcpl, 2, chunk);
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Sclose(space);
  H5Pclose(dcpl);
  return dset;
}

static int failed_with_ours(herr_t rc, const char *what) {
  check(rc < 0, "%s fails", what);
  check(H5Eget_num(H5E_DEFAULT) > 0, "%s leaves records on the error stack", what);
  H5Eclear2(H5E_DEFAULT);
  return rc < 0;
}

/* The model: each element undefined (defined 0), NULL (text NULL) or a string. */
struct model {
  int defined[ROWS][COLS];
  char text[ROWS][COLS][16];
  int null[ROWS][COLS];
};

static int same_string(const struct model *m, hsize_t r, hsize_t c, const char *s) {
  if (!m->defined[r][c]) return 0;
  return m->null[r][c] ? s == NULL : s != NULL && strcmp(s, m->text[r][c]) == 0;
}

static size_t defined_in(const struct model *m, hsize_t r0, hsize_t r1, hsize_t c0, hsize_t c1) {
  size_t n = 0;
  for (hsize_t r = r0; r < r1; r++)
    for (hsize_t c = c0; c < c1; c++) n += m->defined[r][c] != 0;
  return n;
}

/* What a callback saw: every element checked against the model, each batch in row-major
 * order (a band of chunks over the budget is cut into batches of whole chunks). */
struct seen {
  const struct model *model;
  size_t n, wrong, batches;
};

static herr_t check_batch(size_t n, const hsize_t *coords, const void *values, void *op_data) {
  struct seen *s = op_data;
  char *const *strings = values;
  hsize_t last = 0; /* linear position of the last element + 1 */
  s->batches++;
  for (size_t i = 0; i < n; i++, s->n++) {
    const hsize_t r = coords[2 * i], c = coords[2 * i + 1], at = r * COLS + c;
    s->wrong += at < last || !same_string(s->model, r, c, strings[i]);
    last = at + 1;
  }
  return 0;
}

/* Frees the payloads of `count` values read into the caller's memory. */
static void reclaim(hid_t type, size_t count, void *values, const char *what) {
  const hsize_t n = count;
  hid_t space = H5Screate_simple(1, &n, NULL);
  check(n == 0 || H5Treclaim(type, space, H5P_DEFAULT, values) >= 0, "H5Treclaim frees the %s", what);
  H5Sclose(space);
}

/* Caller's memory for h5sparse_dread_coo: batches one after the other. */
struct room {
  size_t used, batches;
  hsize_t coords[ROWS * COLS][2];
  char *strings[ROWS * COLS];
};

static herr_t give_room(size_t n, hsize_t **coords, void **values, void *op_data) {
  struct room *r = op_data;
  if (r->used + n > ROWS * COLS) return -1;
  *coords = &r->coords[r->used][0];
  *values = &r->strings[r->used];
  r->used += n;
  r->batches++;
  return 0;
}

/* Reads a box into the caller's memory (max_bytes per batch) and checks it; frees the strings. */
static void read_box(hid_t dset, hid_t type, const struct model *m, hsize_t r0, hsize_t r1, hsize_t c0, hsize_t c1,
                     size_t max_bytes) {
  static struct room room;
  memset(&room, 0, sizeof room);
  hid_t space = H5Dget_space(dset);
  const hsize_t start[2] = {r0, c0}, count[2] = {r1 - r0, c1 - c0};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  check(h5sparse_dread_coo(dset, space, type, max_bytes, NULL, give_room, NULL, &room, H5P_DEFAULT) == 0,
        "read of rows %llu-%llu, columns %llu-%llu into the caller's memory", (unsigned long long)r0,
        (unsigned long long)r1, (unsigned long long)c0, (unsigned long long)c1);
  size_t wrong = 0;
  for (size_t i = 0; i < room.used; i++) {
    const hsize_t r = room.coords[i][0], c = room.coords[i][1];
    const int ordered = i == 0 || max_bytes != SIZE_MAX || /* one batch: row-major */
                        r * COLS + c > room.coords[i - 1][0] * COLS + room.coords[i - 1][1];
    wrong += !ordered || r < r0 || r >= r1 || c < c0 || c >= c1 || !same_string(m, r, c, room.strings[i]);
  }
  check(room.used == defined_in(m, r0, r1, c0, c1) && wrong == 0, "%zu elements in %zu batches (%zu wrong)",
        room.used, room.batches, wrong);
  reclaim(type, room.used, room.strings, "strings");
  H5Sclose(space);
}

static void strings(hid_t file) {
  static struct model m;
  memset(&m, 0, sizeof m);
  hid_t type = utf8_string(), dset = create(file, "strings", type);
  check(dset >= 0, "string dataset created");
  static hsize_t coords[WRITES][2];
  static char text[WRITES][16];
  const char *values[WRITES];
  unsigned seed = 7;
  for (int i = 0; i < WRITES; i++) { /* any order, repeats; every 9th NULL, every 11th "" */
    seed = seed * 1103515245u + 12345u;
    const hsize_t r = (seed >> 8) % ROWS, c = (seed >> 16) % COLS;
    coords[i][0] = r, coords[i][1] = c;
    snprintf(text[i], sizeof text[i], i % 11 ? "v%d\xc3\xa9" : "", i);
    values[i] = i % 9 == 0 ? NULL : text[i];
    m.defined[r][c] = 1;
    m.null[r][c] = values[i] == NULL;
    strcpy(m.text[r][c], text[i]);
  }
  check(h5sparse_dwrite_coo(dset, WRITES, &coords[0][0], type, values, H5P_DEFAULT) >= 0, "strings written by coo");
  static char *dense[ROWS][COLS];
  check(H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, dense) >= 0, "H5Dread of the whole dataset");
  size_t wrong = 0;
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++) wrong += m.defined[r][c] ? !same_string(&m, r, c, dense[r][c]) : dense[r][c] != NULL;
  check(wrong == 0, "H5Dread reads the model (%zu wrong), the last of a repeated coordinate winning", wrong);
  hid_t all = H5Dget_space(dset);
  H5Treclaim(type, all, H5P_DEFAULT, dense);
  H5Sclose(all);

  struct seen seen = {&m, 0, 0, 0};
  check(h5sparse_diterate_coo(dset, H5S_ALL, type, 256, NULL, check_batch, &seen, H5P_DEFAULT) == 0, "iteration");
  check(seen.n == defined_in(&m, 0, ROWS, 0, COLS) && seen.wrong == 0 && seen.batches > 1,
        "the iteration gives every defined element in %zu batches (%zu, %zu wrong)", seen.batches, seen.n, seen.wrong);
  read_box(dset, type, &m, 0, ROWS, 0, COLS, SIZE_MAX);
  read_box(dset, type, &m, 0, ROWS, 0, COLS, 1);
  read_box(dset, type, &m, 3, 11, 5, 21, SIZE_MAX);

  check(h5sparse_derase_coo(dset, 40, &coords[0][0], H5P_DEFAULT) >= 0, "40 coordinates erased");
  for (int i = 0; i < 40; i++) m.defined[coords[i][0]][coords[i][1]] = 0;
  read_box(dset, type, &m, 0, ROWS, 0, COLS, SIZE_MAX);

  const int fixed[1] = {5};
  failed_with_ours(h5sparse_dwrite_coo(dset, 1, &coords[50][0], H5T_NATIVE_INT, fixed, H5P_DEFAULT),
                   "a fixed-size memory type");
  const hsize_t outside[2][2] = {{1, 1}, {ROWS, 0}};
  failed_with_ours(h5sparse_dwrite_coo(dset, 2, &outside[0][0], type, values, H5P_DEFAULT),
                   "a coordinate outside the extent");
  failed_with_ours(h5sparse_derase_coo(dset, 2, &outside[0][0], H5P_DEFAULT), "an erase outside the extent");
  read_box(dset, type, &m, 0, ROWS, 0, COLS, SIZE_MAX); /* nothing changed */
  H5Tclose(type);
  H5Dclose(dset);
}

struct sequence_room {
  size_t n;
  hsize_t coords[8][2];
  hvl_t values[8];
};

static herr_t give_sequence_room(size_t n, hsize_t **coords, void **values, void *op_data) {
  struct sequence_room *r = op_data;
  if (r->n + n > 8) return -1;
  *coords = &r->coords[r->n][0];
  *values = &r->values[r->n];
  r->n += n;
  return 0;
}

/* Sequences of int16 in the file: written as hvl_t of int, read as hvl_t of double. */
static void sequences(hid_t file) {
  hid_t file_type = H5Tvlen_create(H5T_STD_I16LE), in_type = H5Tvlen_create(H5T_NATIVE_INT);
  hid_t out_type = H5Tvlen_create(H5T_NATIVE_DOUBLE), dset = create(file, "sequences", file_type);
  check(dset >= 0, "sequence dataset created");
  const hsize_t coords[4][2] = {{7, 3}, {0, 29}, {7, 2}, {0, 29}};
  int a[3] = {1, -2, 300}, b[1] = {9}, c[2] = {-7, 7};
  const hvl_t in[4] = {{3, a}, {1, b}, {0, NULL}, {2, c}}; /* (0, 29) twice: the last wins */
  check(h5sparse_dwrite_coo(dset, 4, &coords[0][0], in_type, in, H5P_DEFAULT) >= 0, "sequences written by coo");
  static struct sequence_room room;
  memset(&room, 0, sizeof room);
  check(h5sparse_dread_coo(dset, H5S_ALL, out_type, SIZE_MAX, NULL, give_sequence_room, NULL, &room, H5P_DEFAULT) == 0,
        "sequences read into the caller's memory");
  const double *first = room.values[0].p, *third = room.values[2].p;
  check(room.n == 3 && room.coords[0][0] == 0 && room.coords[0][1] == 29 && room.coords[1][1] == 2 &&
            room.coords[2][1] == 3,
        "three elements in row-major order");
  check(room.values[0].len == 2 && first[0] == -7 && first[1] == 7, "the last write of (0, 29), as double");
  check(room.values[1].len == 0, "an empty sequence");
  check(room.values[2].len == 3 && third[0] == 1 && third[1] == -2 && third[2] == 300, "(7, 3) as double");
  reclaim(out_type, room.n, room.values, "sequences");
  H5Tclose(file_type), H5Tclose(in_type), H5Tclose(out_type);
  H5Dclose(dset);
}

/* A compound {int id; char *name} in the dataset's own type (as H5Dwrite takes it). */
struct named {
  int id;
  char *name;
};

struct named_room {
  size_t n;
  hsize_t coords[4][2];
  struct named values[4];
};

static herr_t give_named_room(size_t n, hsize_t **coords, void **values, void *op_data) {
  struct named_room *r = op_data;
  if (r->n + n > 4) return -1;
  *coords = &r->coords[r->n][0];
  *values = &r->values[r->n];
  r->n += n;
  return 0;
}

static void compounds(hid_t file) {
  hid_t string = utf8_string(), type = H5Tcreate(H5T_COMPOUND, sizeof(struct named));
  H5Tinsert(type, "id", HOFFSET(struct named, id), H5T_NATIVE_INT);
  H5Tinsert(type, "name", HOFFSET(struct named, name), string);
  hid_t dset = create(file, "compounds", type);
  check(dset >= 0, "compound dataset created");
  const hsize_t coords[3][2] = {{9, 9}, {2, 5}, {9, 9}};
  const struct named in[3] = {{1, "first"}, {2, NULL}, {3, "third"}};
  check(h5sparse_dwrite_coo(dset, 3, &coords[0][0], type, in, H5P_DEFAULT) >= 0, "compounds written by coo");
  static struct named_room room;
  memset(&room, 0, sizeof room);
  check(h5sparse_dread_coo(dset, H5S_ALL, type, SIZE_MAX, NULL, give_named_room, NULL, &room, H5P_DEFAULT) == 0,
        "compounds read into the caller's memory");
  check(room.n == 2 && room.coords[0][0] == 2 && room.coords[1][0] == 9, "two elements in row-major order");
  check(room.values[0].id == 2 && room.values[0].name == NULL, "(2, 5): a NULL name");
  check(room.values[1].id == 3 && room.values[1].name && strcmp(room.values[1].name, "third") == 0,
        "(9, 9): the last write");
  reclaim(type, room.n, room.values, "names");
  H5Tclose(type), H5Tclose(string);
  H5Dclose(dset);
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "coordinate_io_vl.h5";
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  check(file >= 0, "file created");
  strings(file);
  sequences(file);
  compounds(file);
  H5Fclose(file);
  return finish_checks();
}
