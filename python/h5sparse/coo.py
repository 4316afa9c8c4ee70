"""Coordinate I/O: a sparse dataset's elements in and out as coordinates and values (the form of
scipy.sparse, pydata sparse and TileDB), with no HDF5 selection in between. Needs the h5sparse
VOL connector (h5plugin-config --env)."""
import ctypes

import numpy as np

from . import _vl_memory
from ._calls import H5SparseError, call

_HSIZE_UNDEF = 2**64 - 1
_H5I_INVALID_HID = -1
_H5S_ALL = 0
_H5P_DEFAULT = 0
_DEFAULT_MAX_BYTES = 64 << 20
_ONE_BATCH = 2**64 - 1   # max_bytes: a whole region in one batch
_OP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_ROOM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                         ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)
_declared = False


def _lib():
    global _declared
    from . import library
    lib = library()
    if not _declared:
        hid, size, ptr = ctypes.c_int64, ctypes.c_size_t, ctypes.c_void_p
        lib.h5sparse_dwrite_coo.argtypes = [hid, size, ptr, hid, ptr, hid]
        lib.h5sparse_derase_coo.argtypes = [hid, size, ptr, hid]
        lib.h5sparse_dread_coo.argtypes = [hid, hid, hid, size, ptr, _ROOM, _OP, ptr, hid]
        lib.h5sparse_dread_csr.argtypes = [hid, hid, hid, size, ptr, _ROOM, ptr, hid]
        lib.h5sparse_is_sparse.argtypes = [hid]
        for f in (lib.h5sparse_dwrite_coo, lib.h5sparse_derase_coo, lib.h5sparse_dread_coo, lib.h5sparse_dread_csr,
                  lib.h5sparse_is_sparse):
            f.restype = ctypes.c_int
        _declared = True
    return lib


def _coordinates_in(dset, coords):
    """coords as a C-ordered (N, rank) uint64 array, or an exception saying what is wrong."""
    rank = len(dset.shape)
    c = np.asarray(coords)
    if c.ndim == 1 and rank == 1:
        c = c.reshape(-1, 1)
    if c.ndim != 2 or c.shape[1] != rank:
        raise ValueError(f"coordinates must be an (N, {rank}) array for the {rank}-D dataset {dset.name}, "
                         f"got shape {c.shape}")
    if c.dtype.kind not in "iu" and c.size:
        raise TypeError(f"coordinates must be integers, got {c.dtype}")
    if c.dtype.kind == "i" and c.size and c.min() < 0:  # one pass; the search only on failure
        p = int(np.flatnonzero((c < 0).any(axis=1))[0])
        raise ValueError(f"coordinate {tuple(int(x) for x in c[p])} (point {p}) is negative")
    if c.dtype.itemsize == 8 and c.flags.c_contiguous:
        return c.view(np.uint64)  # int64 known non-negative: the same bits, no copy
    return np.ascontiguousarray(c, dtype=np.uint64)


def _values_in(dset, values, n):
    v = np.asarray(values)
    if v.ndim == 0 and n == 1:
        v = v.reshape(1)
    if v.ndim != 1 or v.shape[0] != n:
        raise ValueError(f"{n} coordinates need {n} values, got an array of shape {v.shape}")
    if v.dtype.kind in "OUS" and v.dtype != dset.dtype:
        raise TypeError(f"values of type {v.dtype} do not convert to the dataset's {dset.dtype}")
    return np.ascontiguousarray(v)


def _memory_type(dtype):
    import h5py
    return h5py.h5t.py_create(dtype, logical=True)


def _variable_length(dtype):
    from . import _is_variable_length
    return _is_variable_length(dtype)


def write_coo(dset, coords, values):
    """Defines the elements at `coords` ((N, rank) integers, any order) with `values` (N values of
    any type HDF5 converts to the dataset's; of a variable-length dataset: str, bytes or None,
    or sequences). A coordinate given twice takes its last value. Nothing is stored when any
    coordinate lies outside the extent or the values do not convert. On an MPI-IO file it is
    collective: every rank calls it, each with its coordinates (maybe none); where ranks give
    the same coordinate, the highest rank's value wins."""
    c = _coordinates_in(dset, coords)
    lib = _lib()
    if _variable_length(dset.dtype):
        form = _vl_memory.Form(dset.dtype)
        v, _keep = form.to_memory(values, c.shape[0])  # v points into _keep
        mem_type = form.mem_type
    else:
        v = _values_in(dset, values, c.shape[0])
        mem_type = _memory_type(v.dtype)
    call(lib, "h5sparse write_coo", dset, lib.h5sparse_dwrite_coo, c.shape[0], c.ctypes.data, mem_type.id,
         v.ctypes.data, _H5P_DEFAULT)


def erase_coo(dset, coords):
    """Makes the elements at `coords` ((N, rank) integers) undefined (on an MPI-IO file:
    collective, as write_coo)."""
    c = _coordinates_in(dset, coords)
    lib = _lib()
    call(lib, "h5sparse erase_coo", dset, lib.h5sparse_derase_coo, c.shape[0], c.ctypes.data, _H5P_DEFAULT)


class _Batches:
    """The batches of a read, each written by the library straight into arrays made for it
    (np.empty: no zeroing, no copy after); more than one are joined at the end. Variable-length
    values land as char* or hvl_t (`form`), turned into Python objects by done()."""

    def __init__(self, rank, dtype):
        self.rank, self.dtype = rank, dtype
        self.form = _vl_memory.Form(dtype) if dtype is not None and _variable_length(dtype) else None
        self.batches = []

    def room(self, count, coords, values):
        c = np.empty((count, self.rank), dtype=np.uint64)
        coords[0] = c.ctypes.data
        v = None
        if self.dtype is not None:
            v = self.form.room(count) if self.form else np.empty(count, dtype=self.dtype)
            values[0] = v.ctypes.data
        self.batches.append((c, v))
        return 0

    def done(self, failed=False):
        """After the library call: variable-length values as objects, their memory freed (all
        of it when the call failed)."""
        if not self.form:
            return
        for i, (c, v) in enumerate(self.batches):
            if failed:
                self.form.reclaim(v)
            else:
                self.batches[i] = (c, self.form.from_memory(v))

    def result(self):
        if len(self.batches) == 1:
            return self.batches[0]
        coords = np.concatenate([c for c, _ in self.batches]) if self.batches else np.empty((0, self.rank), np.uint64)
        if self.dtype is None:
            return coords, None
        empty = np.empty(0, object if self.form else self.dtype)
        values = np.concatenate([v for _, v in self.batches]) if self.batches else empty
        return coords, values


def _read(dset, region, dtype, max_bytes, cursor, batches):
    """One h5sparse_dread_coo call into `batches`; with a cursor it stops after one batch."""
    from . import _space_of
    lib = _lib()
    space = _space_of(dset, region)
    mem_type = None if dtype is None else batches.form.mem_type if batches.form else _memory_type(dtype)
    failure = []

    def room(count, coords, values, _data):
        try:
            return batches.room(count, coords, values)
        except BaseException as e:  # noqa: B036 - handed back to the caller below
            failure.append(e)
            return -1

    callbacks = (_ROOM(room), _OP(lambda *_: 1) if cursor is not None else _OP())
    try:
        call(lib, "h5sparse read_coo", dset, lib.h5sparse_dread_coo,
             space.id if space is not None else _H5S_ALL, mem_type.id if mem_type is not None else _H5I_INVALID_HID,
             max_bytes, cursor, callbacks[0], callbacks[1], None, _H5P_DEFAULT)
    except H5SparseError:
        batches.done(failed=True)
        if failure:
            raise failure[0] from None
        raise
    batches.done()


def _read_rows(dset, start, shape):
    """(indptr, indices, values) of the defined elements of a 2-D dataset's box (`start`,
    `shape`) in compressed-row form, as scipy.sparse's CSR holds them: indices are columns
    counted from the box's first, int32 when the box is narrower than 2^31 columns (indptr too,
    when fewer than 2^31 elements), else int64. Written once, straight by the library: 8 bytes
    an element of float32 values where read_coo's coordinates and values take 20."""
    from . import _space_of
    lib = _lib()
    index = np.int32 if shape[1] <= 2**31 else np.int64
    counts = np.zeros(shape[0] + 1, dtype=np.uint64)  # each row's count from counts[1], then their sums
    if 0 in shape:  # HDF5 selects no box there
        return counts.astype(index), np.empty(0, index), np.empty(0, dset.dtype)
    space = _space_of(dset, tuple(slice(a, a + n) for a, n in zip(start, shape)))
    mem_type = _memory_type(dset.dtype)  # held until the call returns
    got, failure = [], []

    def room(count, coords, values, _data):
        try:
            got.append((np.empty(count, dtype=index), np.empty(count, dtype=dset.dtype)))
            coords[0], values[0] = got[0][0].ctypes.data, got[0][1].ctypes.data
            return 0
        except BaseException as e:  # noqa: B036 - handed back to the caller below
            failure.append(e)
            return -1

    try:
        call(lib, "h5sparse to_scipy", dset, lib.h5sparse_dread_csr, space.id, mem_type.id,
             np.dtype(index).itemsize, counts[1:].ctypes.data, _ROOM(room), None, _H5P_DEFAULT)
    except H5SparseError:
        if failure:
            raise failure[0] from None
        raise
    counts[0] = 0
    indptr = np.cumsum(counts, out=counts).view(np.int64)
    indices, values = got[0] if got else (np.empty(0, index), np.empty(0, dset.dtype))
    if index == np.int32 and len(values) < 2**31:
        indptr = indptr.astype(np.int32)
    return indptr, indices, values


def is_sparse(dset):
    """True when `dset` is a sparse dataset (its pipeline holds the structured-chunk filter)."""
    import h5py
    lib = _lib()
    with h5py._objects.phil:
        return lib.h5sparse_is_sparse(dset.id.id) > 0


def read_coo(dset, region=None, values=True):
    """(coords, values): the defined elements of `region` (anything dset[...] accepts; default
    all) in row-major order; coords an (N, rank) uint64 array, values N elements of the
    dataset's type (None with values=False; of a variable-length dataset, an object array of
    what h5py reads: bytes or numpy arrays)."""
    batches = _Batches(len(dset.shape), dset.dtype if values else None)
    _read(dset, region, batches.dtype, _ONE_BATCH, None, batches)
    return batches.result()


def iter_coo(dset, region=None, max_bytes=_DEFAULT_MAX_BYTES, values=True):
    """Yields (coords, values) batches of the defined elements of `region`: whole chunks, about
    max_bytes each; together in row-major order unless a band of chunks (chunks sharing their
    rows) holds more than max_bytes (it is then cut into groups of whole chunks, each in
    row-major order). Memory stays near max_bytes whatever the dataset holds."""
    rank = len(dset.shape)
    cursor = (ctypes.c_uint64 * rank)()
    dtype = dset.dtype if values else None
    while cursor[0] != _HSIZE_UNDEF:
        batch = _Batches(rank, dtype)
        _read(dset, region, dtype, max_bytes, cursor, batch)
        if batch.batches and len(batch.batches[0][0]):
            yield batch.result()


def defined_coordinates(dset, region=None):
    """Coordinates ((N, rank) uint64, row-major) of the defined elements of `region`, from the
    chunks themselves."""
    return read_coo(dset, region, values=False)[0]
