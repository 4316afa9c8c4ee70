/* What the C test programs share: one assertion that counts checks, prints a message for each
 * failure and keeps going (so one run reports every failing case), and a probe of which plugin
 * libraries the process has loaded. */
#ifndef H5SPARSE_TEST_SUPPORT_H
#define H5SPARSE_TEST_SUPPORT_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int g_checks, g_failures;

static void check(int ok, const char *fmt, ...) {
  ++g_checks;
  if (ok) return;
  ++g_failures;
  va_list ap;
  va_start(ap, fmt);
  fputs("FAIL: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* Whether a shared object whose path contains `needle` is mapped (printing its path). */
static inline int mapped(const char *needle) {
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  if (maps == NULL) return 0;
  while (!found && fgets(line, sizeof line, maps) != NULL) {
    char *path = strchr(line, '/');
    if (path == NULL || strstr(path, needle) == NULL) continue;
    found = 1;
    printf("plugin %s", path);
  }
  fclose(maps);
  return found;
}

#ifdef H5_VERS_MAJOR
/* The end of a program on HDF5 (hdf5.h included first): no identifiers left open; prints the
 * counts and returns the exit status. */
static inline int finish_checks(void) {
  const ssize_t open = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
  check(open == 0, "no identifiers left open (%zd)", open);
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
#endif

#endif
