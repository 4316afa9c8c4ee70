"""Arkouda's distributed layout: an object split over N locales in contiguous blocks (Chapel's
Block distribution), one file per locale named <prefix>_LOCALE<####><extension>.

part(obj, i, n) is the piece locale i holds; merge(parts) rebuilds the object from the pieces
in locale order. Offsets that point into an object's own values (Strings offsets, SegArray
segments) are local to each piece; indices into the whole object (permutations, segments of a
GroupBy or Categorical, unique_key_idx, codes) keep their global values, as Arkouda writes them.
"""
import glob
import os
import re

import numpy as np

from . import objects as ak
from . import schema


def block(total, i, n):
    """[lo, hi) of block i of n over `total` elements (the sizes differ by at most one)."""
    if not 0 <= i < n:
        raise ValueError(f"locale {i} out of range for {n} locales")
    return total * i // n, total * (i + 1) // n


def _strings_range(s, lo, hi):
    start = int(s.offsets[lo]) if lo < len(s) else s.values.size
    end = int(s.offsets[hi]) if hi < len(s) else s.values.size
    return ak.Strings(s.values[start:end].copy(), s.offsets[lo:hi] - start)


def _values_range(values, lo, hi):
    if isinstance(values, ak.Strings):
        return _strings_range(values, lo, hi)
    return values[lo:hi].copy()


def _blk(a, i, n):
    lo, hi = block(a.size, i, n)
    return a[lo:hi].copy()


def part(obj, i, n):
    """The piece of `obj` that locale i of n holds."""
    if isinstance(obj, ak.Index):
        return ak.Index(part(obj.values, i, n))
    if isinstance(obj, np.ndarray):
        return _blk(obj, i, n)
    if isinstance(obj, ak.ArrayView):
        return ak.ArrayView(_blk(obj.values, i, n), obj.shape)
    if isinstance(obj, ak.Strings):
        return _strings_range(obj, *block(len(obj), i, n))
    if isinstance(obj, ak.SegArray):
        lo, hi = block(obj.segments.size, i, n)
        total = len(obj.values) if isinstance(obj.values, ak.Strings) else obj.values.size
        start = int(obj.segments[lo]) if lo < obj.segments.size else total
        end = int(obj.segments[hi]) if hi < obj.segments.size else total
        return ak.SegArray(obj.segments[lo:hi] - start, _values_range(obj.values, start, end))
    if isinstance(obj, ak.Categorical):
        perm = None if obj.permutation is None else _blk(obj.permutation, i, n)
        segs = None if obj.segments is None else _blk(obj.segments, i, n)
        return ak.Categorical(_blk(obj.codes, i, n), part(obj.categories, i, n),
                              _blk(obj.na_codes, i, n), perm, segs)
    if isinstance(obj, ak.GroupBy):
        return ak.GroupBy([part(k, i, n) for k in obj.keys], _blk(obj.permutation, i, n),
                          _blk(obj.segments, i, n), _blk(obj.unique_key_idx, i, n))
    raise TypeError(f"cannot distribute {type(obj).__name__}")


def split(obj, n):
    return [part(obj, i, n) for i in range(n)]


def _concat(arrays):
    return np.concatenate(arrays) if arrays else np.zeros(0, np.int64)


def _merge_strings(parts):
    shifts = np.cumsum([0] + [p.values.size for p in parts[:-1]])
    return ak.Strings(_concat([p.values for p in parts]).astype(np.uint8),
                      _concat([p.offsets + s for p, s in zip(parts, shifts)]))


def merge(parts):
    """The object whose locale pieces are `parts` (in locale order)."""
    first = parts[0]
    if any(type(p) is not type(first) for p in parts):
        raise ValueError("the locale files hold different object types under one name")
    if isinstance(first, np.ndarray):
        return _concat(parts)
    if isinstance(first, ak.ArrayView):
        if any(p.shape != first.shape for p in parts):
            raise ValueError("the locale files disagree on the ArrayView Shape")
        return ak.ArrayView(_concat([p.values for p in parts]), first.shape)
    if isinstance(first, ak.Strings):
        return _merge_strings(parts)
    if isinstance(first, ak.SegArray):
        sizes = [len(p.values) if isinstance(p.values, ak.Strings) else p.values.size for p in parts]
        shifts = np.cumsum([0] + sizes[:-1])
        return ak.SegArray(_concat([p.segments + s for p, s in zip(parts, shifts)]),
                           merge([p.values for p in parts]))
    if isinstance(first, ak.Categorical):
        grouped = first.permutation is not None
        return ak.Categorical(_concat([p.codes for p in parts]), _merge_strings([p.categories for p in parts]),
                              _concat([p.na_codes for p in parts]),
                              _concat([p.permutation for p in parts]) if grouped else None,
                              _concat([p.segments for p in parts]) if grouped else None)
    if isinstance(first, ak.GroupBy):
        nkeys = len(first.keys)
        if any(len(p.keys) != nkeys for p in parts):
            raise ValueError("the locale files disagree on the number of GroupBy keys")
        return ak.GroupBy([merge([p.keys[k] for p in parts]) for k in range(nkeys)],
                          _concat([p.permutation for p in parts]), _concat([p.segments for p in parts]),
                          _concat([p.unique_key_idx for p in parts]))
    raise TypeError(f"cannot merge {type(first).__name__}")


# --- file names ---------------------------------------------------------------------------

def _prefix_extension(path):
    """Arkouda's split of a file name: the extension is what follows the last dot of the last
    path component."""
    head, tail = os.path.split(str(path))
    if "." not in tail:
        return str(path), ""
    stem, ext = tail.rsplit(".", 1)
    return os.path.join(head, stem), "." + ext


def locale_filename(path, i):
    prefix, ext = _prefix_extension(path)
    return f"{prefix}{schema.LOCALE_SUFFIX}{i:0{schema.LOCALE_DIGITS}d}{ext}"


def locale_filenames(path, n):
    return [locale_filename(path, i) for i in range(n)]


def locale_files_on_disk(path):
    """{locale number: file name} of the <path>_LOCALE#### files that exist."""
    prefix, ext = _prefix_extension(path)
    pattern = re.compile(re.escape(os.path.basename(prefix) + schema.LOCALE_SUFFIX) + r"(\d{4,})" + re.escape(ext) + r"$")
    found = {}
    for name in glob.glob(glob.escape(prefix + schema.LOCALE_SUFFIX) + "*" + glob.escape(ext)):
        m = pattern.match(os.path.basename(name))
        if m:
            found[int(m.group(1))] = name
    return found


def existing_locale_files(path):
    """The <path>_LOCALE#### files on disk, in locale order (a gap is an error)."""
    found = locale_files_on_disk(path)
    missing = sorted(set(range(len(found))) - set(found))
    if missing:
        raise FileNotFoundError(f"locale files of {path} have gaps: no locale {missing[0]} among {sorted(found)}")
    return [found[i] for i in range(len(found))]
