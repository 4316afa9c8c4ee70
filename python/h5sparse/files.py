"""h5sparse.File: an h5py.File opened through the h5sparse connector whatever h5py's default,
for programs that imported h5py before h5sparse (HDF5 then started without the connector)."""
import ctypes
import os

_CONNECTOR_INFO = b"under_vol=0;under_info={}"
_FAPL_OPTIONS = ("driver", "libver", "rdcc_nslots", "rdcc_nbytes", "rdcc_w0", "locking")
# The rest of h5py.File's file access defaults (h5py 3.11 has no defaults in make_fapl).
_FAPL_DEFAULTS = dict(page_buf_size=None, min_meta_keep=0, min_raw_keep=0, alignment_threshold=1,
                      alignment_interval=1, meta_block_size=None)
_connector_id = None


def _hdf5():
    from . import _libhdf5
    lib, hid = _libhdf5.lib(), ctypes.c_int64
    if not getattr(lib.H5Pset_vol, "argtypes", None):
        lib.H5VLregister_connector.argtypes, lib.H5VLregister_connector.restype = [ctypes.c_void_p, hid], hid
        lib.H5VLregister_connector_by_name.argtypes = [ctypes.c_char_p, hid]
        lib.H5VLregister_connector_by_name.restype = hid
        lib.H5VLconnector_str_to_info.argtypes = [ctypes.c_char_p, hid, ctypes.POINTER(ctypes.c_void_p)]
        lib.H5VLfree_connector_info.argtypes = [hid, ctypes.c_void_p]
        lib.H5Pset_vol.argtypes, lib.H5Pset_vol.restype = [hid, hid, ctypes.c_void_p], ctypes.c_int
    return lib


def _connector(hdf5):
    """The connector's identifier: its class from the wheel's library, or by name from the plugin
    path (a Debian or CMake install)."""
    global _connector_id
    if _connector_id is None:
        from . import _bundle
        if _bundle.series:
            found = hdf5.H5VLregister_connector(_bundle.plugin_class("vol"), 0)
        else:
            found = hdf5.H5VLregister_connector_by_name(b"h5sparse", 0)
        if found < 0:
            raise OSError("the h5sparse connector cannot be registered: is it on HDF5_PLUGIN_PATH "
                          "(h5plugin-config --plugin-path)?")
        _connector_id = found
    return _connector_id


def _connector_fapl(**options):
    import h5py
    from h5py._hl import files
    fapl = files.make_fapl(**{k: options.get(k) for k in _FAPL_OPTIONS}, **_FAPL_DEFAULTS)
    hdf5 = _hdf5()
    with h5py._objects.phil:
        connector, info = _connector(hdf5), ctypes.c_void_p()
        if hdf5.H5VLconnector_str_to_info(_CONNECTOR_INFO, connector, ctypes.byref(info)) < 0:
            raise OSError("the h5sparse connector refused its own information string")
        try:
            if hdf5.H5Pset_vol(fapl.id, connector, info) < 0:
                raise OSError("H5Pset_vol failed for the h5sparse connector")
        finally:
            hdf5.H5VLfree_connector_info(connector, info)
    return fapl


def File(name, mode="r", **options):
    """h5py.File(name, mode) through the h5sparse connector. Takes the options `driver`, `libver`,
    `rdcc_nslots`, `rdcc_nbytes`, `rdcc_w0` and `locking` as h5py.File does. Where files go through
    the connector already (h5sparse imported before h5py, or HDF5_VOL_CONNECTOR), the same as
    h5py.File."""
    import h5py
    from h5py._hl import files
    unknown = sorted(set(options) - set(_FAPL_OPTIONS))
    if unknown:
        raise TypeError(f"h5sparse.File takes the options {', '.join(_FAPL_OPTIONS)}; not {', '.join(unknown)}")
    from . import connector_by_default
    if connector_by_default():
        return h5py.File(name, mode, **options)
    fid = files.make_fid(os.fsencode(os.fspath(name)), mode, None, _connector_fapl(**options))
    return h5py.File(fid)
