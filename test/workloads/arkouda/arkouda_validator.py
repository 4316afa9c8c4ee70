"""Checks an HDF5 file (or a set of _LOCALE#### files) against Arkouda's HDF5 schema, as the
seed document (shared/reference/seeds/arkouda-hdf5-format.txt) states it.

Written independently of python/arkouda_hdf5: nothing is imported from it, every name, type and
value is spelled out again here, from the seed. The seed names the datasets of a Strings group
<name> explicitly: <name>_values and <name>_segments; that is what is checked unless the caller
asks for naming="arkouda", the names Arkouda's server uses (values, segments), which is then
the only naming accepted. Link names of components the seed only describes ("Dataset - Codes")
are Arkouda's own (values, segments, codes, categories, NA_Codes, permutation, unique_key_idx,
KEY_<i>).

    problems = validate_file("x.h5")          # [] when the file follows the schema
    problems = validate_file("x.h5", naming="arkouda")
    problems = validate_locale_files("x.h5")  # x_LOCALE0000.h5, x_LOCALE0001.h5, ...
    python3 arkouda_validator.py [--minimal] [--arkouda-naming] FILE...   # prints problems, exit status 1 if any
(--minimal: only what a reader needs; the optional attributes may be absent)
"""
import glob
import os
import re
import sys

import h5py
import numpy as np

ARRAYVIEW, PDARRAY, STRINGS, SEGARRAY, CATEGORICAL, GROUPBY = range(6)
NAMES = {ARRAYVIEW: "ArrayView", PDARRAY: "pdarray", STRINGS: "Strings", SEGARRAY: "SegArray",
         CATEGORICAL: "Categorical", GROUPBY: "GroupBy"}


class Check:
    """Collects problems while walking one file."""

    def __init__(self, path, complete=True, semantic=True, naming="seed"):
        if naming not in ("seed", "arkouda"):
            raise ValueError(f"naming must be 'seed' or 'arkouda', got {naming!r}")
        self.path = path
        self.naming = naming
        # complete: every attribute the seed lists is present (what Arkouda writes). Otherwise
        # only what a reader needs: file_version and arkouda_version are optional, and isBool
        # is "only required to be set when the dataset contains boolean values".
        self.complete = complete
        self.semantic = semantic                  # value checks that need the whole object
        self.problems = []

    def fail(self, obj, message):
        self.problems.append(f"{self.path}:{obj.name}: {message}")
        return False

    # --- attributes -------------------------------------------------------------------------

    def _attr(self, obj, name, required=True):
        if name not in obj.attrs:
            if required:
                self.fail(obj, f"attribute {name} is missing")
            return None
        return obj.attrs.get_id(name)

    def int_scalar(self, obj, name, allowed=None, required=True):
        attr = self._attr(obj, name, required)
        if attr is None:
            return None
        if attr.get_type().get_class() != h5py.h5t.INTEGER:
            return self.fail(obj, f"attribute {name} must be an integer, got {attr.dtype}") and None
        if attr.shape != ():
            return self.fail(obj, f"attribute {name} must be a scalar, got shape {attr.shape}") and None
        value = int(obj.attrs[name])
        if allowed is not None and value not in allowed:
            self.fail(obj, f"attribute {name} is {value}, expected {' or '.join(map(str, sorted(allowed)))}")
        return value

    def versions(self, obj):
        attr = self._attr(obj, "file_version", self.complete)
        if attr is not None:
            t = attr.get_type()
            if t.get_class() != h5py.h5t.FLOAT or t.get_size() != 4:
                self.fail(obj, f"file_version must be a 32-bit real, got {attr.dtype}")
            elif attr.shape != ():
                self.fail(obj, f"file_version must be a scalar, got shape {attr.shape}")
            elif float(obj.attrs["file_version"]) != 2.0:
                self.fail(obj, f"file_version is {float(obj.attrs['file_version'])}, expected 2.0")
        attr = self._attr(obj, "arkouda_version", self.complete)
        if attr is not None:
            t = attr.get_type()
            if t.get_class() != h5py.h5t.STRING:
                self.fail(obj, f"arkouda_version must be a string, got {attr.dtype}")
            elif attr.shape != ():
                self.fail(obj, f"arkouda_version must be a scalar, got shape {attr.shape}")
            else:
                if not t.is_variable_str() and t.get_strpad() != h5py.h5t.STR_NULLTERM:
                    self.fail(obj, "arkouda_version must be a null-terminated C string")
                value = obj.attrs["arkouda_version"]
                if not (value.decode() if isinstance(value, bytes) else str(value)):
                    self.fail(obj, "arkouda_version is empty")

    def metadata(self, obj, objtypes, is_bool):
        """ObjType in `objtypes`; isBool: None (not listed by the seed), "0" (must be 0) or
        "01" (0 or 1); file_version and arkouda_version."""
        objtype = self.int_scalar(obj, "ObjType", set(objtypes))
        flag = None
        if is_bool == "0":
            flag = self.int_scalar(obj, "isBool", {0}, required=self.complete)
        elif is_bool == "01":
            flag = self.int_scalar(obj, "isBool", {0, 1}, required=self.complete)
        self.versions(obj)
        return objtype, flag

    # --- datasets ---------------------------------------------------------------------------

    def dataset(self, obj, kinds, what):
        if not isinstance(obj, h5py.Dataset):
            return self.fail(obj, f"{what} must be a dataset, found a group")
        if obj.dtype.kind not in kinds:
            return self.fail(obj, f"{what} must have element type {kinds!r}, got {obj.dtype}")
        return True

    def int64_component(self, group, name, required=True):
        """A component the seed lists as int64 data with ObjType 1 and isBool 0."""
        if name not in group:
            if required:
                self.fail(group, f"component {name} is missing")
            return None
        d = group[name]
        if not self.dataset(d, "i", name):
            return None
        if d.dtype != np.dtype("<i8") and d.dtype != np.dtype(">i8"):
            self.fail(d, f"{name} must be int64, got {d.dtype}")
        if d.ndim != 1:
            self.fail(d, f"{name} must be one-dimensional, got shape {d.shape}")
        self.metadata(d, {PDARRAY}, "0")
        return d[...].reshape(-1)

    def pdarray(self, d, objtypes=(PDARRAY,)):
        if not self.dataset(d, "iuf", "a pdarray"):
            return None
        if d.ndim != 1:
            self.fail(d, f"a pdarray is one-dimensional, got shape {d.shape}")
        _, flag = self.metadata(d, set(objtypes), "01")
        data = d[...].reshape(-1)
        if flag == 1:
            if d.dtype.kind != "u" or d.dtype.itemsize != 1:
                self.fail(d, f"isBool is 1: boolean values are stored as 8-bit unsigned, got {d.dtype}")
            elif data.size and data.max() > 1:
                self.fail(d, "isBool is 1 but values other than 0 and 1 are stored")
        return data

    def arrayview(self, d):
        if not self.dataset(d, "iuf", "an ArrayView"):
            return None, None
        self.metadata(d, {ARRAYVIEW}, "01")
        rank = self.int_scalar(d, "Rank")
        attr = self._attr(d, "Shape")
        shape = None
        if attr is not None:
            if attr.get_type().get_class() != h5py.h5t.INTEGER or len(attr.shape) != 1:
                self.fail(d, f"Shape must be a one-dimensional integer array, got {attr.dtype} {attr.shape}")
            else:
                shape = [int(x) for x in d.attrs["Shape"]]
                if rank is not None and len(shape) != rank:
                    self.fail(d, f"Shape has {len(shape)} entries but Rank is {rank}")
                if any(x < 0 for x in shape):
                    self.fail(d, f"Shape has negative sizes: {shape}")
        if self.semantic and shape is not None and int(np.prod(shape)) != d.size:
            self.fail(d, f"Shape {shape} holds {int(np.prod(shape))} elements, the dataset {d.size}")
        return shape, d.size

    # --- groups -----------------------------------------------------------------------------

    def members(self, group, required, optional=(), pattern=None):
        for name in required:
            if name not in group:
                self.fail(group, f"component {name} is missing")
        for name in group:
            if name not in required and name not in optional and not (pattern and re.fullmatch(pattern, name)):
                self.fail(group, f"unexpected member {name}")

    def group(self, obj, what):
        if not isinstance(obj, h5py.Group):
            return self.fail(obj, f"{what} must be a group, found a dataset")
        return True

    def strings(self, g, component=False):
        """Returns the number of strings, or None."""
        if not self.group(g, "a Strings object"):
            return None
        self.metadata(g, {STRINGS}, "0" if component else None)
        if self.naming == "seed":  # "user provided dataset name with _values appended"
            own = g.name.rsplit("/", 1)[-1]
            values_name, segments_name = own + "_values", own + "_segments"
        else:
            values_name, segments_name = "values", "segments"
        self.members(g, [values_name], [segments_name])
        if values_name not in g:
            return None
        v = g[values_name]
        if not self.dataset(v, "u", "Strings values"):
            return None
        if v.dtype.itemsize != 1:
            self.fail(v, f"Strings values must be uint8, got {v.dtype}")
        self.metadata(v, {PDARRAY}, "0")
        data = v[...].reshape(-1)
        if data.size and data[-1] != 0:
            self.fail(v, "Strings values must end with a null byte")
        count = int(np.count_nonzero(data == 0))
        offsets = self.int64_component(g, segments_name, required=False)
        if offsets is not None:
            if offsets.size != count:
                self.fail(g, f"{offsets.size} segments but {count} null-terminated strings")
            elif count:
                starts = np.r_[0, np.flatnonzero(data == 0)[:-1] + 1]
                if not np.array_equal(offsets, starts):
                    self.fail(g, "segments are not the starts of the null-terminated strings")
        return count

    def segarray(self, g):
        if not self.group(g, "a SegArray"):
            return
        self.metadata(g, {SEGARRAY}, None)
        self.members(g, ["values", "segments"])
        n_values = None
        if "values" in g:
            v = g["values"]
            objtype = self.int_scalar(v, "ObjType", {PDARRAY, STRINGS})
            if objtype == STRINGS:
                n_values = self.strings(v, component=True)
            elif objtype == PDARRAY:
                data = self.pdarray(v)
                n_values = None if data is None else data.size
        segs = self.int64_component(g, "segments")
        if segs is not None and segs.size:
            if segs[0] != 0 or np.any(np.diff(segs) < 0):
                self.fail(g, "SegArray segments must start at 0 and never decrease")
            if n_values is not None and segs[-1] > n_values:
                self.fail(g, f"SegArray segment start {segs[-1]} is past the {n_values} values")

    def categorical(self, g, component=False):
        """Returns the number of codes, or None."""
        if not self.group(g, "a Categorical"):
            return None
        self.metadata(g, {CATEGORICAL}, "0" if component else None)
        self.members(g, ["codes", "categories", "NA_Codes"], ["permutation", "segments"])
        codes = self.int64_component(g, "codes")
        ncat = None
        if "categories" in g:
            c = g["categories"]
            self.int_scalar(c, "ObjType", {STRINGS})
            ncat = self.strings(c, component=True)
        na = self.int64_component(g, "NA_Codes")
        perm = self.int64_component(g, "permutation", required=False)
        segs = self.int64_component(g, "segments", required=False)
        if (perm is None) != (segs is None):
            self.fail(g, "permutation and segments are stored together or not at all")
        if self.semantic and codes is not None and ncat is not None:
            if codes.size and (codes.min() < 0 or codes.max() >= ncat):
                self.fail(g, f"codes outside the {ncat} categories")
            if na is not None and (na.size != 1 or not 0 <= na[0] < ncat):
                self.fail(g, f"NA_Codes must hold one category index, got {na.tolist()}")
            if perm is not None and not np.array_equal(np.sort(perm), np.arange(codes.size)):
                self.fail(g, "permutation is not a permutation of the codes")
            if segs is not None and (np.any(np.diff(segs) <= 0) or (segs.size and (segs[0] != 0 or segs[-1] >= max(codes.size, 1)))):
                self.fail(g, "segments must start at 0 and increase within the codes")
        return None if codes is None else codes.size

    def groupby(self, g):
        if not self.group(g, "a GroupBy"):
            return
        self.metadata(g, {GROUPBY}, None)
        self.members(g, ["permutation", "segments", "unique_key_idx", "KEY_0"], pattern=r"KEY_(0|[1-9][0-9]*)")
        perm = self.int64_component(g, "permutation")
        segs = self.int64_component(g, "segments")
        uki = self.int64_component(g, "unique_key_idx")
        keys = sorted(int(n[4:]) for n in g if re.fullmatch(r"KEY_(0|[1-9][0-9]*)", n))
        if keys != list(range(len(keys))):
            self.fail(g, f"keys must be numbered KEY_0 .. KEY_{len(keys) - 1}, found {keys}")
        if "NumKeys" in g.attrs:
            self.int_scalar(g, "NumKeys", {len(keys)})
        lengths = set()
        for k in keys:
            key = g[f"KEY_{k}"]
            objtype = self.int_scalar(key, "ObjType", {PDARRAY, STRINGS, CATEGORICAL})
            if objtype == PDARRAY:
                data = self.pdarray(key)
                lengths.add(None if data is None else data.size)
            elif objtype == STRINGS:
                lengths.add(self.strings(key, component=True))
            elif objtype == CATEGORICAL:
                lengths.add(self.categorical(key, component=True))
        if len(lengths - {None}) > 1:
            self.fail(g, f"keys have different lengths: {sorted(lengths - {None})}")
        if self.semantic and perm is not None and segs is not None and uki is not None:
            n = perm.size
            if lengths - {None} and (lengths - {None}) != {n}:
                self.fail(g, f"permutation has {n} entries, the keys {sorted(lengths - {None})}")
            if not np.array_equal(np.sort(perm), np.arange(n)):
                self.fail(g, "permutation is not a permutation of the rows")
            if segs.size and (segs[0] != 0 or np.any(np.diff(segs) <= 0) or segs[-1] >= n):
                self.fail(g, "segments must start at 0 and increase within the rows")
            if uki.size != segs.size:
                self.fail(g, f"{uki.size} unique_key_idx entries for {segs.size} segments")
            elif segs.size and not np.array_equal(uki, perm[segs]):
                self.fail(g, "unique_key_idx is not the first row of each segment")

    # --- top level ----------------------------------------------------------------------------

    def top_level(self, obj):
        """Validates one top-level object; returns (ObjType, ArrayView (shape, size) or None)."""
        if "ObjType" not in obj.attrs:
            self.fail(obj, "attribute ObjType is missing (required to read the object)")
            return None, None
        objtype = self.int_scalar(obj, "ObjType", set(NAMES))
        view = None
        if objtype == ARRAYVIEW:
            view = self.arrayview(obj)
        elif objtype == PDARRAY:
            self.pdarray(obj)
        elif objtype == STRINGS:
            self.strings(obj)
        elif objtype == SEGARRAY:
            self.segarray(obj)
        elif objtype == CATEGORICAL:
            self.categorical(obj)
        elif objtype == GROUPBY:
            self.groupby(obj)
        return objtype, view


def validate_file(path, complete=True, semantic=True, naming="seed", _summary=None):
    """Problems (strings) of one file; [] when it follows the schema."""
    check = Check(str(path), complete, semantic, naming)
    try:
        with h5py.File(path, "r") as f:
            if len(f) == 0:
                check.problems.append(f"{path}: the file holds no object")
            for name in f:
                objtype, view = check.top_level(f[name])
                if _summary is not None:
                    _summary[name] = (objtype, view)
    except OSError as e:
        check.problems.append(f"{path}: cannot be read as HDF5: {e}")
    return check.problems


def locale_files(path):
    head, tail = os.path.split(str(path))
    stem, ext = (tail.rsplit(".", 1)[0], "." + tail.rsplit(".", 1)[1]) if "." in tail else (tail, "")
    pattern = re.compile(re.escape(stem) + r"_LOCALE(\d{4})" + re.escape(ext))
    found = {}
    for name in os.listdir(head or "."):
        m = pattern.fullmatch(name)
        if m:
            found[int(m.group(1))] = os.path.join(head, name)
    return [found[i] for i in sorted(found)], sorted(found)


def validate_locale_files(path, expected_locales=None, complete=True, naming="seed"):
    """Problems of the distributed files of `path`: each file on its own (value checks that need
    the whole object are skipped), locale numbering 0000.. without gaps, the same objects with
    the same ObjType in every file, and ArrayViews whose parts add up to their Shape."""
    files, numbers = locale_files(path)
    problems = []
    if not files:
        return [f"{path}: no _LOCALE#### files"]
    if numbers != list(range(len(numbers))):
        problems.append(f"{path}: locale numbers {numbers} are not 0..{len(numbers) - 1}")
    if expected_locales is not None and len(files) != expected_locales:
        problems.append(f"{path}: {len(files)} locale files, expected {expected_locales}")
    summaries = []
    for f in files:
        summary = {}
        problems += validate_file(f, complete, semantic=False, naming=naming, _summary=summary)
        summaries.append(summary)
    first = summaries[0]
    for f, s in zip(files[1:], summaries[1:]):
        if {k: v[0] for k, v in s.items()} != {k: v[0] for k, v in first.items()}:
            problems.append(f"{f}: holds other objects or ObjTypes than {files[0]}")
    for name, (objtype, view) in first.items():
        if objtype == ARRAYVIEW and view and view[0] is not None:
            shapes = {tuple(s[name][1][0] or ()) for s in summaries if name in s and s[name][1]}
            total = sum(s[name][1][1] for s in summaries if name in s and s[name][1])
            if len(shapes) != 1:
                problems.append(f"{path}:{name}: the locale files disagree on Shape: {sorted(shapes)}")
            elif total != int(np.prod(view[0])):
                problems.append(f"{path}:{name}: the locale parts hold {total} elements, Shape {view[0]} needs {int(np.prod(view[0]))}")
    return problems


if __name__ == "__main__":
    args = sys.argv[1:]
    complete = "--minimal" not in args
    naming = "arkouda" if "--arkouda-naming" in args else "seed"
    problems = [p for path in args if not path.startswith("--") for p in validate_file(path, complete, naming=naming)]
    print("\n".join(problems) or "ok")
    sys.exit(1 if problems else 0)
