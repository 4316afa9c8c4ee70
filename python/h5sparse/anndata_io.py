"""AnnData files (.h5ad) whose X is a sparse dataset: cells (rows) and genes (columns) read from
one copy, each at the cost of what it touches, where anndata's CSR or CSC groups serve one axis.
Written and read through anndata's own dispatch hooks (anndata.experimental.write_dispatched,
read_dispatched): obs, var, layers and the rest are exactly as anndata writes them; only a sparse
X is stored otherwise. Its encoding type is "h5sparse-matrix", so plain anndata.read_h5ad refuses
the file naming it ("No read method registered for IOSpec(encoding_type='h5sparse-matrix' ...")
rather than reading a dense X.

    h5sparse.write_h5ad(adata, "cells.h5ad")
    adata = h5sparse.read_h5ad("cells.h5ad")               # X: scipy.sparse.csr_matrix
    adata = h5sparse.read_h5ad("cells.h5ad", backed="r")   # X: dask array of CSR blocks
    adata[:, ["CD3E", "MS4A1"]].X.compute()                # reads only those genes' chunks
"""
X_ENCODING = {"encoding-type": "h5sparse-matrix", "encoding-version": "0.1.0"}


def write_h5ad(adata, path, values=None, selection=None, chunks="auto"):
    """Writes `adata` as anndata.AnnData.write_h5ad does, but a sparse X (any scipy.sparse
    format) as a sparse dataset of `chunks` (default "auto": matrix_chunks of X's shape and
    non-zeros, 512 cells x 1024 genes at 3.5%; at most the matrix)
    with `values` and `selection` as Sparse() takes them. A dense X is written as anndata does."""
    import scipy.sparse
    from anndata.experimental import write_dispatched

    from . import File

    def callback(write, store, name, elem, *, iospec, dataset_kwargs):
        if name == "/X" and scipy.sparse.issparse(elem):
            _write_x(store, elem, values, selection, chunks)
        else:
            write(store, name, elem, dataset_kwargs=dataset_kwargs)

    with File(path, "w") as f:
        write_dispatched(f, "/", adata, callback=callback)


def _write_x(group, matrix, values, selection, chunks):
    from . import Sparse, from_scipy, matrix_chunks
    shape = tuple(int(n) for n in matrix.shape)
    if chunks is None or (isinstance(chunks, str) and chunks == "auto"):
        chunks = matrix_chunks((max(shape[0], 1), max(shape[1], 1)), matrix.nnz)
    chunks = tuple(int(c) for c in chunks)
    if len(chunks) != 2 or min(chunks) < 1:
        raise ValueError(f"chunks must be two positive sizes, got {chunks!r}")
    x = group.create_dataset("X", shape=shape, dtype=matrix.dtype,
                             chunks=tuple(min(c, max(n, 1)) for c, n in zip(chunks, shape)),
                             maxshape=tuple(None if n == 0 else n for n in shape),
                             **Sparse(values=values, selection=selection))
    from_scipy(x, matrix)
    x.attrs.update(X_ENCODING)


def read_h5ad(path, backed=None):
    """The AnnData of a file written by write_h5ad (or by anndata: then as anndata reads it).
    X is a scipy.sparse.csr_matrix, or with backed="r" a dask array of CSR blocks (whole
    chunks) read when computed: rows, columns and boxes read only the chunks they meet."""
    import anndata
    import scipy.sparse
    from anndata.experimental import read_dispatched

    from . import File, to_dask, to_scipy
    if backed not in (None, False, "r"):
        raise ValueError(f"backed must be None, False or 'r', got {backed!r}")

    def read_x(x):
        if backed:
            return to_dask(x, chunks=x.chunks, format="csr")
        return scipy.sparse.csr_matrix(to_scipy(x, format="csr"))

    # anndata looks a reader up before it calls the callback of an element, and has none for X's
    # encoding: the root is read here, its other elements through the callback as anndata would.
    def callback(read, name, elem, iospec):
        if name == "/" and "X" in elem and elem["X"].attrs.get("encoding-type") == X_ENCODING["encoding-type"]:
            parts = {k: read_dispatched(elem[k], callback=callback) for k in _PARTS if k in elem}
            return anndata.AnnData(X=read_x(elem["X"]), **parts)
        return read(elem)

    with File(path, "r") as f:
        return read_dispatched(f, callback=callback)


_PARTS = ("obs", "var", "obsm", "varm", "obsp", "varp", "layers", "uns", "raw")  # AnnData's arguments

