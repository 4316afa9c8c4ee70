/* Variable-length sparse datasets from C through the connector, on a real file:
 *  1. A UTF-8 string dataset: H5Dget_type gives the true type; char* values written with NULL
 *     and "" apart read back apart (NULL pointer, empty string), undefined elements NULL;
 *     H5Dvlen_get_buf_size counts each string and its terminator; H5Treclaim frees the read.
 *  2. H5Pset_vlen_mem_manager: reads allocate through it and H5Treclaim frees through it.
 *  3. A sequence dataset of little-endian int32 written as hvl_t of short and read as hvl_t of
 *     long long (base conversion both ways); H5Dvlen_get_buf_size in the memory base's size.
 *  4. A memory type that is not variable-length is refused and changes nothing.
 *  5. H5Dset_extent shrinks and grows: only elements inside both extents stay defined.
 * No identifiers leak. */
#include <stdlib.h>
#include <string.h>

#include "h5sparse.h"
#include "../c/test_support.h"

enum { N = 8 };

static hid_t create(hid_t file, const char *name, hid_t type) {
  const hsize_t dims[1] = {N}, max[1] = {H5S_UNLIMITED}, chunk[1] = {4};
  const unsigned level = 6;
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  h5sparse_pset_sparse_chunk(dcpl, 1, chunk);
  check(h5sparse_pset_section_filter(dcpl, 3, 1, 0, 1, &level) >= 0, "deflate on section 3 (data)");
  hid_t space = H5Screate_simple(1, dims, max);
  hid_t dset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Sclose(space);
  H5Pclose(dcpl);
  return dset;
}

static hid_t utf8_string(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

static hid_t first(hsize_t n, hid_t dset) {
  hid_t space = H5Dget_space(dset);
  const hsize_t start[1] = {0}, count[1] = {n};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
  return space;
}

static int defined_count(hid_t dset) {
  hid_t defined = h5sparse_dget_defined(dset, H5S_ALL, H5P_DEFAULT);
  const int n = defined >= 0 ? (int)H5Sget_select_npoints(defined) : -1;
  if (defined >= 0) H5Sclose(defined);
  return n;
}

static void strings(hid_t file) {
  hid_t type = utf8_string();
  hid_t dset = create(file, "s", type);
  check(dset >= 0, "string dataset created");
  check(h5sparse_pget_section_nfilters(dset, 3) == 1 && h5sparse_pget_section_nfilters(dset, 2) == 0,
        "the dataset keeps the data section's pipeline");
  hid_t got = H5Dget_type(dset);
  check(H5Tis_variable_str(got) > 0 && H5Tget_cset(got) == H5T_CSET_UTF8, "H5Dget_type gives the UTF-8 string");
  H5Tclose(got);
  const char *in[4] = {"ab", NULL, "", "h\xc3\xa9llo"};
  hid_t mem = H5Screate_simple(1, (hsize_t[]){4}, NULL), file_space = first(4, dset);
  check(H5Dwrite(dset, type, mem, file_space, H5P_DEFAULT, in) >= 0, "strings written");
  char *out[N];
  memset(out, 0x55, sizeof out);
  check(H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0, "strings read");
  check(out[0] && strcmp(out[0], "ab") == 0, "\"ab\"");
  check(out[1] == NULL, "NULL stays NULL");
  check(out[2] && out[2][0] == '\0', "\"\" stays an empty string");
  check(out[3] && strcmp(out[3], in[3]) == 0, "multibyte UTF-8");
  check(out[4] == NULL && out[N - 1] == NULL, "undefined elements read as NULL");
  hsize_t size = 0;
  hid_t all = H5Dget_space(dset);
  check(H5Dvlen_get_buf_size(dset, type, all, &size) >= 0 && size == 3 + 1 + 7,
        "H5Dvlen_get_buf_size: strings and terminators (%llu)", (unsigned long long)size);
  check(H5Treclaim(type, all, H5P_DEFAULT, out) >= 0, "H5Treclaim frees the strings");
  check(defined_count(dset) == 4, "NULL and empty written values are defined");
  const int one = 1;
  hid_t point = first(1, dset), one_space = H5Screate(H5S_SCALAR);
  H5E_BEGIN_TRY { check(H5Dwrite(dset, H5T_NATIVE_INT, one_space, point, H5P_DEFAULT, &one) < 0, "an int is refused"); }
  H5E_END_TRY
  H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out);
  check(out[0] && strcmp(out[0], "ab") == 0, "a refused write changes nothing");
  H5Treclaim(type, all, H5P_DEFAULT, out);
  /* 5. Shrink to 3 (the first chunk straddles the new extent), grow back to N. */
  check(H5Dset_extent(dset, (hsize_t[]){3}) >= 0 && H5Dset_extent(dset, (hsize_t[]){N}) >= 0, "extent changed");
  check(defined_count(dset) == 3, "elements cut off by the shrink are no longer defined");
  check(H5Dread(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0, "read after the extent change");
  check(out[0] && strcmp(out[0], "ab") == 0 && out[2] && out[2][0] == '\0' && out[3] == NULL, "kept and cut elements");
  H5Treclaim(type, all, H5P_DEFAULT, out);
  H5Sclose(one_space), H5Sclose(point), H5Sclose(all), H5Sclose(file_space), H5Sclose(mem);
  H5Tclose(type);
  H5Dclose(dset);
}

static int allocations, frees;
static void *counting_alloc(size_t size, void *info) {
  (void)info;
  ++allocations;
  return malloc(size);
}
static void counting_free(void *p, void *info) {
  (void)info;
  frees += p != NULL;  /* H5Treclaim also passes the NULL of every NULL string */
  free(p);
}

static void memory_manager(hid_t file) {
  hid_t dset = H5Dopen2(file, "s", H5P_DEFAULT), type = H5Dget_type(dset), space = H5Dget_space(dset);
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_vlen_mem_manager(dxpl, counting_alloc, NULL, counting_free, NULL);
  char *out[N];
  check(H5Dread(dset, type, H5S_ALL, H5S_ALL, dxpl, out) >= 0, "read with a memory manager");
  check(allocations == 2, "one allocation per non-NULL string (%d)", allocations);
  const herr_t reclaimed = H5Treclaim(type, space, dxpl, out);
  check(reclaimed >= 0 && frees == 2, "H5Treclaim frees through it (%d, %d)", (int)reclaimed, frees);
  H5Pclose(dxpl), H5Sclose(space), H5Tclose(type), H5Dclose(dset);
}

static void sequences(hid_t file) {
  hid_t file_type = H5Tvlen_create(H5T_STD_I32LE), shorts = H5Tvlen_create(H5T_NATIVE_SHORT);
  hid_t longs = H5Tvlen_create(H5T_NATIVE_LLONG);
  hid_t dset = create(file, "v", file_type);
  check(dset >= 0, "sequence dataset created");
  short a[3] = {1, -2, 3}, b[2] = {30000, -30000};
  hvl_t in[3] = {{3, a}, {0, NULL}, {2, b}};
  hid_t mem = H5Screate_simple(1, (hsize_t[]){3}, NULL), file_space = first(3, dset);
  check(H5Dwrite(dset, shorts, mem, file_space, H5P_DEFAULT, in) >= 0, "sequences of short written");
  hvl_t out[3];
  check(H5Dread(dset, longs, mem, file_space, H5P_DEFAULT, out) >= 0, "read as long long");
  const long long *x = out[0].p, *y = out[2].p;
  check(out[0].len == 3 && x[0] == 1 && x[1] == -2 && x[2] == 3, "converted values");
  check(out[1].len == 0 && out[1].p == NULL, "an empty sequence");
  check(out[2].len == 2 && y[0] == 30000 && y[1] == -30000, "converted values");
  hsize_t size = 0;
  check(H5Dvlen_get_buf_size(dset, longs, file_space, &size) >= 0 && size == 5 * sizeof(long long),
        "H5Dvlen_get_buf_size in the memory base's size (%llu)", (unsigned long long)size);
  H5Treclaim(longs, mem, H5P_DEFAULT, out);
  H5Sclose(file_space), H5Sclose(mem);
  H5Tclose(longs), H5Tclose(shorts), H5Tclose(file_type);
  H5Dclose(dset);
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "var_length_io.h5";
  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  check(file >= 0, "file created");
  strings(file);
  memory_manager(file);
  sequences(file);
  H5Fclose(file);
  return finish_checks();
}
