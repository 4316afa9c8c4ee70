"""In-memory Arkouda objects, as numpy arrays in the layout Arkouda keeps them.

A pdarray is a plain one-dimensional numpy array (int64, uint64, float64 or bool); the other
types are the small classes below. Each class holds exactly the components its HDF5 group
stores, so writing and reading are one-to-one.
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Union

import numpy as np

from . import schema


def as_pdarray(values):
    """`values` as a one-dimensional numpy array of a type Arkouda stores."""
    a = np.asarray(values)
    if a.ndim != 1:
        raise ValueError(f"a pdarray is one-dimensional, got shape {a.shape} (use ArrayView)")
    if a.dtype.kind not in schema.PDARRAY_KINDS:
        raise TypeError(f"pdarray values must be integer, float or bool, got {a.dtype}")
    return a


def _int64(values, what):
    a = np.asarray(values)
    if a.ndim != 1 or (a.size and a.dtype.kind not in "iu"):
        raise ValueError(f"{what} must be a one-dimensional integer array")
    return a.astype(np.int64, copy=False)


@dataclass(eq=False)
class ArrayView:
    """A multi-dimensional array, kept flattened (C order) with its shape, as Arkouda stores
    it: one-dimensional values plus Rank and Shape attributes. ArrayView(ndarray) flattens;
    a distributed part holds a block of the flat values and the shape of the whole."""
    values: np.ndarray
    shape: Optional[tuple] = None

    def __post_init__(self):
        a = np.asarray(self.values)
        if a.dtype.kind not in schema.PDARRAY_KINDS:
            raise TypeError(f"ArrayView values must be integer, float or bool, got {a.dtype}")
        if self.shape is None:
            self.shape = a.shape
        self.shape = tuple(int(d) for d in self.shape)
        self.values = a.reshape(-1)

    def to_ndarray(self):
        return self.values.reshape(self.shape)


@dataclass(eq=False)
class Strings:
    """Null-terminated UTF-8 strings concatenated in `values` (uint8); `offsets` (int64) holds
    the start of each string."""
    values: np.ndarray
    offsets: np.ndarray

    def __post_init__(self):
        self.values = np.asarray(self.values, dtype=np.uint8)
        self.offsets = _int64(self.offsets, "Strings offsets")

    @classmethod
    def from_list(cls, strings):
        encoded = [s.encode("utf-8") if isinstance(s, str) else bytes(s) for s in strings]
        if any(b"\0" in b for b in encoded):
            raise ValueError("Arkouda strings are null-terminated: a string may not contain NUL")
        lengths = np.fromiter((len(b) + 1 for b in encoded), dtype=np.int64, count=len(encoded))
        offsets = np.zeros(len(encoded), dtype=np.int64)
        if len(encoded):
            offsets[1:] = np.cumsum(lengths)[:-1]
        values = np.frombuffer(b"".join(b + b"\0" for b in encoded), dtype=np.uint8).copy()
        return cls(values, offsets)

    @staticmethod
    def offsets_of(values):
        """Offsets computed from the null terminators (the seed's rule when `segments` is absent)."""
        ends = np.flatnonzero(np.asarray(values) == 0)
        offsets = np.zeros(ends.size, dtype=np.int64)
        offsets[1:] = ends[:-1] + 1
        return offsets

    def __len__(self):
        return int(self.offsets.size)

    def to_list(self):
        raw = self.values.tobytes()
        ends = np.append(self.offsets[1:], len(raw)) - 1  # each string's terminator
        return [raw[int(a):int(b)].decode("utf-8") for a, b in zip(self.offsets, ends)]


@dataclass(eq=False)
class SegArray:
    """Segments of `values` (a pdarray or Strings); `segments` (int64) starts each segment."""
    segments: np.ndarray
    values: Union[np.ndarray, Strings]

    def __post_init__(self):
        self.segments = _int64(self.segments, "SegArray segments")
        if not isinstance(self.values, Strings):
            self.values = as_pdarray(self.values)

    @classmethod
    def from_lists(cls, lists, dtype=np.int64):
        lengths = np.array([len(x) for x in lists], dtype=np.int64)
        segments = np.zeros(len(lists), dtype=np.int64)
        if len(lists):
            segments[1:] = np.cumsum(lengths)[:-1]
        if dtype is str:
            return cls(segments, Strings.from_list([s for x in lists for s in x]))
        flat = [v for x in lists for v in x]
        return cls(segments, np.array(flat, dtype=dtype))

    def to_lists(self):
        n = len(self.values)
        bounds = np.append(self.segments, n)
        flat = self.values.to_list() if isinstance(self.values, Strings) else list(self.values)
        return [flat[int(a):int(b)] for a, b in zip(bounds[:-1], bounds[1:])]


@dataclass(eq=False)
class Categorical:
    """Codes (int64) into `categories` (Strings); `na_codes` holds the index of the NA category.
    `permutation` and `segments` (the codes grouped by category) are optional."""
    codes: np.ndarray
    categories: Strings
    na_codes: np.ndarray
    permutation: Optional[np.ndarray] = None
    segments: Optional[np.ndarray] = None

    def __post_init__(self):
        self.codes = _int64(self.codes, "Categorical codes")
        self.na_codes = _int64(self.na_codes, "Categorical NA_Codes")
        if (self.permutation is None) != (self.segments is None):
            raise ValueError("a Categorical has both permutation and segments, or neither")
        if self.permutation is not None:
            self.permutation = _int64(self.permutation, "Categorical permutation")
            self.segments = _int64(self.segments, "Categorical segments")

    @classmethod
    def from_strings(cls, strings, na_value="N/A", grouped=False):
        """Categories in first-seen order; `na_value` is always a category (Arkouda's rule).
        grouped=True adds permutation and segments."""
        cats = list(dict.fromkeys(list(strings) + [na_value]))
        index = {c: i for i, c in enumerate(cats)}
        codes = np.array([index[s] for s in strings], dtype=np.int64)
        perm = segs = None
        if grouped:
            perm, segs, _ = group_indices(codes)
        return cls(codes, Strings.from_list(cats), np.array([index[na_value]]), perm, segs)

    def to_list(self):
        cats = self.categories.to_list()
        return [cats[c] for c in self.codes]


def group_indices(key):
    """Stable sort of one int64 key: (permutation, segment starts, unique key indices)."""
    perm = np.argsort(key, kind="stable").astype(np.int64)
    ordered = key[perm]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if key.size else np.zeros(0, int)
    starts = starts.astype(np.int64)
    return perm, starts, perm[starts]


@dataclass(eq=False)
class GroupBy:
    """Keys (pdarrays, Strings or Categoricals of one length) with the permutation that groups
    them, each group's start in the permuted order and each group's first row."""
    keys: List[Union[np.ndarray, Strings, Categorical]]
    permutation: np.ndarray
    segments: np.ndarray
    unique_key_idx: np.ndarray

    def __post_init__(self):
        if not self.keys:
            raise ValueError("a GroupBy has at least one key")
        self.keys = [k if isinstance(k, (Strings, Categorical)) else as_pdarray(k) for k in self.keys]
        self.permutation = _int64(self.permutation, "GroupBy permutation")
        self.segments = _int64(self.segments, "GroupBy segments")
        self.unique_key_idx = _int64(self.unique_key_idx, "GroupBy unique_key_idx")

    @classmethod
    def from_keys(cls, keys):
        """Groups rows by the tuple of their key values."""
        keys = list(keys)
        columns = []
        for k in keys:
            if isinstance(k, Strings):
                columns.append(np.unique(np.array(k.to_list(), dtype=object), return_inverse=True)[1])
            elif isinstance(k, Categorical):
                columns.append(k.codes)
            else:
                columns.append(np.unique(np.asarray(k), return_inverse=True)[1])
        n = len(columns[0])
        if any(len(c) != n for c in columns):
            raise ValueError("GroupBy keys must all have the same length")
        combined = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)[1] if n else np.zeros(0)
        perm, segs, uki = group_indices(np.asarray(combined, dtype=np.int64).reshape(-1))
        return cls(keys, perm, segs, uki)


@dataclass(eq=False)
class Index:
    """A DataFrame index: its values are a pdarray or Strings, stored as that object."""
    values: Union[np.ndarray, Strings]


@dataclass(eq=False)
class DataFrame:
    """Named columns (pdarray, Strings, Categorical, SegArray), each stored as a top-level
    object named after the column; with index=True the index is one more column, "Index"."""
    columns: Dict[str, object] = field(default_factory=dict)
    index: Optional[Index] = None


def length(obj):
    """Number of elements Arkouda distributes an object by."""
    if isinstance(obj, np.ndarray):
        return obj.size
    if isinstance(obj, ArrayView):
        return obj.values.size
    if isinstance(obj, Strings):
        return len(obj)
    if isinstance(obj, SegArray):
        return obj.segments.size
    if isinstance(obj, Categorical):
        return obj.codes.size
    if isinstance(obj, GroupBy):
        return length(obj.keys[0])
    raise TypeError(f"not an Arkouda object: {type(obj).__name__}")


def same(a, b):
    """True when two objects have the same type, components and values (bit-exact floats)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if a is None or isinstance(a, (int, float, str, np.generic)):
        return a == b
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return all(same(getattr(a, f), getattr(b, f)) for f in a.__dataclass_fields__)
