/* swmr_test ROLES DIR BATCHES PAUSE_US start|reopen KIND1 KIND2: one SWMR writer appending to
 * a sparse dataset and two reader processes checking every flushed element while it runs
 * (append_roles.c). KIND is "connector" (the reader runs with the h5sparse connector and also
 * checks the defined sets) or "plugin" (HDF5_VOL_CONNECTOR removed: the filter plugin alone).
 * The writer always runs with the connector. Everything must end within 50 s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "append_model.h"
#include "process_support.h"

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: swmr_test ROLES DIR BATCHES PAUSE_US start|reopen KIND1 KIND2\n");
    return 2;
  }
  char file[4096], log[4096];
  snprintf(file, sizeof file, "%s/swmr_%s_%s_%s.h5", argv[2], argv[5], argv[6], argv[7]);
  snprintf(log, sizeof log, "%s/swmr_%s_%s_%s.log", argv[2], argv[5], argv[6], argv[7]);
  remove(file);
  remove(log);
  const double start = monotonic_seconds(), deadline = start + 50;

  char *writer_argv[] = {argv[1], "writer", file, log, argv[3], argv[4], argv[5], NULL};
  const pid_t writer = spawn(writer_argv, 1, -1);
  /* Readers start once the writer is in SWMR-write mode (its log says 0). */
  while (append_log_last(log) < 0) {
    if (monotonic_seconds() > start + 20 || waitpid(writer, NULL, WNOHANG) == writer) {
      fprintf(stderr, "the writer did not reach SWMR-write mode\n");
      kill(writer, SIGKILL);
      return 1;
    }
    usleep(2000);
  }
  pid_t readers[2];
  for (int i = 0; i < 2; i++) {
    char *name = i == 0 ? "reader-1" : "reader-2";
    char *reader_argv[] = {argv[1], "reader", file, log, argv[3], argv[6 + i], name, NULL};
    readers[i] = spawn(reader_argv, strcmp(argv[6 + i], "connector") == 0, -1);
  }
  int ok = 1;
  const int writer_status = wait_until(writer, deadline);
  if (!exited_ok(writer_status)) {
    fprintf(stderr, writer_status < 0 ? "the writer timed out\n" : "the writer failed\n");
    ok = 0;
  }
  for (int i = 0; i < 2; i++) {
    const int status = wait_until(readers[i], ok ? deadline : monotonic_seconds());
    if (!exited_ok(status)) {
      fprintf(stderr, "reader-%d %s\n", i + 1, status < 0 ? "timed out" : "failed");
      ok = 0;
    }
  }
  printf("%s: writer %s batches, readers %s + %s: %.1f s\n", ok ? "passed" : "FAILED", argv[3], argv[6], argv[7],
         monotonic_seconds() - start);
  return ok ? 0 : 1;
}
