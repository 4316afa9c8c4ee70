"""The storage layouts bench/coo/run.py compares, each as the five operations a coordinate user
does: write all, read (all or a region), look up points, update values, erase a box.

Every layout starts from the same input: coordinates (N x 2 int64, random order, no duplicates)
and float32 values. What each operation includes is what that layout needs for it (sorting,
building CSR, scattering into a dense array), since a user holding coordinates pays it too.
Reads return the values found (a dense layout: its dense block; every layout returns 0 for an
absent point); bench/coo/run.py checks them against the input, after the clock.

  h5sparse        a sparse dataset (`Sparse(values=codec)`), written with h5sparse.write_coo,
                  read with h5sparse.read_coo (row-major), updated in place with write_coo,
                  a box erased in place with h5sparse.erase; points are `dset[i, j]`.
  coo             three 1-D chunked datasets rows, cols (int64) and values, sorted row-major
                  at write: a region reads `rows` whole, then the slices of cols/values of its
                  row range; a point reads `rows` once, then cols[a:b] and values[k] per point.
                  No index and no holes: an update rewrites `values`, an erase all three.
  csr             anndata's layout: data, indices (int32), indptr (int64) built with scipy;
                  rows come from indptr, a column band reads everything; update rewrites
                  `data`, erase all three.
  tiledb          a TileDB sparse array, dimensions rows/cols uint64 with the HDF5 chunk as
                  tile extent, attribute v; the codec on dimensions and attribute (blosc-lz4 ->
                  byte shuffle + LZ4: TileDB has no Blosc); an update writes a new fragment, an
                  erase is a delete query (TileDB-Py as installed by bench/coo/install-tiledb).
  tiledb-default  the same with TileDB's own defaults (tile extent = domain, Zstd on the
                  coordinates, no filter on the attribute); one codec, "default".
  dense           native chunked float32, fill 0, same chunks and codec; an update is a
                  read-modify-write of the whole array, an erase writes zeros into the box.
"""
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Where bench/coo/install-tiledb puts TileDB-Py for this interpreter's version.
BENCH_SITE = os.path.join(REPO, "build", "bench-site", f"python{sys.version_info[0]}.{sys.version_info[1]}")


def use_bench_site():
    """Makes TileDB-Py importable when install-tiledb has run: after the interpreter's own
    packages, so that their numpy stays the one in use."""
    if os.path.isdir(BENCH_SITE) and BENCH_SITE not in sys.path:
        sys.path.append(BENCH_SITE)


def codec_kwargs(codec):
    """h5py keywords of the codec for a native dataset (the same Blosc cd_values as h5sparse's)."""
    if codec == "blosc-lz4":
        import h5sparse
        return {"compression": 32001, "compression_opts": h5sparse.Blosc("lz4").cd_values()}
    return {}


def _chunk_len(data, chunk):
    """1-D chunk of the triplet datasets: as many elements as one 2-D chunk holds, at most 1 MiB
    (h5py's default chunk cache, which a larger chunk would bypass on every small read)."""
    return (max(1, min(len(data), chunk * chunk, (1 << 20) // data.dtype.itemsize)),)


def _create_1d(group, name, data, chunk, codec):
    group.create_dataset(name, data=data, chunks=_chunk_len(data, chunk), maxshape=(None,), **codec_kwargs(codec))


def _keys(rows, cols, ncols):
    return rows.astype(np.int64) * ncols + cols.astype(np.int64)


def _element_reads(h5py, path, pts):
    """`dset[i, j]` per point: what a dataset with holes (or a dense one) answers directly."""
    with h5py.File(path, "r") as f:
        d = f["x"]
        return np.array([d[int(i), int(j)] for i, j in pts], dtype=np.float32)


def _in_box(rows, cols, region):
    r0, r1, c0, c1 = region
    return (rows >= r0) & (rows < r1) & (cols >= c0) & (cols < c1)


class H5Sparse:
    def __init__(self, spec, codec):
        import h5py
        import h5sparse
        self.h5py, self.h5sparse, self.spec = h5py, h5sparse, spec
        values = h5sparse.Blosc("lz4") if codec == "blosc-lz4" else None
        self.kwargs = dict(h5sparse.Sparse(values=values)) if values else dict(h5sparse.Sparse())
        if values:
            h5py.h5z.filter_avail(32001)   # the plugins load before any clock
        h5py.h5z.filter_avail(h5sparse.FILTER_ID)

    def _create(self, f):
        c = self.spec["chunk"]
        return f.create_dataset("x", shape=self.spec["shape"], dtype="f4", chunks=(c, c), fillvalue=0, **self.kwargs)

    def write(self, path, coords, values):
        with self.h5py.File(path, "w") as f:
            self.h5sparse.write_coo(self._create(f), coords, values)

    def read(self, path, region=None):
        with self.h5py.File(path, "r") as f:
            box = None if region is None else np.s_[region[0]:region[1], region[2]:region[3]]
            return self.h5sparse.read_coo(f["x"], region=box)[1]

    def write_matrix(self, path, m):
        """A scipy.sparse matrix, by from_scipy."""
        with self.h5py.File(path, "w") as f:
            self.h5sparse.from_scipy(self._create(f), m)

    def points(self, path, pts):
        return _element_reads(self.h5py, path, pts)

    def update(self, path, coords, values):
        with self.h5py.File(path, "r+") as f:
            self.h5sparse.write_coo(f["x"], coords, values)

    def erase(self, path, region):
        with self.h5py.File(path, "r+") as f:
            self.h5sparse.erase(f["x"], np.s_[region[0]:region[1], region[2]:region[3]])


class _Native:
    """A layout of stock HDF5 datasets (no connector), the codec's plugin loaded before the clock."""

    def __init__(self, spec, codec):
        import h5py
        self.h5py, self.spec, self.codec = h5py, spec, codec
        if codec == "blosc-lz4":
            h5py.h5z.filter_avail(32001)


class _Triplets(_Native):
    """COO and CSR: 1-D datasets in group x, stored row-major, one of them the values (VALUES)
    and one the column of each (COLS); a subclass says where a row range lies (_row_span) and
    what the key (row * columns + column) of every stored element is (_stored_keys)."""
    COLS = VALUES = None

    def _replace(self, f, arrays):
        g = f.require_group("x")
        for name, a in arrays:
            if name in g:
                del g[name]
            _create_1d(g, name, a, self.spec["chunk"], self.codec)
        return g

    def read(self, path, region=None):
        with self.h5py.File(path, "r") as f:
            g = f["x"]
            if region is None:
                return {name: g[name][...] for name in g}[self.VALUES]
            r0, r1, c0, c1 = region
            a, b = self._row_span(g, r0, r1)
            cols, values = g[self.COLS][a:b], g[self.VALUES][a:b]
            return values[(cols >= c0) & (cols < c1)]

    def points(self, path, pts):
        out = np.zeros(len(pts), dtype=np.float32)
        with self.h5py.File(path, "r") as f:
            g = f["x"]
            span, cols, values = self._row_spanner(g), g[self.COLS], g[self.VALUES]
            for n, (i, j) in enumerate(pts):
                a, b = span(i)
                found = cols[a:b]
                k = int(np.searchsorted(found, j))
                if k < len(found) and found[k] == j:
                    out[n] = values[a + k]
        return out

    def update(self, path, coords, values):
        with self.h5py.File(path, "r+") as f:
            g = f["x"]
            at = np.searchsorted(self._stored_keys(g), _keys(coords[:, 0], coords[:, 1], self.spec["shape"][1]))
            v = g[self.VALUES][...]
            v[at] = values
            g[self.VALUES][...] = v

    def _row_span(self, g, r0, r1):
        return self._row_spanner(g)(r0, r1)


class Coo(_Triplets):
    COLS, VALUES = "cols", "values"

    def write(self, path, coords, values):
        order = np.argsort(_keys(coords[:, 0], coords[:, 1], self.spec["shape"][1]), kind="stable")
        with self.h5py.File(path, "w") as f:
            self._replace(f, (("rows", coords[order, 0]), ("cols", coords[order, 1]), ("values", values[order])))

    def _row_spanner(self, g):
        rows = g["rows"][...]   # no index: the row of every element, read whole
        return lambda r0, r1=None: np.searchsorted(rows, [r0, r0 + 1 if r1 is None else r1])

    def _stored_keys(self, g):
        return _keys(g["rows"][...], g["cols"][...], self.spec["shape"][1])

    def erase(self, path, region):
        with self.h5py.File(path, "r+") as f:
            g = f["x"]
            rows, cols, values = g["rows"][...], g["cols"][...], g["values"][...]
            keep = ~_in_box(rows, cols, region)
            self._replace(f, (("rows", rows[keep]), ("cols", cols[keep]), ("values", values[keep])))


class Csr(_Triplets):
    COLS, VALUES = "indices", "data"

    def _store(self, f, data, indices, indptr):
        g = self._replace(f, (("data", data), ("indices", indices), ("indptr", indptr)))
        g.attrs["encoding-type"] = "csr_matrix"
        g.attrs["encoding-version"] = "0.1.0"
        g.attrs["shape"] = np.array(self.spec["shape"], dtype=np.int64)

    def write(self, path, coords, values):
        import scipy.sparse   # imported before the clock by preload()
        m = scipy.sparse.csr_matrix((values, (coords[:, 0], coords[:, 1])), shape=self.spec["shape"])
        m.sort_indices()
        self.write_matrix(path, m)

    def write_matrix(self, path, m):
        """A scipy.sparse CSR matrix with sorted indices, as anndata stores one."""
        with self.h5py.File(path, "w") as f:
            self._store(f, m.data, m.indices.astype(np.int32), m.indptr.astype(np.int64))

    def _row_spanner(self, g):
        indptr = g["indptr"]
        return lambda r0, r1=None: indptr[r0:(r0 + 1 if r1 is None else r1) + 1][[0, -1]]

    def _rows(self, indptr):
        return np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))

    def _stored_keys(self, g):
        return _keys(self._rows(g["indptr"][...]), g["indices"][...], self.spec["shape"][1])

    def erase(self, path, region):
        with self.h5py.File(path, "r+") as f:
            g = f["x"]
            indptr, indices, data = g["indptr"][...], g["indices"][...], g["data"][...]
            rows = self._rows(indptr)
            keep = ~_in_box(rows, indices, region)
            counts = np.bincount(rows[keep], minlength=len(indptr) - 1)
            self._store(f, data[keep], indices[keep], np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))


class Dense(_Native):
    def __init__(self, spec, codec):
        super().__init__(spec, codec)
        self.kwargs = codec_kwargs(codec)

    def write(self, path, coords, values):
        a = np.zeros(self.spec["shape"], dtype=np.float32)
        a[coords[:, 0], coords[:, 1]] = values
        c = self.spec["chunk"]
        with self.h5py.File(path, "w") as f:
            f.create_dataset("x", data=a, chunks=(c, c), fillvalue=0, **self.kwargs)

    def read(self, path, region=None):
        with self.h5py.File(path, "r") as f:
            if region is None:
                return f["x"][...]
            return f["x"][region[0]:region[1], region[2]:region[3]]

    def points(self, path, pts):
        return _element_reads(self.h5py, path, pts)

    def update(self, path, coords, values):
        with self.h5py.File(path, "r+") as f:
            a = f["x"][...]
            a[coords[:, 0], coords[:, 1]] = values
            f["x"][...] = a

    def erase(self, path, region):
        with self.h5py.File(path, "r+") as f:
            r0, r1, c0, c1 = region
            f["x"][r0:r1, c0:c1] = np.zeros((r1 - r0, c1 - c0), dtype=np.float32)


class TileDB:
    def __init__(self, spec, codec):
        import tiledb
        self.tiledb, self.spec, self.codec = tiledb, spec, codec

    def _schema(self):
        t, (n, m) = self.tiledb, self.spec["shape"]
        if self.codec == "default":
            dims = [t.Dim(name, domain=(0, size - 1), dtype=np.uint64) for name, size in (("rows", n), ("cols", m))]
            return t.ArraySchema(domain=t.Domain(*dims), sparse=True, attrs=[t.Attr("v", dtype=np.float32)])

        def filters():
            return t.FilterList([t.ByteShuffleFilter(), t.LZ4Filter()] if self.codec == "blosc-lz4" else [])
        c = self.spec["chunk"]
        dims = [t.Dim(name, domain=(0, size - 1), tile=c, dtype=np.uint64, filters=filters())
                for name, size in (("rows", n), ("cols", m))]
        return t.ArraySchema(domain=t.Domain(*dims), sparse=True, cell_order="row-major", tile_order="row-major",
                             attrs=[t.Attr("v", dtype=np.float32, filters=filters())])

    def write(self, path, coords, values):
        self.tiledb.Array.create(path, self._schema())
        with self.tiledb.open(path, "w") as a:
            a[coords[:, 0].astype(np.uint64), coords[:, 1].astype(np.uint64)] = values

    def read(self, path, region=None):
        with self.tiledb.open(path) as a:
            if region is None:
                return a[:]["v"]
            return a[region[0]:region[1], region[2]:region[3]]["v"]

    def points(self, path, pts):
        out = np.zeros(len(pts), dtype=np.float32)
        with self.tiledb.open(path) as a:
            for n, (i, j) in enumerate(pts):
                v = a[int(i), int(j)]["v"]
                if len(v):
                    out[n] = v[0]
        return out

    def update(self, path, coords, values):
        with self.tiledb.open(path, "w") as a:
            a[coords[:, 0].astype(np.uint64), coords[:, 1].astype(np.uint64)] = values

    def erase(self, path, region):
        r0, r1, c0, c1 = region
        with self.tiledb.open(path, "d") as a:
            a.query(cond=f"rows >= {r0} and rows < {r1} and cols >= {c0} and cols < {c1}").submit()


def preload(layout, op):
    """Imports what an operation of a layout needs, before the clock (and only then, so that the
    other operations' peak RSS does not carry it)."""
    if layout == "csr" and op == "write":
        import scipy.sparse  # noqa: F401


LAYOUTS = {"h5sparse": H5Sparse, "coo": Coo, "csr": Csr, "tiledb": TileDB, "tiledb-default": TileDB,
           "dense": Dense}


def size_on_disk(path):
    """Bytes of a file, or of every file under a directory (a TileDB array)."""
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, name)) for d, _, names in os.walk(path) for name in names)
