"""How the numeric datasets of an Arkouda file are stored: chunking, compression through the
Blosc (32001) / LZF (32000) filters, and sparse storage (structured-chunk filter 45100) for
pdarrays that are mostly one fill value. The schema does not change: only dataset creation
properties do, and any reader with the filter plugins on HDF5_PLUGIN_PATH reads the values."""
import h5py
import numpy as np

import h5sparse

_COMPRESSION = {"blosc": lambda: h5sparse.Blosc("lz4", 5, "byte"), "lzf": h5sparse.LZF}


_lzf_source = None


def use_plugin_lzf():
    """Makes filter 32000 come from HDF5_PLUGIN_PATH (our LZF plugin) in this process, and
    returns where it comes from: "plugin" or "h5py".

    h5py registers its own LZF filter at import, which shadows any LZF plugin. Unregistering it
    lets HDF5 load 32000 from the plugin path on first use; when no plugin provides it (or h5py's
    filter is in use by an open dataset and cannot be unregistered), h5py's own LZF stays: the
    stream format is the same, so the file does not depend on which one wrote it."""
    global _lzf_source
    if _lzf_source is None:
        try:
            unregistered = h5py.h5z.unregister_filter(h5py.h5z.FILTER_LZF)
        except (ValueError, RuntimeError):
            unregistered = False
        if unregistered and not h5py.h5z.filter_avail(h5py.h5z.FILTER_LZF):
            h5py.h5z._register_lzf()
            unregistered = False
        _lzf_source = "plugin" if unregistered else "h5py"
    return _lzf_source


class Storage:
    """compression: None, "blosc", "lzf", or an h5sparse.Blosc / h5sparse.LZF instance.
    sparse: False; True (every pdarray dataset); or "auto" (pdarray datasets where at least
    `sparse_threshold` of the elements equal `fill`). A sparse dataset has fill value `fill` and
    stores only the other elements (h5sparse.Sparse(fill_is_undefined=True)); its values
    section goes through `compression`. chunk_elements: elements per chunk of a 1-D dataset."""

    def __init__(self, compression=None, sparse=False, fill=0, sparse_threshold=0.5,
                 chunk_elements=1 << 16):
        if isinstance(compression, str):
            if compression not in _COMPRESSION:
                raise ValueError(f"compression must be one of {sorted(_COMPRESSION)}, got {compression!r}")
            compression = _COMPRESSION[compression]()
        if compression is not None and not isinstance(compression, (h5sparse.Blosc, h5sparse.LZF)):
            raise TypeError(f"compression must be 'blosc', 'lzf', h5sparse.Blosc or h5sparse.LZF, got {compression!r}")
        if sparse not in (False, True, "auto"):
            raise ValueError(f"sparse must be False, True or 'auto', got {sparse!r}")
        if not 0.0 <= float(sparse_threshold) <= 1.0:
            raise ValueError(f"sparse_threshold must be in [0, 1], got {sparse_threshold!r}")
        if int(chunk_elements) < 1:
            raise ValueError(f"chunk_elements must be positive, got {chunk_elements!r}")
        self.compression = compression
        self.sparse = sparse
        self.fill = fill
        self.sparse_threshold = float(sparse_threshold)
        self.chunk_elements = int(chunk_elements)

    def is_sparse(self, values):
        if self.sparse is False or values.size == 0:
            return False
        if self.sparse is True:
            return True
        return np.count_nonzero(values == self.fill) >= self.sparse_threshold * values.size

    def dataset_options(self, values, sparse_allowed):
        """Keyword arguments of h5py's create_dataset for a 1-D dataset holding `values`.
        Empty datasets stay contiguous: HDF5 cannot chunk a zero-sized dimension."""
        if values.size == 0 or (self.compression is None and not (sparse_allowed and self.is_sparse(values))):
            return {}
        options = {"chunks": (min(values.size, self.chunk_elements),)}
        if sparse_allowed and self.is_sparse(values):
            options.update(h5sparse.Sparse(values=self.compression, fill_is_undefined=True))
            options["fillvalue"] = np.asarray(self.fill).astype(values.dtype)
        else:
            if isinstance(self.compression, h5sparse.LZF):
                use_plugin_lzf()
            options["compression"] = self.compression.id
            options["compression_opts"] = tuple(self.compression.cd_values()) or None
        return options


DEFAULT = Storage()
