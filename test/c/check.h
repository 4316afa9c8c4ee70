/* The C test programs' one assertion: counts checks, prints a message for each failure and
 * keeps going, so one run reports every failing case. */
#ifndef H5SPARSE_TEST_CHECK_H
#define H5SPARSE_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>

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

#endif
