"""Hangar's HDF5_00 storage method with unmodified h5py: a sample store, dense-padded (as Hangar
does it) or sparse (h5sparse sparse datasets: only each sample's elements are defined).

Each file ``<uid>.hdf5`` holds COLLECTION_COUNT datasets ``"0"..`` of shape
(COLLECTION_SIZE, prod(schema shape)); a sample is flattened into the first prod(shape) elements
of one row; chunks are (1, floor(255000 / itemsize)) at most, as Hangar computes them; the file
is written in SWMR mode and flushed after every sample. Every sample gets the record string
``00:<file uid>:<xxhash64 hex>:<dataset number>:<collection index>:<shape>``, and every read
verifies the digest. The C++ example (workloads/hangar) writes and reads the same files.

The maximum shape picks HDF5's chunk index; the extent is Hangar's either way. Dense stores keep
Hangar's fixed maximum (a fixed-array index, whose one data block every per-sample flush
rewrites whole); sparse stores default to an unlimited collection axis (an extensible-array
index, whose flush rewrites only the small block holding the new row): ``chunk_index``.

Sparse writes need the h5sparse connector (HDF5_VOL_CONNECTOR, see ``h5plugin-config --env``);
reading either mode needs only HDF5_PLUGIN_PATH::

    w = StoreWriter(directory, schema_shape=(64, 64, 3), dtype="u1", mode="sparse")
    record = w.write(np.zeros((10, 20, 3), "u1"))      # '00:rlUK3C:...:0:0:10 20 3'
    w.close()
    StoreReader(directory).read(record)                 # verified against the digest
"""
import ctypes
import os
import random
import string
from collections import namedtuple

import h5py
import numpy as np

from . import LZF, Blosc, Deflate, Shuffle, Sparse

__all__ = ["COLLECTION_SIZE", "COLLECTION_COUNT", "CHUNK_MAX_NBYTES", "CHUNK_INDEXES", "DigestMismatch",
           "Record", "xxh64_hexdigest", "parse_record", "compression_kwargs", "StoreWriter", "StoreReader"]

COLLECTION_SIZE = 250
COLLECTION_COUNT = 100
CHUNK_MAX_NBYTES = 255_000  # < 256 KB, fits L2
CHUNK_MAX_RDCC_NBYTES = 100_000_000
CHUNK_RDCC_W0 = 0.75
DEFAULT_OPTIONS = {"complib": "blosc:lz4hc", "complevel": 5, "shuffle": "byte"}
CHUNK_INDEXES = ("fixed", "extensible")
DTYPES = ("bool", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "f4", "f8")

_BLOSC = ("blosc:blosclz", "blosc:lz4", "blosc:lz4hc", "blosc:zlib", "blosc:zstd")
_BLOSC_CODES = {"blosc:blosclz": 0, "blosc:lz4": 1, "blosc:lz4hc": 2, "blosc:zlib": 4, "blosc:zstd": 5}
_BLOSC_SHUFFLE = {None: 0, "none": 0, "byte": 1, "bit": 2}


class DigestMismatch(RuntimeError):
    """A sample read back does not hash to its record's digest: data in != data out."""


Record = namedtuple("Record", "uid digest dataset index shape")

_xxhash = None


def xxh64_hexdigest(array):
    """Hangar's ``xxhash.xxh64_hexdigest(array)``: XXH64, seed 0, over the raw C-order bytes."""
    global _xxhash
    if _xxhash is None:
        lib = ctypes.CDLL("libxxhash.so.0")
        lib.XXH64.restype = ctypes.c_uint64
        lib.XXH64.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint64]
        _xxhash = lib
    data = np.ascontiguousarray(array)
    return "%016x" % _xxhash.XXH64(data.ctypes.data, data.nbytes, 0)


def format_record(uid, digest, dataset, index, shape):
    return f"00:{uid}:{digest}:{dataset}:{index}:{' '.join(str(int(d)) for d in shape)}"


def parse_record(text):
    if isinstance(text, bytes):
        text = text.decode()
    fields = text.split(":")
    if len(fields) != 6 or fields[0] != "00":
        raise ValueError(f"not an HDF5_00 record: {text!r}")
    _, uid, digest, dataset, index, shape = fields
    if not uid or any(c in uid for c in "/\\.") or len(digest) != 16:
        raise ValueError(f"invalid record: {text!r}")
    return Record(uid, digest, int(dataset), int(index), tuple(int(d) for d in shape.split()) if shape else ())


def _check(options, key, valid):
    value = options.get(key)
    if not any(value is v or (type(value) is type(v) and value == v) for v in valid):
        raise ValueError(f"invalid {key} {value!r} for complib {options.get('complib')!r}; valid: {list(valid)}")
    return value


def compression_kwargs(backend_options=None, mode="dense"):
    """create_dataset keyword arguments for Hangar compression options, in either mode.

    backend_options: Hangar's dict {complib, complevel, shuffle} (None: blosc:lz4hc, 5, 'byte';
    complib None/'none'/False: no compression)."""
    if mode not in ("dense", "sparse"):
        raise ValueError(f"mode must be 'dense' or 'sparse', got {mode!r}")
    options = dict(DEFAULT_OPTIONS if backend_options is None else backend_options)
    complib = options.get("complib")
    if complib in (None, False, "none"):
        filters, dense = [], {}
    elif complib in _BLOSC:
        level = _check(options, "complevel", range(10))
        shuffle = _check(options, "shuffle", (None, "none", "byte", "bit"))
        filters = [Blosc(complib.split(":")[1], level, shuffle)]
        dense = {"compression": 32001, "shuffle": False,
                 "compression_opts": (0, 0, 0, 0, level, _BLOSC_SHUFFLE[shuffle], _BLOSC_CODES[complib])}
    elif complib == "lzf":
        _check(options, "complevel", (False, None, "none"))
        shuffle = _check(options, "shuffle", (False, None, "none", True, "byte")) in (True, "byte")
        filters = [Shuffle(), LZF()] if shuffle else [LZF()]
        dense = {"compression": "lzf", "shuffle": shuffle}
    elif complib == "gzip":
        level = _check(options, "complevel", range(10))
        shuffle = _check(options, "shuffle", (False, None, "none", True, "byte")) in (True, "byte")
        filters = ([Shuffle()] if shuffle else []) + [Deflate(level)]
        dense = {"compression": "gzip", "compression_opts": level, "shuffle": shuffle}
    else:
        raise ValueError(f"unknown complib {complib!r}; valid: {list(_BLOSC) + ['lzf', 'gzip', None]}")
    if mode == "sparse":
        return dict(Sparse(values=filters or None))
    return dense


def _next_prime(n):
    def prime(k):
        return k >= 2 and all(k % d for d in range(2, int(k ** 0.5) + 1))
    while not prime(n):
        n += 1
    return n


def _uid():
    return "".join(random.SystemRandom().choice(string.ascii_letters + string.digits) for _ in range(6))


class StoreWriter:
    """Writes samples of one schema into store files; a new file when all collections are full.

    chunk_index: "fixed" (Hangar's) or "extensible"; None: fixed when dense, extensible when sparse."""

    def __init__(self, directory, schema_shape, dtype, mode="dense", backend_options=None,
                 collection_size=COLLECTION_SIZE, collection_count=COLLECTION_COUNT, chunk_index=None):
        self.directory = os.fspath(directory)
        self.schema_shape = tuple(int(d) for d in schema_shape)
        self.dtype = np.dtype(dtype)
        if self.dtype.name not in {np.dtype(d).name for d in DTYPES}:
            raise ValueError(f"unsupported dtype {self.dtype}; valid: {DTYPES}")
        self.mode = mode
        self.kwargs = compression_kwargs(backend_options, mode)
        self.chunk_index = chunk_index or ("fixed" if mode == "dense" else "extensible")
        if self.chunk_index not in CHUNK_INDEXES:
            raise ValueError(f"chunk_index must be one of {CHUNK_INDEXES}, got {chunk_index!r}")
        self.options = DEFAULT_OPTIONS if backend_options is None else backend_options
        self.collection_size, self.collection_count = collection_size, collection_count
        self.row_length = int(np.prod(self.schema_shape))
        self.files = []
        self._file = self._dset = None

    def _create_file(self):
        itemsize = self.dtype.itemsize
        chunk_len = max(1, min(CHUNK_MAX_NBYTES // itemsize, self.row_length))
        rdcc = min(max(self.row_length * itemsize * COLLECTION_SIZE, CHUNK_MAX_NBYTES), CHUNK_MAX_RDCC_NBYTES)
        nslots = _next_prime(-(-rdcc // (chunk_len * itemsize)) * 100)
        self.uid = _uid()
        path = os.path.join(self.directory, f"{self.uid}.hdf5")
        f = h5py.File(path, "w", libver="latest", rdcc_nbytes=rdcc, rdcc_w0=CHUNK_RDCC_W0, rdcc_nslots=nslots)
        self.files.append(path)
        shape = (self.collection_size, self.row_length)
        maxshape = (None if self.chunk_index == "extensible" else self.collection_size, self.row_length)
        for n in range(self.collection_count):
            f.create_dataset(str(n), shape=shape, maxshape=maxshape, dtype=self.dtype, chunks=(1, chunk_len), **self.kwargs)
        a = f.attrs
        a["backend"] = "00"
        a["storage_mode"] = self.mode
        a["schema_shape"] = np.array(self.schema_shape, np.int64)
        a["schema_dtype_num"] = np.int64(self.dtype.num)
        a["next_location"] = np.array([0, 0], np.int64)
        a["collection_max_size"] = np.int64(self.collection_size)
        a["collection_total"] = np.int64(self.collection_count)
        a["collections_remaining"] = np.int64(self.collection_count)
        a["rdcc_nbytes"] = np.int64(rdcc)
        a["rdcc_w0"] = CHUNK_RDCC_W0
        a["rdcc_nslots"] = np.int64(nslots)
        a["chunk_shape"] = np.int64(chunk_len)
        a["compression_opts"] = repr(self.options)
        f.flush()
        f.swmr_mode = True
        self._file, self._dataset_number, self._index = f, 0, 0
        self._dset = f["0"]

    def write(self, array):
        """Stores one sample (rank and dimensions within the schema shape); returns its record."""
        array = np.asarray(array)
        if array.dtype != self.dtype:
            raise ValueError(f"sample dtype {array.dtype} differs from the store's {self.dtype}")
        if array.ndim != len(self.schema_shape) or any(d > m for d, m in zip(array.shape, self.schema_shape)):
            raise ValueError(f"sample shape {array.shape} does not fit the schema shape {self.schema_shape}")
        digest = xxh64_hexdigest(array)
        if self._file is None:
            self._create_file()
        record = format_record(self.uid, digest, self._dataset_number, self._index, array.shape)
        flat = np.ravel(np.ascontiguousarray(array))
        if flat.size:
            self._dset.write_direct(flat, None, np.s_[self._index, 0:flat.size])
        self._dset.flush()
        self._index += 1
        if self._index == self.collection_size:
            self._index = 0
            self._dataset_number += 1
            if self._dataset_number == self.collection_count:
                self.close()
            else:
                self._dset = self._file[str(self._dataset_number)]
        return record

    def close(self):
        if self._file is None:
            return
        f, self._file, self._dset = self._file, None, None
        f.attrs.modify("next_location", np.array([self._dataset_number, self._index], np.int64))
        f.attrs.modify("collections_remaining", np.int64(self.collection_count - self._dataset_number))
        f.flush()
        f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class StoreReader:
    """Reads samples back by record (SWMR read), verifying every digest."""

    def __init__(self, directory, swmr=True, refresh=False):
        self.directory = os.fspath(directory)
        self.swmr, self.refresh = swmr, refresh
        self._files, self._datasets = {}, {}

    def _dataset(self, record):
        key = (record.uid, record.dataset)
        if key not in self._datasets:
            if record.uid not in self._files:
                path = os.path.join(self.directory, f"{record.uid}.hdf5")
                self._files[record.uid] = h5py.File(path, "r", swmr=self.swmr, libver="latest")
            self._datasets[key] = self._files[record.uid][str(record.dataset)]
        return self._datasets[key]

    def read(self, record):
        """The sample of a record (string or Record); raises DigestMismatch on corruption."""
        rec = parse_record(record) if isinstance(record, (str, bytes)) else record
        dset = self._dataset(rec)
        if self.refresh:
            dset.refresh()
        size = int(np.prod(rec.shape))
        if size > dset.shape[1] or rec.index >= dset.shape[0]:
            raise ValueError(f"record {format_record(*rec)} lies outside its collection {dset.shape}")
        out = np.empty((size,), dset.dtype)
        if size:
            dset.read_direct(out, np.s_[rec.index, 0:size], None)
        out = out.reshape(rec.shape)
        digest = xxh64_hexdigest(out)
        if digest != rec.digest:
            raise DigestMismatch(f"DATA CORRUPTION: checksum {digest} != recorded {format_record(*rec)}")
        return out

    def close(self):
        for f in self._files.values():
            f.close()
        self._files, self._datasets = {}, {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
