"""Names and values of Arkouda's HDF5 schema (file_version 2.0), in one place.

The seed document (Arkouda's "HDF5" file I/O page, v2023.06) gives the object types, their
attributes, the nesting, and one set of link names explicitly: a Strings group ``<name>`` holds
``<name>_values`` and ``<name>_segments`` ("user provided dataset name with _values appended").
Arkouda's server (src/HDF5Msg.chpl of the same release) writes and reads ``values``/``segments``
there instead, as the seed's legacy rule also does ("a group containing a dataset named
values"); NAMINGS holds both, SEED is the default. Where the seed only describes a component
("Dataset - Codes", "Dataset - Offsets") the link names are the server's in both namings:
``values``/``segments`` inside a SegArray, ``codes``/``categories``/``NA_Codes``/
``permutation``/``segments`` inside a Categorical, ``permutation``/``segments``/
``unique_key_idx``/``KEY_<i>`` inside a GroupBy (the last three as the seed spells them).
"""
import enum

import numpy as np


class ObjType(enum.IntEnum):
    """The ObjType attribute: Arkouda's Chapel enum ObjType."""
    ARRAYVIEW = 0
    PDARRAY = 1
    STRINGS = 2
    SEGARRAY = 3
    CATEGORICAL = 4
    GROUPBY = 5


# Attribute names.
OBJTYPE = "ObjType"
ISBOOL = "isBool"
FILE_VERSION = "file_version"
ARKOUDA_VERSION = "arkouda_version"
RANK = "Rank"
SHAPE = "Shape"
NUM_KEYS = "NumKeys"  # GroupBy: Arkouda's reader requires it, the seed does not list it

# Attribute types and values.
INT_TYPE = np.dtype("<i8")            # ObjType, isBool, Rank, Shape, NumKeys (Chapel int)
FILE_VERSION_TYPE = np.dtype("<f4")   # real(32)
FILE_VERSION_VALUE = 2.0
# The Arkouda release whose schema this module implements; written as arkouda_version unless
# the caller names another.
DEFAULT_ARKOUDA_VERSION = "v2023.06.20"

# Component link names.
VALUES = "values"
SEGMENTS = "segments"

# Strings component names: the seed's (default) and Arkouda's server's.
SEED, ARKOUDA = "seed", "arkouda"


NAMINGS = (SEED, ARKOUDA)  # the order the reader tries them in


def check_naming(naming):
    if naming not in NAMINGS:
        raise ValueError(f"naming must be {SEED!r} or {ARKOUDA!r}, got {naming!r}")
    return naming


def strings_components(naming, name):
    """(values, segments) link names inside the Strings group `name` under `naming`."""
    if check_naming(naming) == SEED:
        return f"{name}_{VALUES}", f"{name}_{SEGMENTS}"
    return VALUES, SEGMENTS
CODES = "codes"
CATEGORIES = "categories"
NA_CODES = "NA_Codes"
PERMUTATION = "permutation"
UNIQUE_KEY_IDX = "unique_key_idx"
KEY_PREFIX = "KEY_"
INDEX_COLUMN = "Index"  # DataFrame.to_hdf(index=True) stores the index as this column

# Default object names (Arkouda's to_hdf defaults).
DEFAULT_NAMES = {
    "ArrayView": "ArrayView",
    "ndarray": "array",
    "Strings": "strings_array",
    "SegArray": "segarray",
    "Categorical": "categorical",
    "GroupBy": "groupby",
    "Index": "index",
}

# Distributed files: <prefix>_LOCALE<4 digits><extension>.
LOCALE_SUFFIX = "_LOCALE"
LOCALE_DIGITS = 4

# Element types Arkouda stores in pdarrays (bool is stored as uint8 with isBool = 1).
PDARRAY_KINDS = ("i", "u", "f", "b")
