/* The append workload the SWMR and crash tests share, and what a reader may see of it.
 *
 * A writer grows a 2-D sparse int32 dataset (first dimension unlimited, so HDF5 indexes its
 * chunks with an extensible array) by APPEND_ROWS_PER_BATCH rows per batch, and each batch
 * writes one point selection: APPEND_NEW_POINTS scattered points in the new rows and
 * APPEND_OLD_POINTS among the older rows (new definitions and overwrites of values flushed
 * before), then flushes. Batch b is a pure function of b, so any process knows exactly what
 * the writer wrote. A value encodes the batch that wrote it and the element's position, so a
 * value from the wrong batch or the wrong place can never pass for the right one.
 *
 * What a reader may see after the writer flushed `flushed` batches and may have started up to
 * `started` (>= flushed): the extent between the two; each element as it was after `flushed`
 * batches, or holding a value that a batch in [flushed, started) wrote there; an element
 * defined after `flushed` batches stays defined, and one that no batch before `started`
 * wrote is undefined (and reads as the fill value). With flushed == started that is exact. */
#ifndef H5SPARSE_APPEND_MODEL_H
#define H5SPARSE_APPEND_MODEL_H

#include <hdf5.h>

#define APPEND_DATASET "append"
#define APPEND_WIDTH 48
#define APPEND_CHUNK_ROWS 8
#define APPEND_CHUNK_COLS 16
#define APPEND_ROWS_PER_BATCH 2
#define APPEND_NEW_POINTS 12
#define APPEND_OLD_POINTS 6
#define APPEND_BATCH_POINTS (APPEND_NEW_POINTS + APPEND_OLD_POINTS)
#define APPEND_MAX_BATCHES 2000 /* values keep the batch in 11 bits */
#define APPEND_FILL (-1)

typedef struct {
  size_t count;
  hsize_t coords[2 * APPEND_BATCH_POINTS]; /* (row, column) pairs, in no particular order */
  int values[APPEND_BATCH_POINTS];
} AppendBatch;

/* Rows of the dataset after `batches` batches. */
hsize_t append_rows(unsigned batches);

/* The points and values batch `b` writes. */
void append_batch(unsigned b, AppendBatch *out);

/* Creates the file (latest format, as SWMR needs) and the sparse dataset with 0 rows:
 * 8x16 chunks, fill value -1, deflate on the encoded selection, no filter on the values (so
 * that overwrites keep a chunk's size). Returns the file; *dset receives the dataset. */
hid_t append_create(const char *path, hid_t *dset);

/* One batch: grow the extent, write the points. */
herr_t append_write_batch(hid_t dset, unsigned b);

/* What a reader saw at one moment. */
typedef struct {
  hsize_t rows;
  int *values;             /* rows x APPEND_WIDTH, as read */
  unsigned char *defined;  /* rows x APPEND_WIDTH from h5sparse_dget_defined, or NULL */
} AppendSnapshot;

/* Reads the dataset's extent, values and (with_defined) defined set; -1 on a failed call,
 * with HDF5's error stack printed. */
int append_snapshot(hid_t dset, int with_defined, AppendSnapshot *snap);
void append_snapshot_free(AppendSnapshot *snap);

/* The write history of `batches` batches, element by element. */
typedef struct AppendModel AppendModel;
AppendModel *append_model_new(unsigned batches);
void append_model_free(AppendModel *model);

typedef struct {
  long mismatches;       /* elements (or the extent) outside what the model allows */
  long checked;          /* element states checked (values + defined flags) */
  long from_unflushed;   /* elements showing a value of a batch in [flushed, started) */
} AppendVerdict;

/* Checks a snapshot against the model (see the top of this file); prints the first few
 * mismatches to stderr, prefixed with `who`. */
AppendVerdict append_check(const AppendModel *model, const AppendSnapshot *snap, unsigned flushed,
                           unsigned started, const char *who);

/* The progress log: the writer appends one line "N\n" after N batches are flushed. Returns
 * the last complete line's number, or -1 when there is none yet. */
long append_log_last(const char *path);
int append_log_write(int fd, unsigned flushed);

#endif
