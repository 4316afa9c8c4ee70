/* Direct structured-chunk I/O and native chunk operations on sparse datasets, through the
 * connector, on a real file:
 *  1. Iteration visits each stored chunk once (the same set H5Dchunk_iter lists), and what it
 *     reports agrees with every other query: size-only reads, info by coordinate and by index,
 *     H5Dget_chunk_info_by_coord, H5Dget_chunk_storage_size (stored size = 60-byte header +
 *     the sections' stored sizes).
 *  2. Sections read from one dataset and written into another (from inside the iteration
 *     callback) reproduce it exactly: values, defined elements, stored bytes.
 *  3. Info by index honours a selection; unstored chunks report size 0; the callback's stop
 *     and failure values are passed on; a too-small buffer is refused with the sizes filled.
 *  4. Bad direct writes (sizes, masks, swapped or truncated sections, offsets, section count)
 *     and invalid H5Dwrite_chunk bytes or masks are refused with an h5sparse error, and the
 *     chunk stored before is untouched; valid structured-chunk bytes pass H5Dwrite_chunk.
 *  5. Dense datasets: the struct-chunk functions fail clearly; H5Dget_offset of a sparse
 *     (chunked) dataset is HADDR_UNDEF. No identifiers leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../c/test_support.h"
#include "h5sparse.h"

enum { ROWS = 40, COLS = 50, CR = 8, CC = 10, FILL = -1, MAX_CHUNKS = 64 };

static hid_t make_dataset(hid_t file, const char *name) {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  const hsize_t chunk[2] = {CR, CC}, dims[2] = {ROWS, COLS};
  h5sparse_pset_sparse_chunk(dcpl, 2, chunk);
  const int fill = FILL;
  H5Pset_fill_value(dcpl, H5T_NATIVE_INT, &fill);
  const unsigned level = 6, blosc[7] = {0, 0, 0, 0, 5, 1, 1};
  h5sparse_pset_section_filter(dcpl, H5SPARSE_SECTION_SELECTION, H5Z_FILTER_DEFLATE, 0, 1, &level);
  h5sparse_pset_section_filter(dcpl, H5SPARSE_SECTION_VALUES, 32001, H5Z_FLAG_OPTIONAL, 7, blosc);
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dset = H5Dcreate2(file, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  check(dset >= 0, "%s created", name);
  H5Sclose(space);
  H5Pclose(dcpl);
  return dset;
}

/* Scattered points, a hyperslab across chunks, a full chunk, and a chunk erased to empty. */
static void fill_source(hid_t dset) {
  static int values[ROWS][COLS];
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++) values[r][c] = r * 100 + c;
  hid_t space = H5Dget_space(dset);
  hsize_t points[60][2];
  for (int i = 0; i < 60; i++) {
    points[i][0] = (hsize_t)((i * 7) % ROWS);
    points[i][1] = (hsize_t)((i * 13) % COLS);
  }
  H5Sselect_elements(space, H5S_SELECT_SET, 60, &points[0][0]);
  check(H5Dwrite(dset, H5T_NATIVE_INT, space, space, H5P_DEFAULT, values) >= 0, "points written");
  const hsize_t start[2] = {3, 5}, count[2] = {9, 20}, full0[2] = {16, 20}, full1[2] = {CR, CC};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  H5Sselect_hyperslab(space, H5S_SELECT_OR, full0, NULL, full1, NULL);
  check(H5Dwrite(dset, H5T_NATIVE_INT, space, space, H5P_DEFAULT, values) >= 0, "source written");
  const hsize_t corner[2] = {32, 40};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, corner, NULL, full1, NULL);
  H5Dwrite(dset, H5T_NATIVE_INT, space, space, H5P_DEFAULT, values);
  check(h5sparse_derase(dset, space, H5P_DEFAULT) >= 0, "corner chunk erased (stored, empty)");
  H5Sclose(space);
}

/* Whether the error stack holds a record whose message contains `needle`. */
static herr_t find_message(unsigned n, const H5E_error2_t *err, void *data) {
  (void)n;
  const char **needle = (const char **)data;
  if (*needle && err->desc && strstr(err->desc, *needle)) *needle = NULL;
  return 0;
}
static int error_mentions(const char *needle) {
  const char *left = needle;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_message, &left);
  return left == NULL;
}

struct Visit {
  hid_t source, target;
  int count;
  hsize_t offsets[MAX_CHUNKS][2];
  int stop_after; /* > 0: return 7 after that many chunks; < 0: fail at once */
};

static int copy_chunk(const hsize_t *offset, h5sparse_struct_chunk_info_t *info, haddr_t *addr, hsize_t *size,
                      size_t op_data_size, void *op_data) {
  struct Visit *v = (struct Visit *)op_data;
  check(op_data_size == sizeof *v, "op_data_size passed through");
  if (v->stop_after < 0) return -1;
  if (v->count >= MAX_CHUNKS) return -1;
  v->offsets[v->count][0] = offset[0];
  v->offsets[v->count][1] = offset[1];
  v->count++;
  if (v->stop_after > 0) return v->count == v->stop_after ? 7 : 0;
  check(info->num_sections == 2 && info->sections[0] == H5SPARSE_SECTION_SELECTION &&
            info->sections[1] == H5SPARSE_SECTION_VALUES, "two sections");
  /* Header of format version 2: 17-57 bytes (docs/FORMAT.md). */
  const hsize_t sections = info->section_size[0] + info->section_size[1];
  check(*size >= 17 + sections && *size <= 57 + sections, "chunk size = header + sections");
  hsize_t storage = 0;
  H5Dget_chunk_storage_size(v->source, offset, &storage);
  check(storage == *size, "H5Dget_chunk_storage_size agrees (%llu, %llu)", (unsigned long long)storage,
        (unsigned long long)*size);
  unsigned mask = 99;
  haddr_t native_addr = 0;
  hsize_t native_size = 0;
  H5Dget_chunk_info_by_coord(v->source, offset, &mask, &native_addr, &native_size);
  check(mask == 0 && native_addr == *addr && native_size == *size, "H5Dget_chunk_info_by_coord agrees");
  h5sparse_struct_chunk_info_t by_coord, sized;
  haddr_t a2 = 0;
  hsize_t s2 = 0;
  check(h5sparse_dget_struct_chunk_info_by_coord(v->source, offset, &by_coord, &a2, &s2) >= 0 &&
            memcmp(&by_coord, info, sizeof by_coord) == 0 && a2 == *addr && s2 == *size,
        "info by coordinate agrees");
  check(h5sparse_dread_struct_chunk(v->source, H5P_DEFAULT, offset, &sized, NULL) >= 0 &&
            memcmp(&sized, info, sizeof sized) == 0, "size-only read agrees");
  void *buf[2] = {malloc(sized.section_size[0] + 1), malloc(sized.section_size[1] + 1)};
  check(h5sparse_dread_struct_chunk(v->source, H5P_DEFAULT, offset, &sized, buf) >= 0, "sections read");
  check(h5sparse_dwrite_struct_chunk(v->target, H5P_DEFAULT, &sized, offset, (const void *const *)buf) >= 0,
        "sections written into the copy");
  free(buf[0]);
  free(buf[1]);
  return 0;
}

static void read_all(hid_t dset, int out[ROWS][COLS]) {
  check(H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0, "dataset read");
}

static hssize_t defined_points(hid_t dset, hsize_t **coords) {
  hid_t defined = h5sparse_dget_defined(dset, H5S_ALL, H5P_DEFAULT);
  const hssize_t n = H5Sget_select_npoints(defined);
  *coords = malloc(sizeof(hsize_t) * 2 * (size_t)(n > 0 ? n : 1));
  if (n > 0) H5Sget_select_elem_pointlist(defined, 0, (hsize_t)n, *coords);
  H5Sclose(defined);
  return n;
}

/* The stored bytes of one chunk (H5Dread_chunk), malloc'ed; *size 0 when none. */
static unsigned char *stored_chunk(hid_t dset, const hsize_t *offset, hsize_t *size) {
  *size = 0;
  haddr_t addr;
  unsigned mask;
  H5Dget_chunk_info_by_coord(dset, offset, &mask, &addr, size);
  if (*size == 0) return NULL;
  unsigned char *b = malloc(*size);
  uint32_t filters = 99;
  check(H5Dread_chunk(dset, H5P_DEFAULT, offset, &filters, b) >= 0 && filters == 0, "H5Dread_chunk, mask 0");
  return b;
}

static void copy_and_compare(hid_t file) {
  hid_t src = make_dataset(file, "source"), dst = make_dataset(file, "copy");
  fill_source(src);
  struct Visit v = {src, dst, 0, {{0}}, 0};
  check(h5sparse_dstruct_chunk_iter(src, H5P_DEFAULT, copy_chunk, sizeof v, &v) == 0, "iteration completes");
  hsize_t nchunks = 0;
  H5Dget_num_chunks(src, H5S_ALL, &nchunks);
  check(v.count == (int)nchunks && nchunks > 5, "each stored chunk visited (%d visits, %llu chunks)", v.count,
        (unsigned long long)nchunks);
  for (int i = 0; i < v.count; i++)
    for (int j = 0; j < i; j++)
      check(v.offsets[i][0] != v.offsets[j][0] || v.offsets[i][1] != v.offsets[j][1], "visited once");
  for (hsize_t k = 0; k < nchunks; k++) {
    hsize_t off[2], native_off[2], size = 0, native_size = 0;
    haddr_t addr, native_addr;
    unsigned mask;
    h5sparse_struct_chunk_info_t info;
    check(h5sparse_dget_struct_chunk_info(src, H5S_ALL, k, off, &info, &addr, &size) >= 0, "info by index");
    H5Dget_chunk_info(src, H5S_ALL, k, native_off, &mask, &native_addr, &native_size);
    check(off[0] == native_off[0] && off[1] == native_off[1] && addr == native_addr && size == native_size,
          "info by index %llu agrees with H5Dget_chunk_info", (unsigned long long)k);
  }
  static int a[ROWS][COLS], b[ROWS][COLS];
  read_all(src, a);
  read_all(dst, b);
  check(memcmp(a, b, sizeof a) == 0, "copied values identical");
  hsize_t *pa, *pb;
  const hssize_t na = defined_points(src, &pa), nb = defined_points(dst, &pb);
  check(na > 0 && na == nb && memcmp(pa, pb, sizeof(hsize_t) * 2 * (size_t)na) == 0,
        "copied defined elements identical (%lld, %lld)", (long long)na, (long long)nb);
  free(pa);
  free(pb);
  for (int i = 0; i < v.count; i++) {
    hsize_t sa, sb;
    unsigned char *ba = stored_chunk(src, v.offsets[i], &sa), *bb = stored_chunk(dst, v.offsets[i], &sb);
    check(sa > 0 && sa == sb && memcmp(ba, bb, sa) == 0, "stored bytes identical");
    free(ba);
    free(bb);
  }

  /* Index within a selection: the chunks meeting rows 0-9, columns 0-19 (row 0-15 chunk band). */
  hid_t sel = H5Dget_space(src);
  const hsize_t start[2] = {0, 0}, count[2] = {10, 20};
  H5Sselect_hyperslab(sel, H5S_SELECT_SET, start, NULL, count, NULL);
  int expect = 0;
  for (int i = 0; i < v.count; i++) expect += v.offsets[i][0] < 10 && v.offsets[i][1] < 20;
  int got = 0;
  for (hsize_t k = 0;; k++) {
    hsize_t off[2];
    herr_t rc;
    H5E_BEGIN_TRY { rc = h5sparse_dget_struct_chunk_info(src, sel, k, off, NULL, NULL, NULL); }
    H5E_END_TRY
    if (rc < 0) break;
    check(off[0] < 10 && off[1] < 20, "chunk meets the selection");
    got++;
  }
  check(got == expect && expect > 0, "chunks meeting a selection: %d, expected %d", got, expect);
  H5Sclose(sel);

  /* Unstored chunk: size 0, address undefined, info untouched. */
  hsize_t none[2] = {0, 0};
  for (int stored = 1; stored;) { /* the first chunk of the grid that is not stored */
    stored = 0;
    for (int i = 0; i < v.count; i++) stored |= v.offsets[i][0] == none[0] && v.offsets[i][1] == none[1];
    if (stored && (none[1] += CC) >= COLS) none[1] = 0, none[0] += CR;
  }
  check(none[0] < ROWS, "some chunk is not stored");
  h5sparse_struct_chunk_info_t untouched;
  memset(&untouched, 0xAB, sizeof untouched);
  haddr_t addr = 0;
  hsize_t size = 1;
  check(h5sparse_dget_struct_chunk_info_by_coord(src, none, &untouched, &addr, &size) >= 0 && size == 0 &&
            addr == HADDR_UNDEF && untouched.num_sections == 0xAB, "unstored chunk: size 0, info untouched");

  /* Stop and failure values of the callback. */
  struct Visit stop = {src, dst, 0, {{0}}, 2}, fail = {src, dst, 0, {{0}}, -1};
  check(h5sparse_dstruct_chunk_iter(src, H5P_DEFAULT, copy_chunk, sizeof stop, &stop) == 7 && stop.count == 2,
        "a positive callback value stops the iteration and is returned");
  herr_t rc;
  H5E_BEGIN_TRY { rc = h5sparse_dstruct_chunk_iter(src, H5P_DEFAULT, copy_chunk, sizeof fail, &fail); }
  H5E_END_TRY
  check(rc < 0, "a negative callback value fails the iteration");

  /* A too-small buffer: refused, nothing copied, the sizes filled in. */
  h5sparse_struct_chunk_info_t info;
  memset(&info, 0, sizeof info);
  unsigned char small0[1] = {0x5A}, small1[1] = {0x5A};
  void *small[2] = {small0, small1};
  H5E_BEGIN_TRY { rc = h5sparse_dread_struct_chunk(src, H5P_DEFAULT, v.offsets[0], &info, small); }
  H5E_END_TRY
  check(rc < 0 && info.section_size[0] > 1 && small0[0] == 0x5A, "too-small buffer refused, sizes reported");
  H5Dclose(src);
  H5Dclose(dst);
}

/* Direct writes that must be refused, each leaving the stored chunk as it was. */
static void bad_writes(hid_t file) {
  hid_t dset = H5Dopen2(file, "source", H5P_DEFAULT);
  const hsize_t at[2] = {0, 0};
  h5sparse_struct_chunk_info_t good;
  check(h5sparse_dread_struct_chunk(dset, H5P_DEFAULT, at, &good, NULL) >= 0, "size query");
  void *buf[2] = {malloc(good.section_size[0]), malloc(good.section_size[1])};
  h5sparse_dread_struct_chunk(dset, H5P_DEFAULT, at, &good, buf);
  hsize_t before_size;
  unsigned char *before = stored_chunk(dset, at, &before_size);
  static int before_values[ROWS][COLS], after_values[ROWS][COLS];
  read_all(dset, before_values);

  struct Case {
    const char *what, *needle;
    h5sparse_struct_chunk_info_t info;
    const hsize_t *offset;
    int swap;
  } cases[9];
  const hsize_t unaligned[2] = {1, 0}, outside[2] = {ROWS, 0};
  for (int i = 0; i < 9; i++) {
    cases[i].info = good;
    cases[i].offset = at;
    cases[i].swap = 0;
  }
  cases[0].what = "one value more than defined", cases[0].needle = "section 1";
  cases[0].info.section_orig_size[1] += 4;
  cases[1].what = "mask naming a filter the section lacks", cases[1].needle = "names filters beyond";
  cases[1].info.filter_mask[0] = 2;
  cases[2].what = "deflate stream marked unfiltered", cases[2].needle = "section 0";
  cases[2].info.filter_mask[0] = 1;
  cases[3].what = "truncated section", cases[3].needle = "not a structured chunk";
  cases[3].info.section_size[1] -= 1;
  cases[4].what = "sections swapped", cases[4].needle = "not a structured chunk";
  cases[4].swap = 1;
  cases[5].what = "unaligned offset", cases[5].needle = "is not the first element of a chunk";
  cases[5].offset = unaligned;
  cases[6].what = "offset outside the extent", cases[6].needle = "inside the extent";
  cases[6].offset = outside;
  cases[7].what = "one section", cases[7].needle = "2 sections";
  cases[7].info.num_sections = 1;
  cases[8].what = "unfiltered size of the selection off", cases[8].needle = "section 0";
  cases[8].info.section_orig_size[0] += 1;
  for (int i = 0; i < 9; i++) {
    struct Case *c = &cases[i];
    const void *b[2] = {c->swap ? buf[1] : buf[0], c->swap ? buf[0] : buf[1]};
    if (c->swap) {
      size_t t = c->info.section_size[0];
      c->info.section_size[0] = c->info.section_size[1], c->info.section_size[1] = t;
      t = c->info.section_orig_size[0];
      c->info.section_orig_size[0] = c->info.section_orig_size[1], c->info.section_orig_size[1] = t;
      uint32_t m = c->info.filter_mask[0];
      c->info.filter_mask[0] = c->info.filter_mask[1], c->info.filter_mask[1] = m;
    }
    herr_t rc;
    H5E_BEGIN_TRY { rc = h5sparse_dwrite_struct_chunk(dset, H5P_DEFAULT, &c->info, c->offset, b); }
    H5E_END_TRY
    check(rc < 0, "refused: %s", c->what);
    check(error_mentions(c->needle), "%s: the error says '%s'", c->what, c->needle);
  }
  /* Native H5Dwrite_chunk: garbage, a damaged chunk, a dense chunk with the filter skipped. */
  unsigned char *damaged = malloc(before_size);
  memcpy(damaged, before, before_size);
  damaged[before_size - 1] ^= 0x40;
  static int dense[CR * CC];
  struct {
    const char *what;
    uint32_t mask;
    const void *bytes;
    size_t size;
  } natives[3] = {{"garbage", 0, "not a chunk at all, just text", 29},
                  {"damaged chunk", 0, damaged, before_size},
                  {"dense chunk, filter skipped", 1, dense, sizeof dense}};
  for (int i = 0; i < 3; i++) {
    herr_t rc;
    H5E_BEGIN_TRY { rc = H5Dwrite_chunk(dset, H5P_DEFAULT, natives[i].mask, at, natives[i].size, natives[i].bytes); }
    H5E_END_TRY
    check(rc < 0, "H5Dwrite_chunk refused: %s", natives[i].what);
  }
  free(damaged);
  hsize_t after_size;
  unsigned char *after = stored_chunk(dset, at, &after_size);
  check(after_size == before_size && memcmp(before, after, before_size) == 0, "stored chunk untouched");
  read_all(dset, after_values);
  check(memcmp(before_values, after_values, sizeof before_values) == 0, "stored values untouched");

  /* Valid structured-chunk bytes pass H5Dwrite_chunk (into a second dataset). */
  hid_t other = make_dataset(file, "native_copy");
  check(H5Dwrite_chunk(other, H5P_DEFAULT, 0, at, before_size, before) >= 0, "H5Dwrite_chunk of a structured chunk");
  static int copied[ROWS][COLS];
  read_all(other, copied);
  int same = 1;
  for (int r = 0; r < CR; r++)
    for (int c = 0; c < CC; c++) same = same && copied[r][c] == before_values[r][c];
  check(same, "H5Dwrite_chunk copy reads back the chunk's values");
  check(H5Dget_offset(other) == HADDR_UNDEF, "H5Dget_offset: HADDR_UNDEF (chunked)");
  H5Dclose(other);
  free(before);
  free(after);
  free(buf[0]);
  free(buf[1]);
  H5Dclose(dset);
}

static void dense_dataset(hid_t file) {
  const hsize_t dims[2] = {ROWS, COLS}, chunk[2] = {CR, CC}, at[2] = {0, 0};
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dset = H5Dcreate2(file, "dense", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  static int v[ROWS][COLS];
  H5Dwrite(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  h5sparse_struct_chunk_info_t info;
  herr_t rc;
  H5E_BEGIN_TRY { rc = h5sparse_dread_struct_chunk(dset, H5P_DEFAULT, at, &info, NULL); }
  H5E_END_TRY
  check(rc < 0 && error_mentions("not sparse"), "dense: struct-chunk read refused, saying why");
  H5Sclose(space);
  H5Pclose(dcpl);
  H5Dclose(dset);
}

int main(int argc, char **argv) {
  (void)mapped; /* shared helper, not needed here */
  const char *path = argc > 1 ? argv[1] : "struct_chunk_io.h5";
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  char version[64] = "";
  check(h5sparse_connector_version(file, version, sizeof version) >= 0, "the h5sparse connector is in use");
  copy_and_compare(file);
  H5Fclose(file);
  file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  bad_writes(file);
  dense_dataset(file);
  check(H5Fget_obj_count(file, H5F_OBJ_ALL) == 1, "only the file itself is open");
  H5Fclose(file);
  check(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0, "no identifiers leaked");
  printf("%s: %d of %d checks failed (%s)\n", g_failures ? "FAILED" : "passed", g_failures, g_checks, version);
  return g_failures ? 1 : 0;
}
