"""HDF5 C functions h5py does not wrap, called on h5py's own identifiers through ctypes (the
HDF5 library h5py loaded, found in the process's memory map, so both share one library)."""
import ctypes

_lib = None


def lib():
    """The libhdf5 h5py uses, with the argument types of the functions called here."""
    global _lib
    if _lib is None:
        import h5py
        h5py.File  # h5py (and with it libhdf5) is loaded
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "/libhdf5" in line and "_hl" not in line}
        paths = [p for p in paths if ".so" in p and "serial" in p] or [p for p in paths if ".so" in p]
        if not paths:
            raise RuntimeError("h5py's libhdf5 is not among the loaded libraries")
        _lib = ctypes.CDLL(sorted(paths)[0])
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
