"""Variable-length values between Python objects and HDF5's memory forms (char* strings, hvl_t
sequences) for coordinate I/O (coo.py): what h5py does for dset[...], done for the connector's
coordinate calls. Values in: str or bytes (None: NULL) for strings, anything numpy turns into a
1-D array of the base type for sequences. Values out: as h5py reads them (bytes for strings,
numpy arrays for sequences; NULL as b"" and an empty array). Compounds with variable-length
members are refused (the C API takes them)."""
import ctypes

import numpy as np

from . import _libhdf5

_HVL = np.dtype([("len", np.uintp), ("p", np.uintp)])  # hvl_t


class Form:
    """How one variable-length dtype (h5py's string_dtype or vlen_dtype) lies in memory."""

    def __init__(self, dtype):
        import h5py
        if dtype.names:
            raise TypeError("coordinate I/O of compounds with variable-length members from Python is not "
                            "supported (use dset[...] or the C API)")
        string = h5py.check_string_dtype(dtype)
        self.base = None if string else h5py.check_vlen_dtype(dtype)
        self.encoding = string.encoding if string else None
        self.item = np.dtype(np.uintp) if string else _HVL
        self.mem_type = h5py.h5t.py_create(dtype, logical=True)

    def to_memory(self, values, n):
        """(memory, keep): n values as char* or hvl_t elements pointing into `keep`, which must
        live as long as the memory is used."""
        if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
            values = [values] if n == 1 else values
        values = list(values)
        if len(values) != n:
            raise ValueError(f"{n} coordinates need {n} values, got {len(values)}")
        return self._strings(values) if self.base is None else self._sequences(values)

    def _strings(self, values):
        encoded = []
        for v in values:
            if v is None or isinstance(v, bytes):
                encoded.append(v)
            elif isinstance(v, str):
                encoded.append(v.encode(self.encoding))  # an ASCII dataset refuses other characters
            else:
                raise TypeError(f"a variable-length string dataset takes str, bytes or None, got {type(v).__name__}")
        if any(b"\0" in b for b in encoded if b):
            raise ValueError("a variable-length string cannot hold a NUL character")
        keep = b"\0".join(b or b"" for b in encoded) + b"\0"
        lengths = np.array([len(b or b"") + 1 for b in encoded], dtype=np.uintp)
        base = ctypes.cast(ctypes.c_char_p(keep), ctypes.c_void_p).value
        pointers = base + np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.uintp)
        pointers[[b is None for b in encoded]] = 0
        return pointers, keep

    def _sequences(self, values):
        arrays = [np.zeros(0, self.base) if v is None else np.ascontiguousarray(v, dtype=self.base).reshape(-1)
                  for v in values]
        keep = np.concatenate(arrays) if arrays else np.zeros(0, self.base)
        memory = np.zeros(len(arrays), _HVL)
        memory["len"] = [len(a) for a in arrays]
        starts = np.concatenate(([0], np.cumsum(memory["len"])[:-1])).astype(np.uintp)
        memory["p"] = np.where(memory["len"] > 0, keep.ctypes.data + starts * self.base.itemsize, 0)
        return memory, keep

    def room(self, count):
        """Memory for `count` values the library fills (payloads it allocates)."""
        return np.zeros(count, self.item)

    def from_memory(self, memory):
        """The values of a filled room as h5py reads them; frees the library's payloads."""
        if self.base is None:
            out = [ctypes.string_at(int(p)) if p else b"" for p in memory]
        else:
            size = self.base.itemsize
            out = [np.frombuffer(ctypes.string_at(int(p), int(n) * size), self.base).copy() if n else
                   np.zeros(0, self.base) for n, p in zip(memory["len"], memory["p"])]
        self.reclaim(memory)
        values = np.empty(len(out), dtype=object)
        values[:] = out
        return values

    def reclaim(self, memory):
        """Frees the payloads the library allocated in `memory` (H5Treclaim, as h5py does)."""
        if not len(memory):
            return
        _libhdf5.reclaim(self.mem_type.id, memory.ctypes.data, len(memory))
        memory[...] = 0
