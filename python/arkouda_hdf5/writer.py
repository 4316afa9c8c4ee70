"""Writes Arkouda objects into an open h5py file or group, with every attribute of the schema.

Each function writes one object type; `write_object` dispatches on the Python type. Nothing here
opens files or decides write modes (io.py does), so a caller holding an h5py File of its own
(one locale's file, or an MPI shared file) can reuse these functions.
"""
import posixpath

import h5py
import numpy as np

from . import objects as ak
from . import schema
from .schema import ObjType
from .storage import DEFAULT


class Writer:
    """Writes objects with one storage policy, one arkouda_version string and one naming of
    the Strings components: "seed" (`<name>/<name>_values`, `<name>/<name>_segments`, as the
    schema document states) or "arkouda" (`<name>/values`, `<name>/segments`, as Arkouda's
    server reads them)."""

    def __init__(self, storage=None, arkouda_version=schema.DEFAULT_ARKOUDA_VERSION, naming=schema.SEED):
        self.storage = storage or DEFAULT
        self.arkouda_version = str(arkouda_version)
        self.naming = schema.check_naming(naming)  # here, not mid-file

    # --- attributes ---------------------------------------------------------------------

    def _int_attr(self, obj, name, value):
        obj.attrs.create(name, np.asarray(value, dtype=schema.INT_TYPE))

    def _metadata(self, obj, objtype, is_bool=None):
        """ObjType, isBool (when the schema lists it for this object), file_version (real(32)
        2.0) and arkouda_version (a null-terminated fixed-length C string, as Arkouda writes)."""
        self._int_attr(obj, schema.OBJTYPE, int(objtype))
        if is_bool is not None:
            self._int_attr(obj, schema.ISBOOL, 1 if is_bool else 0)
        obj.attrs.create(schema.FILE_VERSION, np.asarray(schema.FILE_VERSION_VALUE, dtype=schema.FILE_VERSION_TYPE))
        encoded = self.arkouda_version.encode("utf-8")
        string_type = h5py.h5t.C_S1.copy()
        string_type.set_size(len(encoded) + 1)
        string_type.set_strpad(h5py.h5t.STR_NULLTERM)
        attr = h5py.h5a.create(obj.id, schema.ARKOUDA_VERSION.encode(), string_type,
                               h5py.h5s.create(h5py.h5s.SCALAR))
        attr.write(np.array(encoded, dtype=f"S{len(encoded) + 1}"))

    # --- datasets -----------------------------------------------------------------------

    def _array(self, parent, name, values, sparse_allowed=True):
        """A pdarray dataset: bool values are stored as uint8 with isBool = 1."""
        values = np.ascontiguousarray(values).reshape(-1)
        is_bool = values.dtype == np.bool_
        stored = values.astype(np.uint8) if is_bool else values
        options = self.storage.dataset_options(stored, sparse_allowed)
        dset = parent.create_dataset(name, shape=stored.shape, dtype=stored.dtype, **options)
        if stored.size:
            dset[...] = stored
        return dset, is_bool

    def pdarray(self, parent, name, values):
        dset, is_bool = self._array(parent, name, ak.as_pdarray(values))
        self._metadata(dset, ObjType.PDARRAY, is_bool)
        return dset

    def _int64(self, parent, name, values):
        """An int64 component dataset (offsets, codes, permutations...): ObjType 1, isBool 0."""
        dset, _ = self._array(parent, name, np.asarray(values, dtype=np.int64), sparse_allowed=False)
        self._metadata(dset, ObjType.PDARRAY, False)
        return dset

    def arrayview(self, parent, name, view):
        dset, is_bool = self._array(parent, name, view.values)
        self._int_attr(dset, schema.RANK, len(view.shape))
        self._int_attr(dset, schema.SHAPE, np.asarray(view.shape, dtype=np.int64).reshape(len(view.shape)))
        self._metadata(dset, ObjType.ARRAYVIEW, is_bool)
        return dset

    # --- groups -------------------------------------------------------------------------

    def strings(self, parent, name, strings, component=False, write_offsets=True):
        """A Strings group: values (uint8 bytes with null terminators) and, unless
        write_offsets is False, segments (int64 start of each string), named after the group
        or not as self.naming says. As a component of
        another object (Categorical categories, GroupBy key, SegArray values) the group also
        carries isBool = 0, as the seed lists for those components."""
        group = parent.create_group(name)
        self._metadata(group, ObjType.STRINGS, False if component else None)
        values_name, segments_name = schema.strings_components(self.naming, posixpath.basename(group.name))
        values, _ = self._array(group, values_name, strings.values, sparse_allowed=False)
        self._metadata(values, ObjType.PDARRAY, False)
        if write_offsets:
            self._int64(group, segments_name, strings.offsets)
        return group

    def segarray(self, parent, name, seg):
        group = parent.create_group(name)
        self._metadata(group, ObjType.SEGARRAY)
        if isinstance(seg.values, ak.Strings):
            self.strings(group, schema.VALUES, seg.values, component=True)
        else:
            self.pdarray(group, schema.VALUES, seg.values)
        self._int64(group, schema.SEGMENTS, seg.segments)
        return group

    def categorical(self, parent, name, cat, component=False):
        group = parent.create_group(name)
        self._metadata(group, ObjType.CATEGORICAL, False if component else None)
        self._int64(group, schema.CODES, cat.codes)
        self.strings(group, schema.CATEGORIES, cat.categories, component=True)
        self._int64(group, schema.NA_CODES, cat.na_codes)
        if cat.permutation is not None:
            self._int64(group, schema.PERMUTATION, cat.permutation)
            self._int64(group, schema.SEGMENTS, cat.segments)
        return group

    def groupby(self, parent, name, gb):
        group = parent.create_group(name)
        self._int_attr(group, schema.NUM_KEYS, len(gb.keys))
        self._metadata(group, ObjType.GROUPBY)
        self._int64(group, schema.PERMUTATION, gb.permutation)
        self._int64(group, schema.SEGMENTS, gb.segments)
        self._int64(group, schema.UNIQUE_KEY_IDX, gb.unique_key_idx)
        for i, key in enumerate(gb.keys):
            key_name = f"{schema.KEY_PREFIX}{i}"
            if isinstance(key, ak.Strings):
                self.strings(group, key_name, key, component=True)
            elif isinstance(key, ak.Categorical):
                self.categorical(group, key_name, key, component=True)
            else:
                self.pdarray(group, key_name, key)
        return group

    # --- dispatch -----------------------------------------------------------------------

    def write(self, parent, name, obj):
        """Writes one object (pdarray as a 1-D numpy array, or an objects.* instance)."""
        if isinstance(obj, ak.Index):
            obj = obj.values
        if isinstance(obj, np.ndarray):
            return self.pdarray(parent, name, obj)
        for cls, method in ((ak.ArrayView, self.arrayview), (ak.Strings, self.strings),
                            (ak.SegArray, self.segarray), (ak.Categorical, self.categorical),
                            (ak.GroupBy, self.groupby)):
            if isinstance(obj, cls):
                return method(parent, name, obj)
        raise TypeError(f"cannot write {type(obj).__name__} as an Arkouda object")


def writable(obj):
    """`obj` as the writer takes it, or TypeError/ValueError before any file is touched."""
    if isinstance(obj, ak.Index):
        obj = obj.values
    if isinstance(obj, np.ndarray):
        return ak.as_pdarray(obj)
    if isinstance(obj, (ak.ArrayView, ak.Strings, ak.SegArray, ak.Categorical, ak.GroupBy)):
        return obj
    raise TypeError(f"cannot write {type(obj).__name__} as an Arkouda object")


def flatten(objects):
    """{name: object} with DataFrames expanded into their columns (and "Index"), as Arkouda's
    DataFrame.to_hdf does; every object checked by writable()."""
    out = {}
    for name, obj in objects.items():
        if isinstance(obj, ak.DataFrame):
            parts = dict(obj.columns)
            if obj.index is not None:
                parts[schema.INDEX_COLUMN] = obj.index.values
        else:
            parts = {name: obj}
        for part_name, part in parts.items():
            if part_name in out:
                raise ValueError(f"two objects named {part_name!r} in one write")
            out[part_name] = writable(part)
    return out
