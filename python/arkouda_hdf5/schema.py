"""Names and values of Arkouda's HDF5 schema (file_version 2.0), in one place.

The seed document (Arkouda's "HDF5" file I/O page, v2023.06) gives the object types, their
attributes and the nesting; where it only describes a component ("Dataset - Codes"), the link
names are those Arkouda's server writes and reads (src/HDF5Msg.chpl of the same release):
``values``/``segments`` inside a Strings or SegArray group, ``codes``/``categories``/
``NA_Codes``/``permutation``/``segments`` inside a Categorical, ``permutation``/``segments``/
``unique_key_idx``/``KEY_<i>`` inside a GroupBy. Those are also the names the seed's legacy rule
looks for ("a group containing a dataset named values").
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
