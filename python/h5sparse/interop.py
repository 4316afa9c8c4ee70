"""Sparse datasets as the Python ecosystem's sparse types, through coordinate I/O: scipy.sparse
(2-D COO, CSR, CSC), pydata sparse.COO (any rank, with the dataset's fill value) and dask arrays
whose blocks are sparse.COO (out of core, on a cluster). Each import happens on first use:
h5sparse needs none of them."""
import numpy as np

from .coo import _read_rows, _variable_length, read_coo, write_coo

# A dask array of a dataset gets at most about this many blocks by default: a graph of 2^42
# chunk reads (a 2^31 x 2^31 extent of 1024 x 1024 chunks) would not fit in memory.
_MAX_BLOCKS = 4096


def _box(dset, region):
    """(start, shape) of a region given as slices with step 1 (and integers), default all."""
    if region is None:
        region = ()
    if not isinstance(region, tuple):
        region = (region,)
    if len(region) > len(dset.shape):
        raise IndexError(f"region {region!r} has more dimensions than the {len(dset.shape)}-D dataset")
    region = region + (slice(None),) * (len(dset.shape) - len(region))
    start, shape = [], []
    for index, n in zip(region, dset.shape):
        if isinstance(index, (int, np.integer)):
            i = int(index) + (n if index < 0 else 0)
            if not 0 <= i < n:
                raise IndexError(f"index {index} is outside a dimension of {n}")
            start.append(i)
            shape.append(1)
        elif isinstance(index, slice) and index.step in (None, 1):
            a, b, _ = index.indices(n)
            start.append(a)
            shape.append(max(b - a, 0))
        else:
            raise TypeError(f"a region here is slices with step 1 (a box), got {index!r}")
    return tuple(start), tuple(shape)


def _region_of(start, shape):
    return tuple(slice(a, a + n) for a, n in zip(start, shape))


def _local(dset, region):
    """(coords relative to the box, values, box shape) of the defined elements of a box."""
    start, shape = _box(dset, region)
    coords, values = read_coo(dset, _region_of(start, shape))
    coords -= np.asarray(start, dtype=np.uint64)  # in place: each is now below 2^63, int64's same bits
    return coords.view(np.int64), values, shape


def to_scipy(dset, region=None, format="coo", rows=None, cols=None):
    """The defined elements of a 2-D dataset's box `region` (default all) as a scipy.sparse array
    of the box's shape: format "coo", "csr" or "csc". Undefined elements are the array's
    implicit zeros, whatever the dataset's fill value. With `rows` and/or `cols` (lists of
    indices, any order, repeats allowed) instead of a region, the array is those rows and
    columns of the dataset (all of a dimension not given), in the order given: one read, each
    chunk they meet decoded once."""
    import scipy.sparse
    if len(dset.shape) != 2:
        raise ValueError(f"scipy.sparse holds 2-D arrays; {dset.name} has {len(dset.shape)} dimensions")
    if format not in ("coo", "csr", "csc"):
        raise ValueError(f"format must be 'coo', 'csr' or 'csc', got {format!r}")
    if _variable_length(dset.dtype):
        raise TypeError(f"scipy.sparse holds numbers; {dset.name} holds variable-length data ({dset.dtype})")
    if rows is not None or cols is not None:
        if region is not None:
            raise TypeError("to_scipy takes a region or rows and cols, not both")
        csr = _lists_as_csr(dset, rows, cols)
    else:
        start, shape = _box(dset, region)
        indptr, indices, values = _read_rows(dset, start, shape)  # CSR's arrays, written by the library
        csr = scipy.sparse.csr_array((values, indices, indptr), shape=shape)
    return csr if format == "csr" else csr.tocoo() if format == "coo" else csr.tocsc()


def _index_list(index, n, what):
    """(sorted distinct indices, positions of the given ones among them) of an index list."""
    given = np.asarray(index)
    if given.ndim != 1 or (given.size and given.dtype.kind not in "iu"):
        raise TypeError(f"{what} must be a list of integer indices, got {index!r}")
    given = given.astype(np.int64)
    given = np.where(given < 0, given + n, given)
    if given.size and (given.min() < 0 or given.max() >= n):
        raise IndexError(f"{what} hold an index outside a dimension of {n}")
    return np.unique(given, return_inverse=True)


def _runs(sorted_indices):
    """(starts, lengths) of the runs of consecutive indices."""
    breaks = np.flatnonzero(np.diff(sorted_indices) != 1) + 1
    starts = np.concatenate(([0], breaks))
    lengths = np.diff(np.concatenate((starts, [len(sorted_indices)])))
    return sorted_indices[starts], lengths


def _positions(index_set, indices):
    """The places of `indices` in the sorted `index_set` that holds them all: through a table
    when the set spans few indices, else by bisection."""
    low, span = index_set[0], index_set[-1] - index_set[0] + 1
    if span <= 64 * len(index_set) + 4096:
        table = np.empty(span, np.int64)
        table[index_set - low] = np.arange(len(index_set))
        return table[indices - low]
    return np.searchsorted(index_set, indices)


def _lists_as_csr(dset, rows, cols):
    """The CSR array of the given rows and columns (to_scipy's lists), read as one selection: the
    union of the boxes their runs make."""
    import h5py
    import scipy.sparse
    lists = [_index_list(np.arange(n) if index is None else index, n, what)
             for index, n, what in zip((rows, cols), dset.shape, ("rows", "cols"))]
    (row_set, row_back), (col_set, col_back) = lists
    shape = (len(row_set), len(col_set))
    if 0 in shape:
        return scipy.sparse.csr_array((len(row_back), len(col_back)), dtype=dset.dtype)
    space = dset.id.get_space()
    space.select_none()
    row_runs, col_runs = _runs(row_set), _runs(col_set)
    for r0, rn in zip(*row_runs):
        for c0, cn in zip(*col_runs):
            space.select_hyperslab((int(r0), int(c0)), (int(rn), int(cn)), op=h5py.h5s.SELECT_OR)
    coords, values = read_coo(dset, space)
    coords = coords.view(np.int64)
    # Row-major: each row's elements are one stretch, found by bisecting for the rows (not
    # each element for its row); columns ascend within a row.
    indptr = np.searchsorted(coords[:, 0], np.append(row_set, dset.shape[0]))
    c = coords[:, 1] if cols is None else _positions(col_set, coords[:, 1])
    csr = scipy.sparse.csr_array((values, c, indptr), shape=shape)
    if len(row_back) != shape[0] or np.any(row_back != np.arange(shape[0])):
        csr = csr[row_back]
    if len(col_back) != shape[1] or np.any(col_back != np.arange(shape[1])):
        csr = csr[:, col_back]
    return scipy.sparse.csr_array(csr)


def from_scipy(dset, matrix, offset=(0, 0)):
    """Defines the stored entries of a 2-D scipy.sparse matrix or array (explicit zeros too;
    duplicates summed, as scipy sums them) at `offset` in the dataset. An entry outside the
    extent raises IndexError; nothing is stored then, nor when the values do not convert."""
    import scipy.sparse
    if len(dset.shape) != 2:
        raise ValueError(f"scipy.sparse holds 2-D arrays; {dset.name} has {len(dset.shape)} dimensions")
    csr = scipy.sparse.csr_array(matrix)
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()
    r0, c0 = (int(o) for o in offset)
    _check_inside(dset, csr, r0, c0)
    if dset.file.driver == "mpio":  # collective: one call on every rank
        return write_coo(dset, _band_coords(csr, 0, csr.shape[0], r0, c0), csr.data)
    for a, b in _row_bands(csr.indptr, r0, dset.chunks[0]):
        write_coo(dset, _band_coords(csr, a, b, r0, c0), csr.data[csr.indptr[a]:csr.indptr[b]])


# from_scipy writes a matrix a band of rows at a time, each band whole rows of chunks and about
# this many entries (more when one row of chunks holds more): every chunk is written once, and
# the coordinates of one band (16 bytes an entry) are all it makes.
_BAND_ENTRIES = 1 << 20


def _row_bands(indptr, r0, chunk_rows):
    """(first, end) rows of the matrix's bands holding entries, cut only where rows of chunks
    start, and there when the entries before the cut pass a multiple of _BAND_ENTRIES."""
    rows = len(indptr) - 1
    cuts = np.unique(np.concatenate([[0], np.arange((-r0) % chunk_rows, rows, chunk_rows), [rows]]))
    band = indptr[cuts] // _BAND_ENTRIES
    keep = np.ones(len(cuts), bool)
    keep[1:-1] = band[1:-1] != band[:-2]
    cuts = cuts[keep]
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if indptr[b] > indptr[a]]


def _band_coords(csr, a, b, r0, c0):
    start, end = csr.indptr[a], csr.indptr[b]
    coords = np.empty((end - start, 2), np.int64)
    coords[:, 0] = np.repeat(np.arange(a + r0, b + r0, dtype=np.int64), np.diff(csr.indptr[a:b + 1]))
    coords[:, 1] = csr.indices[start:end]
    coords[:, 1] += c0
    return coords


def _check_inside(dset, csr, r0, c0):
    """Refuses, before anything is written, a matrix whose entries would fall outside the extent."""
    if csr.nnz == 0:
        return
    rows = np.flatnonzero(np.diff(csr.indptr))
    last = (r0 + int(rows[-1]), c0 + int(csr.indices.max()))
    first = (r0 + int(rows[0]), c0 + int(csr.indices.min()))
    if min(first) < 0 or last[0] >= dset.shape[0] or last[1] >= dset.shape[1]:
        raise IndexError(f"entries of the matrix at offset {(r0, c0)} span {first} to {last}, outside the extent "
                         f"{dset.shape} of {dset.name}")


def _fill_value(dset):
    fill = dset.fillvalue
    return fill if fill is not None else np.zeros((), dset.dtype)[()]


def to_sparse(dset, region=None):
    """The box `region` (default all) as a pydata sparse.COO of the box's shape whose fill value
    is the dataset's (undefined elements read as it, as they do through dset[...])."""
    import sparse
    coords, values, shape = _local(dset, region)
    return sparse.COO(coords.T, values, shape=shape, fill_value=_fill_value(dset), has_duplicates=False,
                      sorted=True)


def from_sparse(dset, array, offset=None):
    """Defines the stored elements of a pydata sparse array at `offset` (default the origin).
    Its fill value must be the dataset's: the elements it leaves out read as the dataset's."""
    import sparse
    coo = sparse.as_coo(array)
    fill = _fill_value(dset)
    if not np.array_equal(np.asarray(coo.fill_value, dtype=dset.dtype), np.asarray(fill, dtype=dset.dtype)):
        raise ValueError(f"the array's fill value {coo.fill_value!r} differs from {dset.name}'s {fill!r}")
    coords = coo.coords.T
    if offset is not None:
        coords = coords.astype(np.int64, order="C")  # a copy, which write_coo then takes as it is
        coords += np.asarray(offset, np.int64)
    write_coo(dset, coords, coo.data)


def _block_shape(dset, chunks):
    """Whole dataset chunks per block, doubled along the dimensions in turn until the blocks
    number at most _MAX_BLOCKS."""
    if chunks is not None:
        return tuple(int(c) for c in chunks)
    from .stripes import source_chunks
    block = list(source_chunks(dset) if dset.is_virtual else dset.chunks)
    count = lambda: np.prod([-(-n // b) for n, b in zip(dset.shape, block)], dtype=float)  # noqa: E731
    d = 0
    while count() > _MAX_BLOCKS:
        if block[d] < dset.shape[d]:
            block[d] *= 2
        d = (d + 1) % len(block)
    return tuple(block)


def _occupied_blocks(dset, block):
    """Indices of the blocks that hold a stored chunk (the others need no read); of a virtual
    dataset (no chunks of its own), every block."""
    if dset.is_virtual:
        return set(np.ndindex(*[-(-n // b) for n, b in zip(dset.shape, block)]))
    occupied = set()
    dset.id.chunk_iter(lambda info: occupied.add(tuple(o // b for o, b in zip(info.chunk_offset, block))))
    return occupied


def _empty_block(shape, dtype, fill, format):
    if format == "csr":
        import scipy.sparse
        return scipy.sparse.csr_matrix(shape, dtype=dtype)
    import sparse
    return sparse.COO(np.zeros((len(shape), 0), np.int64), np.zeros(0, dtype), shape=shape, fill_value=fill)


def _read_block(path, name, start, shape, format):
    from . import File
    with File(path, "r") as f:
        if format == "csr":
            import scipy.sparse
            return scipy.sparse.csr_matrix(to_scipy(f[name], _region_of(start, shape), format="csr"))
        return to_sparse(f[name], _region_of(start, shape))


def to_dask(dset, chunks=None, format="sparse"):
    """A dask array of the dataset whose blocks are sparse.COO (fill value the dataset's), or
    with format="csr" scipy.sparse.csr_matrix (2-D; undefined elements are zeros), read when
    computed: each block opens the file by name, so it runs out of core and on a dask cluster
    whose workers see the file and load h5sparse's connector. Blocks are `chunks` (default:
    whole dataset chunks, grouped so that there are at most 4096 blocks; a virtual dataset's
    joining stripes (join_stripes): its first stripe's chunks). With a fill value
    other than 0, pydata sparse refuses to combine the partial sums of blocks of different
    shapes (their fill values differ): sums and means want a zero fill value."""
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph
    if format not in ("sparse", "csr"):
        raise ValueError(f"format must be 'sparse' or 'csr', got {format!r}")
    if format == "csr" and len(dset.shape) != 2:
        raise ValueError(f"CSR blocks are 2-D; {dset.name} has {len(dset.shape)} dimensions")
    block = _block_shape(dset, chunks)
    dims = [tuple(min(b, n - a) for a in range(0, n, b)) or (0,) for n, b in zip(dset.shape, block)]
    name = f"h5sparse-{dset.file.filename}-{dset.name}-{block}-{format}"
    occupied = _occupied_blocks(dset, block)
    fill = _fill_value(dset)
    graph = {}
    for index in np.ndindex(*[len(c) for c in dims]):
        start = tuple(b * i for b, i in zip(block, index))
        shape = tuple(c[i] for c, i in zip(dims, index))
        graph[(name,) + index] = ((_read_block, dset.file.filename, dset.name, start, shape, format)
                                  if index in occupied else (_empty_block, shape, dset.dtype, fill, format))
    meta = _empty_block((0,) * len(dset.shape), dset.dtype, fill, format)
    return da.Array(HighLevelGraph.from_collections(name, graph), name, chunks=tuple(dims), meta=meta)
