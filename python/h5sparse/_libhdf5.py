"""HDF5 C functions h5py does not wrap, called on h5py's own identifiers through ctypes: in the
very HDF5 library h5py loaded (its private copy in a wheel too), so both share one library."""
import ctypes

_lib = None


def lib():
    """The libhdf5 h5py uses, with the argument types of the functions called here. Names are
    looked up through one of h5py's extension modules, whose dependencies hold h5py's HDF5 (as
    hdf5plugin finds it), so another HDF5 in the process (netCDF4's, PyTables') is never taken."""
    global _lib
    if _lib is None:
        import h5py.h5z
        _lib = ctypes.CDLL(h5py.h5z.__file__)
        _lib.H5Pget_filter_by_id2.argtypes = [ctypes.c_int64, ctypes.c_int, ctypes.POINTER(ctypes.c_uint),
                                              ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_uint),
                                              ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint)]
    return _lib


def filter_values(plist, filter_id):
    """All cd_values of a filter on a DCPL (h5py's get_filter returns the first 16 and then
    whatever memory follows, when there are more), or None when the DCPL has no such filter."""
    import h5py
    flags, config = ctypes.c_uint(0), ctypes.c_uint(0)
    count = ctypes.c_size_t(256)
    values = (ctypes.c_uint * 256)()
    name = ctypes.create_string_buffer(256)
    with h5py._objects.phil:
        rc = lib().H5Pget_filter_by_id2(plist.id, filter_id, ctypes.byref(flags), ctypes.byref(count), values,
                                        len(name), name, ctypes.byref(config))
    return tuple(values[:count.value]) if rc >= 0 else None


def reclaim(mem_type_id, address, count):
    """Frees the payloads HDF5 allocated for `count` variable-length values of `mem_type_id` at
    `address` (H5Treclaim, as h5py does)."""
    import h5py
    hdf5, hid, ptr = lib(), ctypes.c_int64, ctypes.c_void_p
    if not getattr(hdf5.H5Treclaim, "argtypes", None):
        hdf5.H5Screate_simple.argtypes, hdf5.H5Screate_simple.restype = [ctypes.c_int, ptr, ptr], hid
        hdf5.H5Sclose.argtypes, hdf5.H5Sclose.restype = [hid], ctypes.c_int
        hdf5.H5Treclaim.argtypes, hdf5.H5Treclaim.restype = [hid, hid, hid, ptr], ctypes.c_int
    with h5py._objects.phil:
        space = hdf5.H5Screate_simple(1, ctypes.byref(ctypes.c_uint64(count)), None)
        try:
            hdf5.H5Treclaim(mem_type_id, space, 0, address)
        finally:
            hdf5.H5Sclose(space)
