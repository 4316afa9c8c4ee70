"""Density sweep: a sparse dataset against the same data dense-chunked and as CSR triplets.

The parent (run.py) calls prepare() once, which writes the inputs as .npy files, then runs every
measurement in its own subprocess, one per (operation, layout, codec, density, repetition):
`python3 density.py worker '<json>'`, which prints one JSON line. A subprocess per measurement
makes the peak RSS (VmHWM) that measurement's alone. The first repetition also checks what it
read against the input (values, and for sparse the number of defined elements from the chunk
headers); untimed.

Layouts (the dataset is N x N float32, N = 4096, chunks 256 x 256; `--quick`: N = 1024):
  sparse       h5sparse.Sparse(values=codec, selection=codec, fill_is_undefined=True); written with
               `dset[...] = dense_array` (the zeros stay undefined): what a user holding a numpy
               array does; read with `dset[...]` (undefined elements read as the fill value 0).
  sparse-pts   the same dataset written from coordinates: one H5Dwrite of an element selection
               (H5Sselect_elements) with the non-zero values: what a user holding COO data does.
               Write only (the file is the same), densities up to POINTS_MAX_DENSITY.
  dense        native chunked dataset, same chunks, the codec as its HDF5 filter, fill value 0,
               `dset[...] = dense_array`.
  csr          anndata's layout: a group with attributes encoding-type=csr_matrix and shape, and
               datasets data (float32), indices (int32), indptr (int64), each with the codec
               (h5py's automatic chunks; contiguous without a codec). Written from in-memory
               CSR arrays; the full read reads the three arrays (not densified).
Codecs: none; blosc-lz4 (Blosc lz4, clevel 5, byte shuffle, BLOSC_NTHREADS=1) on every dataset
(for sparse: on both sections).

Operations (times from before h5py.File() to after its close, h5py imported, input loaded and
the layout's filter plugins loaded beforehand (`h5py.h5z.filter_avail`: a once-per-process
dlopen, as the connector is loaded at import); the files live in /dev/shm so no disk is
measured):
  write   create the file and dataset, write everything, close.
  read    open, read the whole dataset (CSR: its three arrays), close. h5py returns a new array,
          whose first touch of every page (page faults) every layout pays inside the clock.
  readbuf the same into a reused buffer: `dset.read_direct(out)` with `out` allocated and written
          before the clock starts (CSR: its three arrays the same way), so the clock sees the
          storage layer, not the kernel handing out fresh pages.
  points  1,000 single-element reads dset[i, j] at the same random coordinates for every
          layout (file and dataset opened before the clock starts). CSR: indptr[i:i+2], then
          indices[a:b], then data[a+k] when column j is stored: what a reader without the
          matrix in memory does.
Dense and CSR processes run without the VOL connector (stock HDF5 + our Blosc plugin); sparse
ones with it, as `scripts/dev run` sets it.
"""
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from machine import peak_rss  # noqa: E402

POINTS_MAX_DENSITY = 0.10
BLOSC_OPTS = (0, 0, 0, 0, 5, 1, 1)  # hdf5-blosc cd_values: clevel 5, byte shuffle, lz4
CODECS = ("none", "blosc-lz4")
LAYOUTS = ("sparse", "dense", "csr")


# --- inputs --------------------------------------------------------------------------------

def prepare(workdir, n, densities, npoints, seed=12345):
    """Writes, per density, the dense array, CSR arrays and COO coordinates as .npy; returns
    per-density metadata and the point-read coordinates."""
    rng = np.random.default_rng(seed)
    pts = rng.integers(0, n, size=(npoints, 2)).astype(np.int64)
    np.save(os.path.join(workdir, "points.npy"), pts)
    meta = {}
    for d in densities:
        tag = density_tag(d)
        dense = np.zeros((n, n), dtype=np.float32)
        nnz = 0
        step = max(1, (1 << 22) // n)  # rows per block, bounded memory
        for r in range(0, n, step):
            block = dense[r:r + step]
            mask = np.ones(block.shape, dtype=bool) if d >= 1 else rng.random(block.shape) < d
            vals = rng.standard_normal(int(mask.sum())).astype(np.float32)
            vals[vals == 0] = 1.0  # zero would be undefined
            block[mask] = vals
            nnz += int(mask.sum())
        rows, cols = np.nonzero(dense)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        base = os.path.join(workdir, tag)
        np.save(base + "_dense.npy", dense)
        np.save(base + "_data.npy", dense[rows, cols])
        np.save(base + "_indices.npy", cols.astype(np.int32))
        np.save(base + "_indptr.npy", indptr)
        if d <= POINTS_MAX_DENSITY:
            np.save(base + "_coords.npy", np.stack([rows, cols], axis=1).astype(np.uint64))
        np.save(base + "_expected_points.npy", dense[pts[:, 0], pts[:, 1]])
        meta[tag] = {"density": d, "nnz": nnz}
        del dense, rows, cols
    return meta


def density_tag(d):
    return f"d{d * 100:g}".replace(".", "p")


# --- worker --------------------------------------------------------------------------------

def _sparse_kwargs(codec, fill_is_undefined):
    import h5sparse
    f = (lambda: h5sparse.Blosc("lz4", 5, "byte")) if codec == "blosc-lz4" else (lambda: None)
    return dict(h5sparse.Sparse(values=f(), selection=f(), fill_is_undefined=fill_is_undefined))


def _codec_kwargs(codec, chunks):
    kw = {}
    if codec == "blosc-lz4":
        kw = {"compression": 32001, "compression_opts": BLOSC_OPTS, "chunks": chunks or True}
    elif chunks:
        kw = {"chunks": chunks}
    return kw


def _load_plugins(layout, codec):
    """Loads the filter plugins the layout uses before any clock starts (HDF5 loads a plugin on
    first use, a once-per-process cost that is not the storage's)."""
    import h5py
    if codec == "blosc-lz4":
        h5py.h5z.filter_avail(32001)
    if layout.startswith("sparse"):
        import h5sparse
        h5py.h5z.filter_avail(h5sparse.FILTER_ID)


def _defined_count(path):
    """Defined elements of a sparse dataset, from its chunk headers (section 1 holds 4-byte values)."""
    import h5py
    import chunkfmt
    total = 0
    with h5py.File(path, "r") as f:
        d = f["x"]
        for i in range(d.id.get_num_chunks()):
            _mask, raw = d.id.read_direct_chunk(d.id.get_chunk_info(i).chunk_offset)
            total += chunkfmt.parse_chunk(raw)[1].unfiltered_size // d.dtype.itemsize
    return total


def worker(job):
    import h5py
    base = os.path.join(job["workdir"], job["tag"])
    path = job["file"]
    n, c = job["n"], job["chunk"]
    layout, codec, op = job["layout"], job["codec"], job["op"]
    out = {"rss_base": peak_rss()}
    _load_plugins(layout, codec)
    if op == "write":
        if layout in ("sparse", "dense"):
            arr = np.load(base + "_dense.npy")
        elif layout == "sparse-pts":
            coords = np.load(base + "_coords.npy")
            vals = np.load(base + "_data.npy")
        else:
            data = np.load(base + "_data.npy")
            indices = np.load(base + "_indices.npy")
            indptr = np.load(base + "_indptr.npy")
        # Creation keywords are built before the clock (for sparse, that imports h5sparse).
        kwargs = (_sparse_kwargs(codec, layout == "sparse") if layout.startswith("sparse")
                  else _codec_kwargs(codec, (c, c) if layout == "dense" else None))
        out["rss_input"] = peak_rss()
        t0 = time.perf_counter()
        with h5py.File(path, "w") as f:
            if layout == "sparse":
                d = f.create_dataset("x", shape=(n, n), dtype="f4", chunks=(c, c), **kwargs)
                d[...] = arr
            elif layout == "sparse-pts":
                d = f.create_dataset("x", shape=(n, n), dtype="f4", chunks=(c, c), **kwargs)
                fspace = d.id.get_space()
                fspace.select_elements(coords)
                d.id.write(h5py.h5s.create_simple((len(vals),)), fspace, vals)
            elif layout == "dense":
                d = f.create_dataset("x", shape=(n, n), dtype="f4", **kwargs)
                d[...] = arr
            else:
                g = f.create_group("x")
                g.attrs["encoding-type"] = "csr_matrix"
                g.attrs["encoding-version"] = "0.1.0"
                g.attrs["shape"] = np.array([n, n], dtype=np.int64)
                for name, a in (("data", data), ("indices", indices), ("indptr", indptr)):
                    g.create_dataset(name, data=a, **kwargs)
        out["time"] = time.perf_counter() - t0
        out["rss_peak"] = peak_rss()
        out["file_size"] = os.path.getsize(path)
    elif op == "read":
        out["rss_input"] = peak_rss()
        t0 = time.perf_counter()
        with h5py.File(path, "r") as f:
            if layout == "csr":
                g = f["x"]
                got = tuple(g[name][...] for name in ("data", "indices", "indptr"))
            else:
                got = f["x"][...]
        out["time"] = time.perf_counter() - t0
        out["rss_peak"] = peak_rss()
        if job.get("verify"):
            if layout == "csr":
                ok = all(np.array_equal(a, np.load(base + f"_{name}.npy"))
                         for a, name in zip(got, ("data", "indices", "indptr")))
            else:
                ok = np.array_equal(got, np.load(base + "_dense.npy"))
            if ok and layout == "sparse":
                ok = _defined_count(path) == job["nnz"]
            if not ok:
                raise SystemExit(f"{layout}/{codec}/{job['tag']}: full read differs from the input")
    elif op == "readbuf":
        names = ("data", "indices", "indptr")
        if layout == "csr":
            got = tuple(np.empty_like(np.load(base + f"_{name}.npy", mmap_mode="r")) for name in names)
        else:
            got = np.empty((n, n), dtype=np.float32)
        for a in (got if layout == "csr" else (got,)):
            a.fill(1)  # every page touched before the clock
        out["rss_input"] = peak_rss()
        t0 = time.perf_counter()
        with h5py.File(path, "r") as f:
            if layout == "csr":
                for name, a in zip(names, got):
                    f["x"][name].read_direct(a)
            else:
                f["x"].read_direct(got)
        out["time"] = time.perf_counter() - t0
        out["rss_peak"] = peak_rss()
        if job.get("verify"):
            if layout == "csr":
                ok = all(np.array_equal(a, np.load(base + f"_{name}.npy")) for a, name in zip(got, names))
            else:
                ok = np.array_equal(got, np.load(base + "_dense.npy"))
            if not ok:
                raise SystemExit(f"{layout}/{codec}/{job['tag']}: read into a buffer differs from the input")
    elif op == "points":
        pts = np.load(os.path.join(job["workdir"], "points.npy"))
        got = np.empty(len(pts), dtype=np.float32)
        out["rss_input"] = peak_rss()
        with h5py.File(path, "r") as f:
            if layout == "csr":
                g = f["x"]
                data, indices, indptr = g["data"], g["indices"], g["indptr"]
                t0 = time.perf_counter()
                for k, (i, j) in enumerate(pts):
                    a, b = indptr[i:i + 2]
                    v = 0.0
                    if b > a:
                        cols = indices[a:b]
                        pos = int(np.searchsorted(cols, j))
                        if pos < len(cols) and cols[pos] == j:
                            v = data[a + pos]
                    got[k] = v
                out["time"] = time.perf_counter() - t0
            else:
                d = f["x"]
                t0 = time.perf_counter()
                for k, (i, j) in enumerate(pts):
                    got[k] = d[i, j]
                out["time"] = time.perf_counter() - t0
        out["rss_peak"] = peak_rss()
        if job.get("verify") and not np.array_equal(got, np.load(base + "_expected_points.npy")):
            raise SystemExit(f"{layout}/{codec}/{job['tag']}: point reads differ from the input")
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
    else:
        raise SystemExit("usage: density.py worker JSON (run bench/sparse/run.py instead)")
