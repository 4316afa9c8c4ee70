/* LD_PRELOAD helper of the connector tests; does nothing unless one of its variables is set.
 *
 * H5SPARSE_VOL_TRACE=<file>: counts the calls a passthrough connector makes into the connector
 *   below it (H5VLfile_open, H5VLdataset_read, ...) and appends one line with the counts to
 *   <file> when the process exits. HDF5 itself never calls these public passthrough wrappers
 *   (its own dispatch uses internal functions) and the command-line tools do not call them
 *   either, so a non-zero H5VLfile_open count proves that a file of the traced process was
 *   opened through the h5sparse connector, and an H5VLdataset_read count that data was read
 *   through it. The calls are forwarded unchanged to the real functions (dlsym RTLD_NEXT).
 *
 *   It also counts the application's own H5Fopen, H5Fcreate, H5Dread, H5Dwrite and H5Aread
 *   calls ("api_*"), each of which reaches the top connector exactly once, unless the caller
 *   chose another connector for it; failed H5Fopen calls are counted too ("api_fopen_fail",
 *   and "api_fopen_first_fail" when the very first one failed). And of the H5Dread, H5Dwrite
 *   and H5Aread calls, those made on an object whose connector is h5sparse ("top_*"): HDF5
 *   hands each of them to h5sparse's callback, also when h5sparse then calls the native
 *   connector's class callbacks directly, without the wrappers above.
 *
 * H5SPARSE_FROZEN_TIME=<seconds since 1970>: gettimeofday() and time() return that instant,
 *   so the modification times HDF5 stores in object headers are the same in every run and
 *   files written in two runs can be compared byte for byte.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>
#include <H5VLconnector_passthru.h>

#define EXPORT __attribute__((visibility("default")))

enum { FILE_CREATE, FILE_OPEN, FILE_CLOSE, DATASET_OPEN, DATASET_READ, DATASET_WRITE, GROUP_OPEN,
       OBJECT_OPEN, ATTR_READ, ATTR_WRITE, API_FCREATE, API_FOPEN, API_DREAD, API_DWRITE, API_AREAD,
       API_FOPEN_FAIL, API_FOPEN_FIRST_FAIL, TOP_DREAD, TOP_DWRITE, TOP_AREAD, N_COUNTERS };
static const char *const counter_names[N_COUNTERS] = {
    "file_create", "file_open", "file_close", "dataset_open", "dataset_read", "dataset_write",
    "group_open", "object_open", "attr_read", "attr_write",
    "api_fcreate", "api_fopen", "api_dread", "api_dwrite", "api_aread", "api_fopen_fail", "api_fopen_first_fail",
    "top_dread", "top_dwrite", "top_aread"};
static unsigned long counters[N_COUNTERS];

/* dl_iterate_phdr callback: a handle on the HDF5 library (libhdf5*.so, not the _hl one). */
static int find_hdf5(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  const char *base = strrchr(info->dlpi_name, '/');
  base = base ? base + 1 : info->dlpi_name;
  if (strncmp(base, "libhdf5", 7) != 0 || strstr(base, "_hl") != NULL) return 0;
  void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (h == NULL || dlsym(h, "H5open") == NULL) return 0;
  *(void **)data = h;
  return 1;
}

/* The real function: the next definition in the global scope (programs linked with HDF5, libc),
 * else the one of the HDF5 library that was loaded privately (Python extension modules are
 * loaded RTLD_LOCAL, so h5py's HDF5 is not in the global scope). */
static void *next(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (f == NULL) {
    static void *hdf5 = NULL;
    if (hdf5 == NULL) dl_iterate_phdr(find_hdf5, &hdf5);
    if (hdf5 != NULL) f = dlsym(hdf5, name);
  }
  if (f == NULL) {
    fprintf(stderr, "preload: %s not found\n", name);
    abort();
  }
  return f;
}

#define REAL(name) static __typeof__(name) *real = NULL; if (real == NULL) real = (__typeof__(name) *)next(#name)

EXPORT void *H5VLfile_create(const char *name, unsigned flags, hid_t fcpl_id, hid_t fapl_id, hid_t dxpl_id,
                             void **req) {
  REAL(H5VLfile_create);
  counters[FILE_CREATE]++;
  return real(name, flags, fcpl_id, fapl_id, dxpl_id, req);
}

EXPORT void *H5VLfile_open(const char *name, unsigned flags, hid_t fapl_id, hid_t dxpl_id, void **req) {
  REAL(H5VLfile_open);
  counters[FILE_OPEN]++;
  return real(name, flags, fapl_id, dxpl_id, req);
}

EXPORT herr_t H5VLfile_close(void *file, hid_t connector_id, hid_t dxpl_id, void **req) {
  REAL(H5VLfile_close);
  counters[FILE_CLOSE]++;
  return real(file, connector_id, dxpl_id, req);
}

EXPORT void *H5VLdataset_open(void *obj, const H5VL_loc_params_t *loc_params, hid_t connector_id,
                              const char *name, hid_t dapl_id, hid_t dxpl_id, void **req) {
  REAL(H5VLdataset_open);
  counters[DATASET_OPEN]++;
  return real(obj, loc_params, connector_id, name, dapl_id, dxpl_id, req);
}

EXPORT herr_t H5VLdataset_read(size_t count, void *dset[], hid_t connector_id, hid_t mem_type_id[],
                               hid_t mem_space_id[], hid_t file_space_id[], hid_t plist_id, void *buf[],
                               void **req) {
  REAL(H5VLdataset_read);
  counters[DATASET_READ]++;
  return real(count, dset, connector_id, mem_type_id, mem_space_id, file_space_id, plist_id, buf, req);
}

EXPORT herr_t H5VLdataset_write(size_t count, void *dset[], hid_t connector_id, hid_t mem_type_id[],
                                hid_t mem_space_id[], hid_t file_space_id[], hid_t plist_id, const void *buf[],
                                void **req) {
  REAL(H5VLdataset_write);
  counters[DATASET_WRITE]++;
  return real(count, dset, connector_id, mem_type_id, mem_space_id, file_space_id, plist_id, buf, req);
}

EXPORT void *H5VLgroup_open(void *obj, const H5VL_loc_params_t *loc_params, hid_t connector_id, const char *name,
                            hid_t gapl_id, hid_t dxpl_id, void **req) {
  REAL(H5VLgroup_open);
  counters[GROUP_OPEN]++;
  return real(obj, loc_params, connector_id, name, gapl_id, dxpl_id, req);
}

EXPORT void *H5VLobject_open(void *obj, const H5VL_loc_params_t *loc_params, hid_t connector_id,
                             H5I_type_t *opened_type, hid_t dxpl_id, void **req) {
  REAL(H5VLobject_open);
  counters[OBJECT_OPEN]++;
  return real(obj, loc_params, connector_id, opened_type, dxpl_id, req);
}

EXPORT herr_t H5VLattr_read(void *attr, hid_t connector_id, hid_t dtype_id, void *buf, hid_t dxpl_id, void **req) {
  REAL(H5VLattr_read);
  counters[ATTR_READ]++;
  return real(attr, connector_id, dtype_id, buf, dxpl_id, req);
}

EXPORT herr_t H5VLattr_write(void *attr, hid_t connector_id, hid_t dtype_id, const void *buf, hid_t dxpl_id,
                             void **req) {
  REAL(H5VLattr_write);
  counters[ATTR_WRITE]++;
  return real(attr, connector_id, dtype_id, buf, dxpl_id, req);
}

/* The application's own calls (the tool's H5Fopen, H5Dread, ...): each one reaches the top
 * connector once, so with h5sparse on top the counts of the two groups must agree. */

EXPORT hid_t H5Fcreate(const char *filename, unsigned flags, hid_t fcpl_id, hid_t fapl_id) {
  REAL(H5Fcreate);
  counters[API_FCREATE]++;
  return real(filename, flags, fcpl_id, fapl_id);
}

EXPORT hid_t H5Fopen(const char *filename, unsigned flags, hid_t fapl_id) {
  REAL(H5Fopen);
  const hid_t id = real(filename, flags, fapl_id);
  if (id < 0) {
    counters[API_FOPEN_FAIL]++;
    if (counters[API_FOPEN] == 0) counters[API_FOPEN_FIRST_FAIL] = 1;
  }
  counters[API_FOPEN]++;
  return id;
}

/* Whether the object's (top) connector is h5sparse; asked only when tracing. */
static int on_h5sparse(hid_t obj_id) {
  const char *trace = getenv("H5SPARSE_VOL_TRACE");
  if (trace == NULL || *trace == '\0') return 0;
  static __typeof__(H5VLget_connector_name) *get_name = NULL;
  static __typeof__(H5Eget_auto2) *get_auto = NULL;
  static __typeof__(H5Eset_auto2) *set_auto = NULL;
  if (get_name == NULL) {
    get_name = (__typeof__(H5VLget_connector_name) *)next("H5VLget_connector_name");
    get_auto = (__typeof__(H5Eget_auto2) *)next("H5Eget_auto2");
    set_auto = (__typeof__(H5Eset_auto2) *)next("H5Eset_auto2");
  }
  H5E_auto2_t saved_func = NULL;
  void *saved_data = NULL;
  get_auto(H5E_DEFAULT, &saved_func, &saved_data);
  set_auto(H5E_DEFAULT, NULL, NULL);
  char name[64] = "";
  const int yes = get_name(obj_id, name, sizeof name) > 0 && strcmp(name, "h5sparse") == 0;
  set_auto(H5E_DEFAULT, saved_func, saved_data);
  return yes;
}

EXPORT herr_t H5Dread(hid_t dset_id, hid_t mem_type_id, hid_t mem_space_id, hid_t file_space_id, hid_t dxpl_id,
                      void *buf) {
  REAL(H5Dread);
  counters[API_DREAD]++;
  counters[TOP_DREAD] += on_h5sparse(dset_id);
  return real(dset_id, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf);
}

EXPORT herr_t H5Dwrite(hid_t dset_id, hid_t mem_type_id, hid_t mem_space_id, hid_t file_space_id, hid_t dxpl_id,
                       const void *buf) {
  REAL(H5Dwrite);
  counters[API_DWRITE]++;
  counters[TOP_DWRITE] += on_h5sparse(dset_id);
  return real(dset_id, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf);
}

EXPORT herr_t H5Aread(hid_t attr_id, hid_t type_id, void *buf) {
  REAL(H5Aread);
  counters[API_AREAD]++;
  counters[TOP_AREAD] += on_h5sparse(attr_id);
  return real(attr_id, type_id, buf);
}

static int trace_written;

__attribute__((destructor)) static void write_trace(void) {
  if (trace_written++) return;
  const char *path = getenv("H5SPARSE_VOL_TRACE");
  if (path == NULL || *path == '\0') return;
  char line[1024];
  int n = snprintf(line, sizeof line, "pid=%ld", (long)getpid());
  for (int i = 0; i < N_COUNTERS && n > 0 && (size_t)n < sizeof line; i++)
    n += snprintf(line + n, sizeof line - (size_t)n, " %s=%lu", counter_names[i], counters[i]);
  if (n <= 0 || (size_t)n >= sizeof line - 1) return;
  line[n++] = '\n';
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  ssize_t w = write(fd, line, (size_t)n);
  (void)w;
  close(fd);
}

/* A tool that crashes still reports what it did up to the crash. */
static void on_fatal_signal(int sig) {
  write_trace();
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install_handlers(void) {
  const char *path = getenv("H5SPARSE_VOL_TRACE");
  if (path == NULL || *path == '\0') return;
  const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], on_fatal_signal);
}

/* --- frozen clock ------------------------------------------------------------------------ */

static int frozen(time_t *out) {
  const char *s = getenv("H5SPARSE_FROZEN_TIME");
  if (s == NULL || *s == '\0') return 0;
  *out = (time_t)strtoll(s, NULL, 10);
  return 1;
}

EXPORT int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
  time_t t;
  if (frozen(&t)) {
    tv->tv_sec = t; /* glibc declares tv non-null */
    tv->tv_usec = 0;
    return 0;
  }
  static int (*real)(struct timeval *restrict, void *restrict) = NULL;
  if (real == NULL) real = (int (*)(struct timeval *restrict, void *restrict))next("gettimeofday");
  return real(tv, tz);
}

EXPORT time_t time(time_t *tloc) {
  time_t t;
  if (frozen(&t)) {
    if (tloc) *tloc = t;
    return t;
  }
  static time_t (*real)(time_t *) = NULL;
  if (real == NULL) real = (time_t (*)(time_t *))next("time");
  return real(tloc);
}
