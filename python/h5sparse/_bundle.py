"""What a wheel of h5sparse carries: libh5sparse and the plugins built once for each HDF5 series
(_hdf5_1_14/, _hdf5_2/), linking no HDF5: they bind at run time to the HDF5 that h5py loaded
(hdf5_binding/binding.hpp in the source). A source tree or a Debian install has no such
directories; there this module does nothing and the library is found as before.

At `import h5sparse`, before h5py is imported, the plugin directory of h5py's series and the
connector are put into the environment while h5py starts HDF5 (which reads them then, once),
and taken out again: every file h5py opens goes through the connector, and programs started
later (h5dump of another HDF5, say) never see our variables. After h5py, files opened with
h5sparse.File go through it. In both cases the filters are registered with h5py's HDF5.
"""
import ctypes
import os
import sys
from importlib import util

SERIES = {"1.14": "_hdf5_1_14", "2": "_hdf5_2"}
SUPPORTED = "HDF5 1.14 (h5py 3.11-3.15 wheels) and HDF5 2.x (h5py 3.16 and later)"
CONNECTOR = "h5sparse under_vol=0;under_info={}"
FILTERS = (("structured", 45100), ("blosc", 32001), ("lzf", 32000))
_HERE = os.path.dirname(os.path.abspath(__file__))

series = None  # set by start(): the series bound


def present():
    return any(os.path.isdir(os.path.join(_HERE, d)) for d in SERIES.values())


def directory(name=None):
    """The directory of the series' binaries (default: the series started)."""
    return os.path.join(_HERE, SERIES[name or series])


def library_path():
    return os.path.join(directory(), "lib", "libh5sparse.so") if series else None


def plugin_dir(name=None):
    """The plugin directory of a series (default: the series started)."""
    return os.path.join(directory(name), "plugins") if name or series else None


def series_of(version):
    """"1.14" or "2" for an HDF5 version tuple; ImportError for any other."""
    if tuple(version[:2]) == (1, 14):
        return "1.14"
    if version[0] == 2:
        return "2"
    raise ImportError(f"h5sparse supports {SUPPORTED}; this h5py uses HDF5 "
                      f"{'.'.join(str(v) for v in version)}")


def _series_in_h5py_libs():
    """The series of the HDF5 in h5py's wheel (h5py.libs/libhdf5-*.so.310* or .so.320*), read
    without importing h5py; None when h5py has no such directory (an h5py not from a wheel: it
    is then imported first, as if the program had). ImportError when there is no h5py."""
    spec = util.find_spec("h5py")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("h5sparse needs h5py: pip install h5py")
    libs = os.path.join(os.path.dirname(list(spec.submodule_search_locations)[0]), "h5py.libs")
    names = os.listdir(libs) if os.path.isdir(libs) else []
    sonames = {n.split(".so.")[1].split(".")[0] for n in names if n.startswith("libhdf5-") and ".so." in n}
    return {"310": "1.14", "320": "2"}.get(sonames.pop()) if len(sonames) == 1 else None


def _import_h5py_through_connector(wanted):
    """Imports h5py (which starts HDF5) with the series' plugins first on the plugin path and
    the connector in HDF5_VOL_CONNECTOR (unless it names one already), then restores the
    environment as it was."""
    saved = {k: os.environ.get(k) for k in ("HDF5_PLUGIN_PATH", "HDF5_VOL_CONNECTOR")}
    plugins = plugin_dir(wanted)
    os.environ["HDF5_PLUGIN_PATH"] = os.pathsep.join(filter(None, [plugins, saved["HDF5_PLUGIN_PATH"]]))
    os.environ["HDF5_VOL_CONNECTOR"] = saved["HDF5_VOL_CONNECTOR"] or CONNECTOR
    try:
        import h5py  # noqa: F401
        import h5py.h5  # noqa: F401  (HDF5 is started by now)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def start():
    """Binds the wheel's binaries to h5py's HDF5 (see the module's text). No-op outside a wheel."""
    global series
    if not present() or series is not None:
        return
    wanted = None
    if "h5py" not in sys.modules:
        wanted = _series_in_h5py_libs()
        if wanted:
            _import_h5py_through_connector(wanted)
    import h5py
    found = series_of(h5py.version.hdf5_version_tuple)
    if wanted and wanted != found:
        raise ImportError(f"h5py.libs holds HDF5 {wanted} but h5py runs HDF5 {h5py.version.hdf5_version}")
    series = found
    _register_filters()
    if not wanted:
        _warn_without_connector()


def _warn_without_connector():
    """h5py started HDF5 before us (or h5py is not a wheel's): plain h5py files then do not go
    through the connector, and writes to sparse datasets define whole chunks (the filter's
    meaning). Said once, with what to do, unless HDF5_VOL_CONNECTOR put the connector there."""
    import warnings
    from . import connector_by_default
    if not connector_by_default():
        warnings.warn("h5sparse: h5py was imported first, so files opened with h5py.File do not go through the "
                      "h5sparse connector (writes define whole chunks, get_defined/erase/read_coo refuse): import "
                      "h5sparse before h5py, or open files with h5sparse.File", stacklevel=3)


def _register_filters():
    """Our filters for the IDs h5py's HDF5 has no filter for yet (h5py's LZF, hdf5plugin's Blosc
    stay where they are registered: the formats are the same)."""
    import h5py
    for ident, filter_id in FILTERS:
        if h5py.h5z.filter_avail(filter_id):
            continue
        address = plugin_class(ident)
        if not address:
            raise ImportError(f"h5sparse: the filter {filter_id} cannot be registered with h5py's HDF5")
        h5py.h5z.register_filter(address)


def plugin_class(ident):
    """The address of a plugin's class (H5Z_class2_t, H5VL_class_t) in the wheel's libh5sparse,
    bound to h5py's HDF5; 0 when it cannot be bound."""
    from . import _libhdf5, library
    info = getattr(library(), f"h5sparse_plugin_info_{ident}")
    info.restype, info.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
    return info(ctypes.cast(_libhdf5.lib().H5open, ctypes.c_void_p)) or 0
