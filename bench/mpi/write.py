"""One MPI job of the parallel write benchmark (bench/mpi/run.py starts it under mpirun).

Every rank owns a band of rows of an N x N float32 array with `density` non-zero elements
(random positions, the rest zeros) and writes its band with one collective H5Dwrite, either
into a sparse dataset (structured chunks, fill_is_undefined: the non-zeros become defined,
values through Blosc lz4 + byte shuffle) or into the dense chunked equivalent (the same chunks,
Blosc lz4 + byte shuffle, HDF5's own collective filtered write). Prints one JSON line (rank 0):
seconds of the slowest rank for the write and for create+write+close, and the file size.
"""
import json
import os
import sys
import time

import h5py
import numpy as np
from mpi4py import MPI

import h5sparse

comm = MPI.COMM_WORLD
kind, n, density, chunk, path = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rank, size = comm.rank, comm.size
rows = np.array_split(np.arange(n), size)[rank]
band = np.zeros((len(rows), n), dtype="f4")
rng = np.random.default_rng(rank)
count = int(density * band.size)
flat = band.reshape(-1)
flat[rng.choice(band.size, count, replace=False)] = rng.random(count, dtype="f4") + 0.5

if kind == "sparse":
    options = h5sparse.Sparse(values=h5sparse.Blosc(cname="lz4", clevel=5, shuffle="byte"), fill_is_undefined=True)
else:
    options = {"compression": 32001, "compression_opts": (0, 0, 0, 0, 5, 1, 1)}  # blosc lz4, clevel 5, shuffle

comm.Barrier()
t0 = time.perf_counter()
with h5py.File(path, "w", driver="mpio", comm=comm) as f:
    d = f.create_dataset("x", shape=(n, n), dtype="f4", chunks=(chunk, chunk), **options)
    comm.Barrier()
    t1 = time.perf_counter()
    with d.collective:
        d[rows[0]:rows[-1] + 1, :] = band
    comm.Barrier()
    t2 = time.perf_counter()
t3 = time.perf_counter()
times = comm.gather((t2 - t1, t3 - t0), root=0)
if rank == 0:
    print(json.dumps({"kind": kind, "ranks": size, "density": density, "n": n, "chunk": chunk,
                      "write_s": max(t[0] for t in times), "total_s": max(t[1] for t in times),
                      "file_bytes": os.path.getsize(path)}), flush=True)
