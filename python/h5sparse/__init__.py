"""h5sparse for unmodified h5py, in the style of hdf5plugin.

Creating a sparse dataset needs only h5py and HDF5_PLUGIN_PATH (the structured-chunk filter
plugin does the work)::

    f.create_dataset("x", shape=(4096, 4096), dtype="f4", chunks=(256, 256),
                     **h5sparse.Sparse(values=h5sparse.Blosc(cname="zstd", clevel=5, shuffle="bit")))

Writing with define-by-write semantics, get_defined() and erase() need the h5sparse VOL
connector (HDF5_VOL_CONNECTOR="h5sparse under_vol=0;under_info={}"; see h5plugin-config --env).
"""
import ctypes
import ctypes.util
import os
import sys
import sysconfig
from collections.abc import Mapping

import numpy as np

from . import _bundle
from ._calls import H5SparseError, call

__all__ = ["H5SparseError", "FILTER_ID", "Sparse", "VarChunks", "Blosc", "LZF", "Deflate", "Shuffle", "get_defined", "erase",
           "connector_version", "library"]

FILTER_ID = 45100  # structured-chunk filter (unregistered range, registration pending)
_OPTIONAL = 0x0001  # H5Z_FLAG_OPTIONAL


class _Filter:
    """One filter of a section pipeline: (id, flags, cd_values) with H5Pset_filter meaning."""
    id = 0
    flags = 0

    def cd_values(self):
        return ()

    def encode(self):
        cd = tuple(int(v) for v in self.cd_values())
        return (self.id, self.flags, len(cd)) + cd


class Shuffle(_Filter):
    id = 2


class Deflate(_Filter):
    id = 1

    def __init__(self, level=6):
        if not 0 <= int(level) <= 9:
            raise ValueError(f"deflate level must be 0-9, got {level!r}")
        self.level = int(level)

    def cd_values(self):
        return (self.level,)


class LZF(_Filter):
    id = 32000
    flags = _OPTIONAL


class Blosc(_Filter):
    """Blosc as hdf5-blosc numbers it: cname blosclz/lz4/lz4hc/snappy/zlib/zstd, shuffle none/byte/bit."""
    id = 32001
    flags = _OPTIONAL
    _CNAMES = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "snappy": 3, "zlib": 4, "zstd": 5}
    _SHUFFLES = {"none": 0, None: 0, "byte": 1, "bit": 2}

    def __init__(self, cname="lz4", clevel=5, shuffle="byte"):
        if cname not in self._CNAMES:
            raise ValueError(f"blosc cname must be one of {sorted(self._CNAMES)}, got {cname!r}")
        if not 0 <= int(clevel) <= 9:
            raise ValueError(f"blosc clevel must be 0-9, got {clevel!r}")
        if shuffle not in self._SHUFFLES:
            raise ValueError(f"blosc shuffle must be None, 'none', 'byte' or 'bit', got {shuffle!r}")
        self.cname, self.clevel, self.shuffle = cname, int(clevel), shuffle

    def cd_values(self):
        return (0, 0, 0, 0, self.clevel, self._SHUFFLES[self.shuffle], self._CNAMES[self.cname])


def _pipeline(filters):
    if filters is None:
        return (0,)
    if isinstance(filters, _Filter):
        filters = [filters]
    out = (len(filters),)
    for f in filters:
        if not isinstance(f, _Filter):
            raise TypeError(f"section filters must be h5sparse filters, got {f!r}")
        out += f.encode()
    return out


def _chunks(chunks, shape, nnz):
    if not (isinstance(chunks, str) and chunks == "auto"):
        return chunks
    if shape is None or nnz is None:
        raise TypeError('chunks="auto" needs the matrix\'s shape and its expected defined elements (nnz)')
    from .chunk_shapes import matrix_chunks
    return matrix_chunks(shape, nnz)


class Sparse(Mapping):
    """Keyword arguments for h5py's create_dataset that make a sparse dataset.

    values, selection: a filter or list of filters for section 1 (values) and section 0
    (encoded selection). fill_is_undefined: writes leave elements equal to the fill value
    undefined, so `dset[...] = mostly_zero_array` stores only the non-zeros (for
    variable-length data: NULL values). lengths, data: the pipelines of sections 2 and 3 of
    variable-length datasets (strings, h5py.vlen_dtype; through the connector only).
    chunks="auto" with a 2-D matrix's `shape` and expected defined elements `nnz`: the chunk
    shape that serves its rows and columns alike (matrix_chunks), as create_dataset's chunks."""

    _options = 0  # request option bits a subclass adds

    def __init__(self, values=None, selection=None, fill_is_undefined=False, lengths=None, data=None,
                 chunks=None, shape=None, nnz=None):
        options = self._options | (1 if fill_is_undefined else 0)
        opts = (options,) + _pipeline(selection) + _pipeline(values)
        if lengths is not None or data is not None:
            opts += _pipeline(lengths) + _pipeline(data)
        self._kwargs = {"compression": FILTER_ID, "compression_opts": opts}
        if chunks is not None:
            self._kwargs["chunks"] = _chunks(chunks, shape, nnz)

    def __getitem__(self, key):
        return self._kwargs[key]

    def __iter__(self):
        return iter(self._kwargs)

    def __len__(self):
        return len(self._kwargs)


class VarChunks(Sparse):
    """Keyword arguments for variable-length data that is not sparse (every element written):
    strings or sequences compressed per chunk, lengths apart from bytes. By default the
    lengths go through Blosc zstd 1 with byte shuffle, and the connector picks the data's
    pipeline from the datatype when it creates the dataset: the same for strings, zstd 3 for
    sequences (numeric values compress up to 1.7x smaller there). Elements never written read
    as NULL (h5py: b'' or an empty array)."""

    def __init__(self, lengths=None, data=None):
        # docs/DESIGN.md: on text zstd 1 is as small as higher levels and writes 2-5x faster;
        # deflate 6 on the lengths was 40% of a write's instructions.
        self._options = 2 if data is None else 0  # option value 2: section 3 chosen by the datatype
        super().__init__(lengths=lengths if lengths is not None else Blosc("zstd", 1, "byte"),
                         data=data if data is not None else [])


# --- client library (get_defined, erase) -------------------------------------------------

_lib = None


def _candidates():
    """Where libh5sparse.so may be, the most specific first: $H5SPARSE_LIBRARY; beside the
    plugin directories of HDF5_PLUGIN_PATH (build tree, CMake install); the library directories
    of the prefix this package is installed in (pip and CMake installs into one prefix or venv);
    the system's search (ldconfig's cache, LD_LIBRARY_PATH: a distribution package)."""
    if os.environ.get("H5SPARSE_LIBRARY"):
        yield os.environ["H5SPARSE_LIBRARY"]
    if _bundle.series:
        yield _bundle.library_path()  # a wheel: the build for h5py's HDF5 series
    for entry in filter(None, os.environ.get("HDF5_PLUGIN_PATH", "").split(":")):
        yield os.path.join(entry, "..", "lib", "libh5sparse.so")        # build tree
        yield os.path.join(entry, "..", "..", "libh5sparse.so")         # PREFIX/LIBDIR/h5sparse/plugins
    multiarch = sysconfig.get_config_var("MULTIARCH")
    libdirs = ([os.path.join("lib", multiarch)] if multiarch else []) + ["lib64", "lib"]
    for prefix in dict.fromkeys(_install_prefixes()):
        for libdir in libdirs:
            yield os.path.join(prefix, libdir, "libh5sparse.so")
    found = ctypes.util.find_library("h5sparse")
    if found:
        yield found
    yield "libh5sparse.so"


def _install_prefixes():
    """The prefix this package is installed in (PREFIX/lib/pythonX.Y/site-packages/h5sparse, or
    Debian's PREFIX/lib/python3/dist-packages/h5sparse), then the interpreter's (a venv's)."""
    site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.basename(site) in ("site-packages", "dist-packages"):
        yield os.path.dirname(os.path.dirname(os.path.dirname(site)))
    yield sys.prefix


def _bind_to_h5py_hdf5(lib):
    """A libh5sparse that links no HDF5 (the wheel's) calls the HDF5 h5py loaded: bound here,
    unless a plugin bound it already when HDF5 loaded it (hdf5_binding/binding.hpp)."""
    if not hasattr(lib, "h5sparse_bind_hdf5"):
        return  # linked to its HDF5 (Debian packages, CMake builds)
    from . import _libhdf5
    lib.h5sparse_bind_hdf5.restype = ctypes.c_char_p
    lib.h5sparse_bind_hdf5.argtypes = [ctypes.c_void_p]
    problem = lib.h5sparse_bind_hdf5(ctypes.cast(_libhdf5.lib().H5open, ctypes.c_void_p))
    if problem:
        raise ImportError(f"h5sparse cannot use h5py's HDF5: {problem.decode(errors='replace')}")


def library():
    """The h5sparse client library (libh5sparse.so), loaded once."""
    global _lib
    if _lib is None:
        errors = []
        for path in _candidates():
            if os.sep in path and not os.path.exists(path):
                continue
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError as e:
                errors.append(str(e))
        else:
            raise OSError("cannot load libh5sparse.so: not beside the plugins of HDF5_PLUGIN_PATH, in this "
                          f"package's prefix ({', '.join(dict.fromkeys(_install_prefixes()))}) or the system's "
                          "library path; set H5SPARSE_LIBRARY" + (": " + "; ".join(errors) if errors else ""))
        _bind_to_h5py_hdf5(lib)
        hid = ctypes.c_int64
        lib.h5sparse_dget_defined.restype = hid
        lib.h5sparse_dget_defined.argtypes = [hid, hid, hid]
        lib.h5sparse_derase.restype = ctypes.c_int
        lib.h5sparse_derase.argtypes = [hid, hid, hid]
        lib.h5sparse_connector_version.restype = ctypes.c_int
        lib.h5sparse_connector_version.argtypes = [hid, ctypes.c_char_p, ctypes.c_size_t]
        _lib = lib
    return _lib


_H5S_ALL = 0
_H5P_DEFAULT = 0


def _space_of(dset, selection):
    """An h5py SpaceID selecting `selection` (anything dset[...] accepts, or a SpaceID) in the dataset."""
    if selection is None:
        return None
    import h5py
    if isinstance(selection, h5py.h5s.SpaceID):
        return selection
    from h5py._hl import selections
    if not isinstance(selection, tuple):
        selection = (selection,)
    return selections.select(dset.shape, selection, dset).id


def get_defined(dset, selection=None):
    """Coordinates (N x rank uint64 array, row-major order) of the defined elements of `dset`
    among `selection` (default: the whole dataset). For a sparse dataset they come from its
    chunks (memory follows the defined elements); every element of a dense one is defined."""
    import h5py
    if is_sparse(dset):  # a coordinate scan of the chunks
        return defined_coordinates(dset, selection)
    space = _space_of(dset, selection)
    lib = library()
    hid = call(lib, "h5sparse get_defined", dset, lib.h5sparse_dget_defined,
               space.id if space is not None else _H5S_ALL, _H5P_DEFAULT)
    return _coordinates(h5py.h5s.SpaceID(hid), dset.shape)


def _is_variable_length(dtype):
    """True when the dtype holds variable-length data (compound members included)."""
    import h5py
    if dtype.names:
        return any(_is_variable_length(dtype[name]) for name in dtype.names)
    string = h5py.check_string_dtype(dtype)
    return h5py.check_vlen_dtype(dtype) is not None or (string is not None and string.length is None)


def _coordinates(space, shape):
    """Row-major coordinates of the elements a dataspace selects."""
    import h5py
    kind = space.get_select_type()
    rank = len(shape)
    if kind == h5py.h5s.SEL_NONE:
        return np.zeros((0, rank), dtype=np.uint64)
    if kind == h5py.h5s.SEL_POINTS:
        return np.asarray(space.get_select_elem_pointlist(), dtype=np.uint64).reshape(-1, rank)
    mask = np.zeros(shape, dtype=bool)
    if kind == h5py.h5s.SEL_ALL:
        mask[...] = True
    else:
        for start, end in np.asarray(space.get_select_hyper_blocklist()).reshape(-1, 2, rank):
            mask[tuple(slice(int(a), int(b) + 1) for a, b in zip(start, end))] = True
    return np.argwhere(mask).astype(np.uint64)


def erase(dset, selection=None):
    """Makes the selected elements of `dset` undefined (default: all of them)."""
    space = _space_of(dset, selection)
    lib = library()
    call(lib, "h5sparse erase", dset, lib.h5sparse_derase, space.id if space is not None else _H5S_ALL,
         _H5P_DEFAULT)


def connector_version(obj):
    """'h5sparse <version>' when `obj`'s file is opened through the connector, else None."""
    buf = ctypes.create_string_buffer(64)
    fid = obj.file.id.id if hasattr(obj, "file") else obj.id.id
    import h5py
    with h5py._objects.phil:
        rc = library().h5sparse_connector_version(fid, buf, len(buf))
    return buf.value.decode() if rc >= 0 else None


from .coo import defined_coordinates, erase_coo, is_sparse, iter_coo, read_coo, write_coo  # noqa: E402

from .interop import from_scipy, from_sparse, to_dask, to_scipy, to_sparse  # noqa: E402

__all__ += ["write_coo", "read_coo", "iter_coo", "erase_coo", "is_sparse", "to_scipy", "from_scipy", "to_sparse",
            "from_sparse", "to_dask"]

from .chunks import (ChunkIOError, StructChunkInfo, read_struct_chunk, struct_chunk_info,  # noqa: E402
                     struct_chunk_info_by_coord, struct_chunk_iter, struct_chunks, write_struct_chunk)

__all__ += ["ChunkIOError", "StructChunkInfo", "read_struct_chunk", "write_struct_chunk", "struct_chunk_info",
            "struct_chunk_info_by_coord", "struct_chunk_iter", "struct_chunks"]

from .vl_chunks import CorruptChunkError, MissingCodecError, VLElements, read_vl_chunks, vl_chunk_info  # noqa: E402

__all__ += ["read_vl_chunks", "vl_chunk_info", "VLElements", "CorruptChunkError", "MissingCodecError"]

_by_default = None


def connector_by_default():
    """True when files opened by plain h5py.File go through the h5sparse connector (h5sparse
    imported before h5py from a wheel, or HDF5_VOL_CONNECTOR): tried once on a file in memory."""
    global _by_default
    if _by_default is None:
        import h5py
        with h5py.File("h5sparse-probe", "w", driver="core", backing_store=False) as probe:
            _by_default = connector_version(probe) is not None
    return _by_default


from .chunk_shapes import matrix_chunks  # noqa: E402
from .files import File  # noqa: E402
from .batches import RowBatch, RowBatches  # noqa: E402
from .anndata_io import read_h5ad, write_h5ad  # noqa: E402
from .cluster import from_dask  # noqa: E402
from .stripes import join_stripes  # noqa: E402

__all__ += ["matrix_chunks", "File", "connector_by_default", "RowBatch", "RowBatches", "read_h5ad", "write_h5ad",
            "from_dask", "join_stripes"]

# Last, since it may import h5py (which starts HDF5): a wheel binds here (_bundle.py).
_bundle.start()
