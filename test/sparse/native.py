"""HDF5 C functions h5py does not wrap, called on h5py's own identifiers through ctypes (the
HDF5 library h5py loaded, found in the process's memory map, so both share one library)."""
import ctypes

import h5py
import numpy as np

# H5D_chunk_index_t
INDEX_NAMES = {0: "btree1", 1: "single", 2: "implicit", 3: "farray", 4: "earray", 5: "btree2"}

_lib = None


def lib():
    global _lib
    if _lib is None:
        h5py.File  # h5py (and with it libhdf5) is loaded
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/libhdf5" in line and "_hl" not in line}
        paths = [p for p in paths if ".so" in p and "serial" in p] or [p for p in paths if ".so" in p]
        assert paths, "libhdf5 is not loaded"
        _lib = ctypes.CDLL(sorted(paths)[0])
        _lib.H5Dget_chunk_index_type.argtypes = [ctypes.c_int64, ctypes.POINTER(ctypes.c_int)]
        _lib.H5Pget_filter_by_id2.argtypes = [ctypes.c_int64, ctypes.c_int, ctypes.POINTER(ctypes.c_uint),
                                              ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_uint),
                                              ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint)]
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
    """All cd_values of a filter on a DCPL (h5py's get_filter returns the first 16 and then
    whatever memory follows, when there are more)."""
    flags, config = ctypes.c_uint(0), ctypes.c_uint(0)
    count = ctypes.c_size_t(256)
    values = (ctypes.c_uint * 256)()
    name = ctypes.create_string_buffer(256)
    with h5py._objects.phil:
        rc = lib().H5Pget_filter_by_id2(plist.id, filter_id, ctypes.byref(flags), ctypes.byref(count), values,
                                        len(name), name, ctypes.byref(config))
    assert rc >= 0, "no such filter"
    return tuple(values[:count.value])


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
