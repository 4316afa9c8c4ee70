"""HDF5 C functions h5py does not wrap, called on h5py's own identifiers through ctypes (the
library h5py loaded: h5sparse._libhdf5)."""
import ctypes

import h5py
import numpy as np
from h5sparse import _libhdf5

# H5D_chunk_index_t
INDEX_NAMES = {0: "btree1", 1: "single", 2: "implicit", 3: "farray", 4: "earray", 5: "btree2"}

_lib = None


def lib():
    global _lib
    if _lib is None:
        _lib = _libhdf5.lib()
        _lib.H5Dget_chunk_index_type.argtypes = [ctypes.c_int64, ctypes.POINTER(ctypes.c_int)]
        _lib.H5Dget_chunk_storage_size.argtypes = [ctypes.c_int64, ctypes.POINTER(ctypes.c_uint64),
                                                   ctypes.POINTER(ctypes.c_uint64)]
    return _lib


def chunk_index(dset):
    """Name of the dataset's chunk index (btree1, single, farray, earray, btree2)."""
    kind = ctypes.c_int(-1)
    with h5py._objects.phil:
        assert lib().H5Dget_chunk_index_type(dset.id.id, ctypes.byref(kind)) >= 0
    return INDEX_NAMES[kind.value]


def filter_values(plist, filter_id):
    """All cd_values of a filter on a DCPL (h5sparse's, which h5py's get_filter cuts at 16)."""
    values = _libhdf5.filter_values(plist, filter_id)
    assert values is not None, "no such filter"
    return values


def chunk_storage_size(dset, origin):
    """H5Dget_chunk_storage_size of the chunk at `origin`; 0 when it is not stored."""
    offset = (ctypes.c_uint64 * len(origin))(*origin)
    size = ctypes.c_uint64(0)
    with h5py._objects.phil:
        rc = lib().H5Dget_chunk_storage_size(dset.id.id, offset, ctypes.byref(size))
    return size.value if rc >= 0 else 0


def chunk_origins(shape, chunks):
    """Every chunk origin of a dataset's chunk grid, row-major."""
    grid = [range(0, n, c) for n, c in zip(shape, chunks)]
    if any(len(g) == 0 for g in grid):
        return []
    return [tuple(int(x) for x in o) for o in np.stack(np.meshgrid(*grid, indexing="ij"), -1).reshape(-1, len(shape))]
