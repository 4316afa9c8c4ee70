/* append_roles ROLE ...: the processes of the SWMR and crash tests (see append_model.h).
 *
 *   writer FILE LOG BATCHES PAUSE_US start|reopen
 *       Creates FILE and enters SWMR-write mode, either with H5Fstart_swmr_write on the open
 *       file (start) or by closing it and reopening it with H5F_ACC_SWMR_WRITE (reopen).
 *       Logs "0", then per batch: grow, write, flush (H5Dflush; every fourth batch H5Fflush),
 *       log the number of flushed batches, pause. Needs the h5sparse connector.
 *   reader FILE LOG BATCHES connector|plugin NAME
 *       Opens FILE with H5F_ACC_SWMR_READ and, until the log says BATCHES, repeatedly:
 *       reads the log (F), H5Drefresh, reads the extent, every value and (with the connector)
 *       the defined set, reads the log again (L), and checks all of it against the model
 *       with F batches flushed and up to L + 1 started. The last snapshot is checked exactly.
 *       "connector" or "plugin" says what the process must be running with (checked).
 *   check FILE BATCHES FLUSHED swmr|plain
 *       After a crash: opens FILE (with H5F_ACC_SWMR_READ, or plainly after h5clear), checks
 *       one snapshot with FLUSHED batches flushed and FLUSHED + 1 started; prints
 *       "rows R unflushed U" (U: elements showing values of the batch in flight).
 *       Exit status 3 when the read failed because a block of HDF5's own chunk index fails
 *       its checksum: the kernel ends a write at a page boundary when SIGKILL arrives, so a
 *       kill during HDF5's rewrite of an index block that straddles a page tears it.
 * Exit status 0 when every check passed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "append_model.h"
#include "h5sparse.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *who, const char *what) {
  fprintf(stderr, "%s: %s\n", who, what);
  H5Eprint2(H5E_DEFAULT, stderr);
  return 1;
}

/* Whether the file was opened through the h5sparse connector. */
static int through_connector(hid_t file) {
  char version[64];
  int yes = 0;
  H5E_BEGIN_TRY { yes = h5sparse_connector_version(file, version, sizeof version) >= 0; }
  H5E_END_TRY
  return yes;
}

static int writer(int argc, char **argv) {
  if (argc != 7) return fail("writer", "usage: writer FILE LOG BATCHES PAUSE_US start|reopen");
  const char *path = argv[2];
  const unsigned batches = (unsigned)atoi(argv[4]);
  const useconds_t pause = (useconds_t)atoi(argv[5]);
  const int reopen = strcmp(argv[6], "reopen") == 0;
  if (batches > APPEND_MAX_BATCHES) return fail("writer", "too many batches");
  const int log = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  if (log < 0) return fail("writer", "cannot open the log");

  hid_t dset = -1;
  hid_t file = append_create(path, &dset);
  if (file < 0) return fail("writer", "cannot create the file");
  if (!through_connector(file)) return fail("writer", "the h5sparse connector is not active");
  if (h5sparse_is_sparse(dset) <= 0) return fail("writer", "the dataset is not sparse");
  if (reopen) {
    if (H5Dclose(dset) < 0 || H5Fclose(file) < 0) return fail("writer", "cannot close the new file");
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    file = H5Fopen(path, H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE, fapl);
    H5Pclose(fapl);
    if (file < 0) return fail("writer", "cannot reopen the file with H5F_ACC_SWMR_WRITE");
    dset = H5Dopen2(file, APPEND_DATASET, H5P_DEFAULT);
    if (dset < 0) return fail("writer", "cannot reopen the dataset");
  } else if (H5Fstart_swmr_write(file) < 0) {
    return fail("writer", "H5Fstart_swmr_write failed");
  }
  unsigned intent = 0;
  if (H5Fget_intent(file, &intent) < 0 || !(intent & H5F_ACC_SWMR_WRITE)) return fail("writer", "not in SWMR-write mode");
  /* The dataset handle survived the switch (H5Fstart_swmr_write reopens every open dataset). */
  if (h5sparse_is_sparse(dset) <= 0) return fail("writer", "the dataset is no longer sparse");
  if (append_log_write(log, 0) < 0) return fail("writer", "cannot write the log");

  for (unsigned b = 0; b < batches; b++) {
    if (append_write_batch(dset, b) < 0) return fail("writer", "a batch failed");
    const herr_t flushed = b % 4 == 3 ? H5Fflush(file, H5F_SCOPE_LOCAL) : H5Dflush(dset);
    if (flushed < 0) return fail("writer", "flush failed");
    if (append_log_write(log, b + 1) < 0) return fail("writer", "cannot write the log");
    if (pause) usleep(pause);
  }
  if (H5Dclose(dset) < 0 || H5Fclose(file) < 0) return fail("writer", "cannot close the file");
  close(log);
  return 0;
}

static int reader(int argc, char **argv) {
  if (argc != 7) return fail("reader", "usage: reader FILE LOG BATCHES connector|plugin NAME");
  const char *path = argv[2], *log = argv[3], *who = argv[6];
  const unsigned batches = (unsigned)atoi(argv[4]);
  const int want_connector = strcmp(argv[5], "connector") == 0;
  const hid_t file = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
  if (file < 0) return fail(who, "cannot open the file with H5F_ACC_SWMR_READ");
  if (through_connector(file) != want_connector)
    return fail(who, want_connector ? "the connector is not active" : "the connector is active");
  const hid_t dset = H5Dopen2(file, APPEND_DATASET, H5P_DEFAULT);
  if (dset < 0) return fail(who, "cannot open the dataset");
  AppendModel *model = append_model_new(batches);
  const double start = now();
  long snapshots = 0, checked = 0, unflushed = 0, mismatches = 0;
  unsigned last_flushed = 0;
  while (mismatches == 0) {
    const long flushed = append_log_last(log);
    if (flushed < 0) return fail(who, "no progress log");
    if (H5Drefresh(dset) < 0) return fail(who, "H5Drefresh failed");
    AppendSnapshot snap;
    if (append_snapshot(dset, want_connector, &snap) < 0) return fail(who, "cannot read a snapshot");
    const long seen_flushed = append_log_last(log);
    const unsigned started = (unsigned)seen_flushed + (seen_flushed < (long)batches);
    const AppendVerdict v = append_check(model, &snap, (unsigned)flushed, started, who);
    append_snapshot_free(&snap);
    snapshots++;
    checked += v.checked;
    unflushed += v.from_unflushed;
    mismatches += v.mismatches;
    last_flushed = (unsigned)flushed;
    if (flushed == (long)batches) break;
    if (now() - start > 45) return fail(who, "the writer did not finish within 45 s");
  }
  append_model_free(model);
  if (H5Dclose(dset) < 0 || H5Fclose(file) < 0) return fail(who, "cannot close the file");
  printf("%s (%s): %ld snapshots, %ld element states checked, %ld showing not-yet-flushed writes, last at %u "
         "batches, %ld mismatches\n",
         who, want_connector ? "connector" : "plugin only", snapshots, checked, unflushed, last_flushed, mismatches);
  return mismatches != 0;
}

/* H5Ewalk2 callback: whether an entry is HDF5's metadata cache giving up on a checksum. */
static herr_t find_metadata_checksum_failure(unsigned n, const H5E_error2_t *e, void *found) {
  (void)n;
  if (e->desc != NULL && strstr(e->desc, "incorrect metadata checksum") != NULL) *(int *)found = 1;
  return 0;
}

static int hdf5_metadata_torn(void) {
  int found = 0;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, find_metadata_checksum_failure, &found);
  return found;
}

static int check(int argc, char **argv) {
  if (argc != 6) return fail("check", "usage: check FILE BATCHES FLUSHED swmr|plain");
  const unsigned batches = (unsigned)atoi(argv[3]);
  const unsigned flushed = (unsigned)atoi(argv[4]);
  const int swmr = strcmp(argv[5], "swmr") == 0;
  /* An SWMR reader retries a block failing its checksum up to 100 times, doubling a sleep
   * from 1 ns each time (hours in all): right while a writer is rewriting it, never after a
   * crash. Eight attempts give up within a microsecond. */
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (swmr) H5Pset_metadata_read_attempts(fapl, 8);
  const hid_t file = H5Fopen(argv[2], swmr ? H5F_ACC_RDONLY | H5F_ACC_SWMR_READ : H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  if (file < 0) return fail("check", "the file does not open after the crash");
  if (!through_connector(file)) return fail("check", "the connector is not active");
  const hid_t dset = H5Dopen2(file, APPEND_DATASET, H5P_DEFAULT);
  if (dset < 0) return fail("check", "the dataset does not open after the crash");
  AppendSnapshot snap;
  if (append_snapshot(dset, 1, &snap) < 0) {
    if (hdf5_metadata_torn()) return fail("check", "a block of HDF5's chunk index fails its checksum") + 2;
    return fail("check", "cannot read the dataset after the crash");
  }
  AppendModel *model = append_model_new(batches);
  const unsigned started = flushed + (flushed < batches);
  const AppendVerdict v = append_check(model, &snap, flushed, started, "check");
  printf("rows %llu unflushed %ld\n", (unsigned long long)snap.rows, v.from_unflushed);
  append_model_free(model);
  append_snapshot_free(&snap);
  if (H5Dclose(dset) < 0 || H5Fclose(file) < 0) return fail("check", "cannot close the file");
  return v.mismatches != 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "writer") == 0) return writer(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "reader") == 0) return reader(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "check") == 0) return check(argc, argv);
  fprintf(stderr, "usage: append_roles writer|reader|check ...\n");
  return 2;
}
