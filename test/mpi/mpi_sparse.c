/* An ordinary parallel HDF5 C program on a sparse dataset: MPI-IO file access, the
 * structured-chunk filter in the pipeline, one collective H5Dwrite per rank of its own rows,
 * a collective h5sparse_derase of column 0 (every rank erases its own rows' part), then
 * h5sparse_dget_defined and H5Dread checks on every rank. Runs under mpirun with the parallel
 * plugins on HDF5_PLUGIN_PATH and the connector on HDF5_VOL_CONNECTOR.
 *
 * With a second argument "collective-metadata" the file is opened with collective metadata
 * reads and writes (H5Pset_all_coll_metadata_ops, H5Pset_coll_metadata_write), and the last
 * rank alone also reads and asks for the defined elements of its own rows while the others
 * wait: the connector's chunk lookups must not wait for the other ranks.
 *
 *   mpirun -n 4 mpi_sparse FILE [collective-metadata]     (prints "mpi_sparse ok" per rank) */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5sparse.h"

#define ROWS_PER_RANK 10
#define COLS 30

static int fail(int rank, const char* what) {
  fprintf(stderr, "rank %d: %s failed\n", rank, what);
  H5Eprint2(H5E_DEFAULT, stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2 && argc != 3) return fail(rank, "usage: mpi_sparse FILE [collective-metadata]");
  const int collective_metadata = argc == 3 && strcmp(argv[2], "collective-metadata") == 0;
  if (argc == 3 && !collective_metadata) return fail(rank, "unknown mode");

  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
  if (collective_metadata) {
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
  }
  hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (file < 0) return fail(rank, "H5Fcreate");

  hsize_t dims[2] = {(hsize_t)size * ROWS_PER_RANK, COLS}, chunk[2] = {8, 8};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_filter(dcpl, 45100, H5Z_FLAG_OPTIONAL, 0, NULL); /* structured chunks, default options */
  hid_t dset = H5Dcreate2(file, "values", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (dset < 0) return fail(rank, "H5Dcreate2");

  /* Each rank writes its own rows (chunks shared between ranks: rows 8-9 of rank 0 and rows 0-5
   * of rank 1 share a chunk row). */
  int buf[ROWS_PER_RANK * COLS];
  for (int r = 0; r < ROWS_PER_RANK; ++r)
    for (int c = 0; c < COLS; ++c) buf[r * COLS + c] = c + 1 + 1000 * rank;
  hsize_t start[2] = {(hsize_t)rank * ROWS_PER_RANK, 0}, count[2] = {ROWS_PER_RANK, COLS};
  hid_t fspace = H5Dget_space(dset);
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
  hid_t mspace = H5Screate_simple(2, count, NULL);
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
  if (H5Dwrite(dset, H5T_NATIVE_INT, mspace, fspace, dxpl, buf) < 0) return fail(rank, "H5Dwrite");

  /* Collective erase: column 0 of this rank's rows. */
  hsize_t ecount[2] = {ROWS_PER_RANK, 1};
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, ecount, NULL);
  if (h5sparse_derase(dset, fspace, dxpl) < 0) return fail(rank, "h5sparse_derase");
  MPI_Barrier(MPI_COMM_WORLD);

  /* Any rank sees everything: all but column 0 defined, values as written, zeros erased. */
  hid_t defined = h5sparse_dget_defined(dset, H5S_ALL, H5P_DEFAULT);
  if (defined < 0) return fail(rank, "h5sparse_dget_defined");
  if (H5Sget_select_npoints(defined) != (hssize_t)(size * ROWS_PER_RANK * (COLS - 1)))
    return fail(rank, "count of defined elements");
  int* all = malloc(sizeof(int) * size * ROWS_PER_RANK * COLS);
  if (H5Dread(dset, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) < 0) return fail(rank, "H5Dread");
  for (int r = 0; r < size * ROWS_PER_RANK; ++r)
    for (int c = 0; c < COLS; ++c) {
      const int expect = c == 0 ? 0 : c + 1 + 1000 * (r / ROWS_PER_RANK);
      if (all[r * COLS + c] != expect) return fail(rank, "read back");
    }
  free(all);
  H5Sclose(defined);

  if (collective_metadata && rank == size - 1) {
    /* One rank alone (the others wait at the barrier): its own rows, independent transfer,
     * then its defined elements there. */
    int own[ROWS_PER_RANK * COLS];
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    if (H5Dread(dset, H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, own) < 0) return fail(rank, "own H5Dread");
    for (int r = 0; r < ROWS_PER_RANK; ++r)
      for (int c = 0; c < COLS; ++c)
        if (own[r * COLS + c] != (c == 0 ? 0 : c + 1 + 1000 * rank)) return fail(rank, "own read back");
    hid_t own_defined = h5sparse_dget_defined(dset, fspace, H5P_DEFAULT);
    if (own_defined < 0) return fail(rank, "own h5sparse_dget_defined");
    if (H5Sget_select_npoints(own_defined) != (hssize_t)(ROWS_PER_RANK * (COLS - 1)))
      return fail(rank, "count of own defined elements");
    H5Sclose(own_defined);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  H5Pclose(dxpl);
  H5Sclose(mspace);
  H5Sclose(fspace);
  H5Dclose(dset);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  H5Pclose(fapl);
  printf("mpi_sparse ok %d\n", rank);
  MPI_Finalize();
  return 0;
}
