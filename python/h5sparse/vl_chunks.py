"""Variable-length sparse datasets read without the connector: the stored chunks from h5py's
read_direct_chunk, decoded and verified by libh5sparse as the connector decodes them
(h5sparse_decode_var_chunk in h5sparse.h; docs/FORMAT.md, "Version 3: variable-length
chunks"), the values made here from the true datatype in the dataset's parameters.

    elements = h5sparse.read_vl_chunks(f["names"])   # no HDF5_VOL_CONNECTOR needed

Values are what h5py returns for one element of the true type (bytes for strings, or str with
asstr=True; numpy arrays for sequences; tuples for compounds), except that NULL is None.
"""
import ctypes
from collections import namedtuple

import numpy as np

from . import library
from ._calls import H5SparseError, _error_text, guarded
from ._libhdf5 import filter_values

__all__ = ["read_vl_chunks", "vl_chunk_info", "VLElements", "CorruptChunkError", "MissingCodecError"]

FILTER_ID = 45100

VLElements = namedtuple("VLElements", "coords values")
VLElements.__doc__ = """The defined elements of a variable-length dataset inside its extent, in
row-major order: coords (n x rank int64 array) and values (list of n values)."""


class CorruptChunkError(ValueError):
    """Stored bytes or parameters that break docs/FORMAT.md (checksums included)."""


class MissingCodecError(RuntimeError):
    """What this build cannot decode: a codec its c-blosc was built without, a newer writer's
    format."""


class _Chunk(ctypes.Structure):  # h5sparse_var_chunk_t
    _fields_ = [("filter_mask", ctypes.c_uint32 * 4), ("section_size", ctypes.c_size_t * 4),
                ("section_orig_size", ctypes.c_size_t * 4), ("fixed_size", ctypes.c_size_t),
                ("num_slots", ctypes.c_size_t), ("num_elements", ctypes.c_size_t), ("data_size", ctypes.c_size_t),
                ("offsets", ctypes.c_void_p), ("fixed", ctypes.c_void_p), ("ends", ctypes.c_void_p),
                ("null", ctypes.c_void_p), ("data", ctypes.c_void_p)]


_ROOM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Chunk), ctypes.c_void_p)
_ERRORS = {"corrupt data": CorruptChunkError, "unsupported": MissingCodecError, "invalid argument": ValueError,
           "out of memory": MemoryError}


def _lib():
    lib = library()
    if not getattr(lib.h5sparse_decode_var_chunk, "argtypes", None):
        size, ptr = ctypes.c_size_t, ctypes.c_void_p
        lib.h5sparse_var_true_type.restype = ctypes.c_ssize_t
        lib.h5sparse_var_true_type.argtypes = [size, ptr, ptr, size]
        lib.h5sparse_decode_var_chunk.restype = ctypes.c_int
        lib.h5sparse_decode_var_chunk.argtypes = [size, ptr, ctypes.c_char_p, size, ctypes.c_uint32,
                                                  ctypes.POINTER(_Chunk), _ROOM, ptr]
    return lib


def _checked(where, function, *args):
    """function(*args); a failure raises the exception of its h5sparse error code, `where` first."""
    rc, records = guarded(function, *args)
    if records is not None:
        ours = [r for r in records if r["class"] == "h5sparse"]
        error = _ERRORS.get(ours[0]["minor"], H5SparseError) if ours else H5SparseError
        raise error(f"{where}: {_error_text(ours or records)}")
    return rc


class _Dataset:
    """A variable-length sparse dataset's parameters (cd_values of filter 45100) and true type."""

    def __init__(self, dset):
        cd = filter_values(dset.id.get_create_plist(), FILTER_ID)
        if cd is None:
            raise ValueError(f"dataset '{dset.name}' is no sparse dataset (no filter {FILTER_ID})")
        self.dset, self.where = dset, f"dataset '{dset.name}'"
        self.cd = np.array(cd, dtype=np.uintc)
        lib = _lib()
        size = _checked(self.where, lib.h5sparse_var_true_type, len(self.cd), self.cd.ctypes.data, None, 0)
        type_bytes = ctypes.create_string_buffer(size)
        _checked(self.where, lib.h5sparse_var_true_type, len(self.cd), self.cd.ctypes.data, type_bytes, size)
        self.type_bytes = type_bytes.raw

    def chunks(self):
        """(chunk info, filter mask, stored bytes) of every stored chunk, in chunk index order."""
        for i in range(self.dset.id.get_num_chunks()):
            info = self.dset.id.get_chunk_info(i)
            filter_mask, raw = self.dset.id.read_direct_chunk(info.chunk_offset)
            yield info, filter_mask, bytes(raw)

    def decode(self, info, filter_mask, raw, room=None):
        """The chunk's _Chunk: its header fields, and with `room` (a _ROOM) its elements there.
        Errors name the dataset and the chunk."""
        chunk = _Chunk()
        where = f"{self.where}, chunk at {tuple(int(v) for v in info.chunk_offset)}"
        _checked(where, _lib().h5sparse_decode_var_chunk, len(self.cd), self.cd.ctypes.data, raw, len(raw),
                 filter_mask, ctypes.byref(chunk), room if room is not None else _ROOM(), None)
        return chunk


class _Elements:
    """One chunk's decoded elements, in numpy arrays the library writes into (its room)."""

    def __init__(self):
        self.failure = None
        self.callback = _ROOM(self._room)

    def _room(self, chunk, _data):
        try:
            c = chunk.contents
            n, slots = c.num_elements, c.num_slots
            self.offsets = np.empty(n, np.uint32)
            self.fixed = np.empty(n * c.fixed_size, np.uint8)
            self.ends = np.empty(n * slots, np.uint64)
            self.null = np.empty(n * slots, np.uint8)
            self.data = np.empty(c.data_size, np.uint8)
            c.offsets, c.fixed, c.ends = self.offsets.ctypes.data, self.fixed.ctypes.data, self.ends.ctypes.data
            c.null, c.data = self.null.ctypes.data, self.data.ctypes.data
            return 0
        except BaseException as e:  # noqa: B036 - raised again after the call
            self.failure = e
            return -1


class _ValueMaker:
    """Turns an element's fixed part and payloads into the value h5py gives for the true type."""

    def __init__(self, type_bytes, asstr):
        import h5py
        true_type = h5py.h5t.decode(type_bytes)
        self.compound = true_type.get_class() == h5py.h5t.COMPOUND
        types = ([true_type.get_member_type(i) for i in range(true_type.get_nmembers())] if self.compound
                 else [true_type])
        # (slot index or None, fixed offset, dtype or None (strings), text encoding when asstr)
        self.members, self.fixed_size, self.slots = [], 0, 0
        for t in types:
            if t.get_class() == h5py.h5t.VLEN:
                self.members.append((self.slots, None, t.get_super().dtype, None))
                self.slots += 1
            elif t.get_class() == h5py.h5t.STRING and t.is_variable_str():
                encoding = "utf-8" if t.get_cset() == h5py.h5t.CSET_UTF8 else "ascii"
                self.members.append((self.slots, None, None, encoding if asstr else None))
                self.slots += 1
            else:
                self.members.append((None, self.fixed_size, t.dtype, None))
                self.fixed_size += t.get_size()

    def check(self, chunk, where):
        if chunk.fixed_size != self.fixed_size or chunk.num_slots != self.slots:
            raise CorruptChunkError(f"{where}: the datatype disagrees with the parameters' fixed part or members")

    def values(self, e):
        """The values of a chunk's decoded elements `e` (an _Elements)."""
        fixed, data = e.fixed.tobytes(), e.data.tobytes()
        ends, null = e.ends.tolist(), e.null.tolist()
        out = []
        for k in range(len(e.offsets)):
            value = []
            for slot, offset, dtype, encoding in self.members:
                if slot is None:
                    value.append(np.frombuffer(fixed, dtype, 1, k * self.fixed_size + offset)[0])
                    continue
                s = k * self.slots + slot
                if null[s]:
                    value.append(None)
                    continue
                payload = data[ends[s - 1] if s else 0:ends[s]]
                if dtype is not None:
                    value.append(np.frombuffer(payload, dtype).copy())
                else:
                    value.append(payload.decode(encoding) if encoding else payload)
            out.append(tuple(value) if self.compound else value[0])
        return out


def vl_chunk_info(dset):
    """A StructChunkInfo (chunks.py) per stored chunk of variable-length dataset `dset`, its four
    sections' masks and sizes read from the chunk's header (header checksum verified), without
    the connector. A chunk stored around the filter (a dense carrier chunk) has no sections: 0s."""
    from .chunks import StructChunkInfo
    d = _Dataset(dset)
    out = []
    for info, filter_mask, raw in d.chunks():
        c = d.decode(info, filter_mask, raw)
        out.append(StructChunkInfo(tuple(int(v) for v in info.chunk_offset), tuple(c.filter_mask),
                                   tuple(c.section_size), tuple(c.section_orig_size), int(info.byte_offset),
                                   int(info.size)))
    return out


def read_vl_chunks(dset, asstr=False):
    """The defined elements of variable-length sparse dataset `dset` (an h5py Dataset, opened
    with or without the connector) as VLElements, read with read_direct_chunk and decoded by
    libh5sparse. asstr: strings as str (h5py's asstr()) rather than bytes. Raises
    CorruptChunkError naming the chunk when stored bytes break the format, MissingCodecError
    for what this build cannot decode (a codec its c-blosc lacks, a newer writer's format)."""
    d = _Dataset(dset)
    maker = _ValueMaker(d.type_bytes, asstr)
    rank, shape, chunk_shape = len(dset.shape), np.array(dset.shape, np.int64), dset.chunks
    coords, values = [], []
    for info, filter_mask, raw in d.chunks():
        e = _Elements()
        try:
            chunk = d.decode(info, filter_mask, raw, e.callback)
        except Exception:
            if e.failure is not None:
                raise e.failure from None
            raise
        maker.check(chunk, d.where)
        at = np.array(np.unravel_index(e.offsets.astype(np.int64), chunk_shape)).T.reshape(-1, rank)
        at += np.array(info.chunk_offset, np.int64)
        inside = (at < shape).all(axis=1)
        coords.append(at[inside])
        values.extend(v for v, keep in zip(maker.values(e), inside) if keep)
    coords = np.concatenate(coords) if coords else np.zeros((0, rank), np.int64)
    order = np.lexsort(coords.T[::-1]) if len(coords) else np.zeros(0, np.int64)
    return VLElements(coords[order], [values[k] for k in order])
