"""Reads Arkouda objects from an open h5py file or group, by their ObjType attribute, or, for
files of older Arkouda releases without ObjType, by the seed's legacy inference rule."""
import posixpath

import h5py
import numpy as np

from . import objects as ak
from . import schema
from .schema import ObjType


class SchemaError(ValueError):
    """The file does not follow Arkouda's HDF5 schema where the reader needs it."""


def _where(obj):
    return f"{obj.file.filename}:{obj.name}"


def _int_attr(obj, name, required=True):
    if name not in obj.attrs:
        if required:
            raise SchemaError(f"{_where(obj)}: attribute {name} is missing")
        return None
    value = np.asarray(obj.attrs[name])
    if value.dtype.kind not in "iu":
        raise SchemaError(f"{_where(obj)}: attribute {name} must be an integer, got {value.dtype}")
    return value


def strings_layout(group):
    """(values, segments) link names of the Strings group `group`: the first naming in
    schema.NAMINGS (the seed's `<name>_values`, then Arkouda's server's `values`) whose values
    dataset the group holds, or None."""
    for naming in schema.NAMINGS:
        names = schema.strings_components(naming, posixpath.basename(group.name))
        if names[0] in group:
            return names
    return None


def object_type(obj):
    """The ObjType of a stored object; legacy objects without one are inferred: a group holding
    a uint8 dataset named `values` (or, seed naming, `<name>_values`) is Strings, a dataset is
    a pdarray."""
    value = _int_attr(obj, schema.OBJTYPE, required=False)
    if value is not None:
        try:
            return ObjType(int(value.reshape(-1)[0]))
        except ValueError:
            raise SchemaError(f"{_where(obj)}: unknown ObjType {int(value.reshape(-1)[0])}") from None
    if isinstance(obj, h5py.Group):
        layout = strings_layout(obj)
        values = obj.get(layout[0]) if layout else None
        if isinstance(values, h5py.Dataset) and values.dtype == np.uint8:
            return ObjType.STRINGS
        raise SchemaError(f"{_where(obj)}: group without ObjType that is not a legacy Strings "
                          f"group (no uint8 dataset named {schema.VALUES!r} or "
                          f"{schema.strings_components(schema.SEED, posixpath.basename(obj.name))[0]!r})")
    return ObjType.PDARRAY


def _component(group, name):
    if name not in group:
        raise SchemaError(f"{_where(group)}: component {name!r} is missing")
    return group[name]


def _values(dset):
    if not isinstance(dset, h5py.Dataset):
        raise SchemaError(f"{_where(dset)}: expected a dataset, found a group")
    data = dset[...].reshape(-1)
    is_bool = _int_attr(dset, schema.ISBOOL, required=False)
    if is_bool is not None and int(is_bool.reshape(-1)[0]) == 1:
        return data.astype(bool)
    return data


def read_pdarray(dset):
    return _values(dset)


def read_arrayview(dset):
    rank = int(_int_attr(dset, schema.RANK).reshape(-1)[0])
    shape = tuple(int(d) for d in _int_attr(dset, schema.SHAPE).reshape(-1))
    if len(shape) != rank:
        raise SchemaError(f"{_where(dset)}: Rank {rank} but Shape has {len(shape)} entries")
    return ak.ArrayView(_values(dset), shape)


def read_strings(group):
    if not isinstance(group, h5py.Group):
        raise SchemaError(f"{_where(group)}: a Strings object is a group")
    layout = strings_layout(group)
    if layout is None:
        tried = " or ".join(repr(schema.strings_components(n, posixpath.basename(group.name))[0])
                            for n in schema.NAMINGS)
        raise SchemaError(f"{_where(group)}: a Strings group holds no values dataset ({tried})")
    values_name, segments_name = layout
    values = _values(group[values_name]).astype(np.uint8, copy=False)
    if segments_name in group:
        offsets = _values(group[segments_name])
    else:
        offsets = ak.Strings.offsets_of(values)
    return ak.Strings(values, offsets)


def read_segarray(group):
    values = _component(group, schema.VALUES)
    values = read_strings(values) if object_type(values) == ObjType.STRINGS else _values(values)
    return ak.SegArray(_values(_component(group, schema.SEGMENTS)), values)


def read_categorical(group):
    perm = seg = None
    if schema.PERMUTATION in group and schema.SEGMENTS in group:
        perm = _values(group[schema.PERMUTATION])
        seg = _values(group[schema.SEGMENTS])
    return ak.Categorical(_values(_component(group, schema.CODES)),
                          read_strings(_component(group, schema.CATEGORIES)),
                          _values(_component(group, schema.NA_CODES)), perm, seg)


def read_groupby(group):
    keys = []
    while f"{schema.KEY_PREFIX}{len(keys)}" in group:
        keys.append(read_object(group[f"{schema.KEY_PREFIX}{len(keys)}"]))
    if not keys:
        raise SchemaError(f"{_where(group)}: a GroupBy has no {schema.KEY_PREFIX}0")
    num_keys = _int_attr(group, schema.NUM_KEYS, required=False)
    if num_keys is not None and int(num_keys.reshape(-1)[0]) != len(keys):
        raise SchemaError(f"{_where(group)}: NumKeys is {int(num_keys.reshape(-1)[0])} but "
                          f"{len(keys)} keys are stored")
    return ak.GroupBy(keys, _values(_component(group, schema.PERMUTATION)),
                      _values(_component(group, schema.SEGMENTS)),
                      _values(_component(group, schema.UNIQUE_KEY_IDX)))


_READERS = {
    ObjType.ARRAYVIEW: read_arrayview,
    ObjType.PDARRAY: read_pdarray,
    ObjType.STRINGS: read_strings,
    ObjType.SEGARRAY: read_segarray,
    ObjType.CATEGORICAL: read_categorical,
    ObjType.GROUPBY: read_groupby,
}


def read_object(obj):
    """The Arkouda object stored at an h5py Group or Dataset."""
    kind = object_type(obj)
    wants_group = kind not in (ObjType.ARRAYVIEW, ObjType.PDARRAY)
    if wants_group != isinstance(obj, h5py.Group):
        raise SchemaError(f"{_where(obj)}: ObjType {kind.name} is stored as a "
                          f"{'group' if wants_group else 'dataset'}")
    return _READERS[kind](obj)
