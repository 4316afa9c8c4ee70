/* read_dataset FILE DSET [OUT]: H5Dreads one dataset as its native type (compound types
 * packed, members in file order, so the bytes match a packed numpy dtype) and writes the
 * raw bytes to OUT, or to stdout when OUT is missing or "-".
 *
 * On stderr it reports, one per line, what the interop tests check:
 *   elements N            element_size S
 *   filter ID NAME CD...  (one line per filter of the dataset's pipeline)
 *   plugin PATH           (every shared object mapped from a directory named "plugins",
 *                          i.e. which filter plugin the read actually loaded)
 * Exit status 0 on success; 1 (with HDF5's error stack on stderr) when any call fails. */
#include <hdf5.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void report_plugins(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return;
  char line[4096];
  char seen[64][1024];
  int nseen = 0;
  while (fgets(line, sizeof line, maps) != NULL) {
    char* path = strchr(line, '/');
    if (path == NULL) continue;
    path[strcspn(path, "\n")] = '\0';
    if (strstr(path, "/plugins/") == NULL || strstr(path, ".so") == NULL) continue;
    int dup = 0;
    for (int i = 0; i < nseen; ++i) dup |= strcmp(seen[i], path) == 0;
    if (dup || nseen == 64) continue;
    snprintf(seen[nseen++], sizeof seen[0], "%s", path);
    fprintf(stderr, "plugin %s\n", path);
  }
  fclose(maps);
}

static void report_filters(hid_t dset) {
  hid_t dcpl = H5Dget_create_plist(dset);
  if (dcpl < 0) return;
  int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, cd[32];
    size_t ncd = 32;
    char name[256] = "";
    H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
    fprintf(stderr, "filter %d %s", (int)id, name[0] ? name : "-");
    for (size_t k = 0; k < ncd && k < 32; ++k) fprintf(stderr, " %u", cd[k]);
    fputc('\n', stderr);
  }
  H5Pclose(dcpl);
}

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s FILE DSET [OUT]\n", argv[0]);
    return 2;
  }
  int status = 1;
  hid_t file = -1, dset = -1, ftype = -1, mtype = -1, space = -1;
  void* data = NULL;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* printed once below, on failure */

  if ((file = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) goto done;
  if ((dset = H5Dopen2(file, argv[2], H5P_DEFAULT)) < 0) goto done;
  if ((ftype = H5Dget_type(dset)) < 0) goto done;
  if ((mtype = H5Tget_native_type(ftype, H5T_DIR_ASCEND)) < 0) goto done;
  if (H5Tget_class(mtype) == H5T_COMPOUND && H5Tpack(mtype) < 0) goto done;
  if ((space = H5Dget_space(dset)) < 0) goto done;
  hssize_t npoints = H5Sget_simple_extent_npoints(space);
  size_t size = H5Tget_size(mtype);
  if (npoints < 0 || size == 0) goto done;
  report_filters(dset);
  fprintf(stderr, "elements %lld\nelement_size %zu\n", (long long)npoints, size);
  data = malloc(npoints > 0 ? (size_t)npoints * size : 1);
  if (data == NULL) {
    fprintf(stderr, "out of memory\n");
    goto done;
  }
  if (H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) goto done;
  report_plugins();

  FILE* out = (argc == 4 && strcmp(argv[3], "-") != 0) ? fopen(argv[3], "wb") : stdout;
  if (out == NULL) {
    perror(argv[3]);
    goto done;
  }
  size_t total = (size_t)npoints * size;
  int ok = fwrite(data, 1, total, out) == total;
  ok &= (out == stdout ? fflush(out) : fclose(out)) == 0;
  if (!ok) {
    fprintf(stderr, "cannot write the data\n");
    goto done;
  }
  status = 0;

done:
  if (status != 0) H5Eprint2(H5E_DEFAULT, stderr);
  free(data);
  if (space >= 0) H5Sclose(space);
  if (mtype >= 0) H5Tclose(mtype);
  if (ftype >= 0) H5Tclose(ftype);
  if (dset >= 0) H5Dclose(dset);
  if (file >= 0) H5Fclose(file);
  return status;
}
