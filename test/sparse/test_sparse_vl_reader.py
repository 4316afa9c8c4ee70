"""h5sparse.read_vl_chunks, the connector-free Python reader of variable-length sparse datasets
(read_direct_chunk, decoded by libh5sparse): datasets written by h5py through the connector with
every section codec the format lists, every selection encoding, strings, sequences and
compounds at ranks 1-3, read by a process with neither the connector nor the plugin path and
compared with what h5py reads through the connector; BloscLZ frames libblosc wrote (runs,
overlapping and far matches, literals) read back; the stored chunks' checksums are libxxhash's
XXH3; corrupt chunks (a flipped bit, a malformed BloscLZ stream under valid checksums) raise
CorruptChunkError naming the chunk; a section codec the library lacks raises MissingCodecError."""
import ctypes
import ctypes.util
import functools
import os
import pickle
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5sparse
from h5sparse import Blosc, Deflate, LZF, Shuffle
from h5sparse._libhdf5 import filter_values

# The reading process: no connector, no plugin path (libh5sparse only, through ctypes).
BARE_ENV = {k: v for k, v in os.environ.items() if k not in ("HDF5_VOL_CONNECTOR", "HDF5_PLUGIN_PATH")}

PIPELINES = {
    "none": {},
    "deflate": dict(selection=Deflate(9), values=Deflate(1), lengths=Deflate(6), data=[Shuffle(), Deflate(4)]),
    "lzf": dict(selection=LZF(), values=[Shuffle(), LZF()], lengths=LZF(), data=LZF()),
    "blosc_lz4": dict(values=Blosc("lz4", 5, "bit"), lengths=Blosc("lz4", 5, "none"), data=Blosc("lz4", 5, "byte")),
    "blosc_bit": dict(data=Blosc("lz4hc", 9, "bit")),
    "blosc_zlib": dict(lengths=Blosc("zlib", 5, "byte"), data=Blosc("zlib", 5, "byte")),
    "blosc_blosclz": dict(values=Blosc("blosclz", 9, "byte"), lengths=Blosc("blosclz", 1, "none"),
                          data=Blosc("blosclz", 9, "none")),
    "blosc_zstd": dict(selection=Blosc("zstd", 1, "none"), lengths=Blosc("zstd", 5, "bit"), data=Blosc("zstd", 9, "byte")),
    "blosc_snappy": dict(values=Blosc("snappy", 5, "bit"), data=Blosc("snappy", 5, "none")),
}
COMPOUND = np.dtype([("id", "<i4"), ("name", h5py.string_dtype()), ("x", ">f8"),
                     ("values", h5py.vlen_dtype(np.int16)), ("tag", h5py.string_dtype("ascii"))])
WORDS = ["alpha", "beta", "", "z\u00e9\u00fc\u6f22\u5b57\U0001f642", 'q"u\\o\nt\t', "gamma delta"]


def random_value(kind, rng):
    if kind == "utf8":
        return WORDS[rng.integers(len(WORDS))] * int(rng.integers(1, 4))
    if kind == "ascii":
        return "abc xyz"[:int(rng.integers(0, 8))].encode()
    if kind == "int16":
        return rng.integers(-300, 300, int(rng.integers(0, 12))).astype(np.int16)
    if kind == "float64":
        return np.round(rng.random(int(rng.integers(1, 6))) * 100, 1)
    return (int(rng.integers(-9, 9)), WORDS[rng.integers(len(WORDS))], float(rng.integers(100)) / 4,
            rng.integers(0, 9, int(rng.integers(0, 4))).astype(np.int16), b"t%d" % rng.integers(10))


KINDS = {  # kind: dtype, shape, chunks
    "utf8": (h5py.string_dtype(), (3000,), (1024,)),
    "ascii": (h5py.string_dtype("ascii"), (40, 50), (16, 16)),
    "int16": (h5py.vlen_dtype(np.int16), (30, 40), (8, 32)),
    "float64": (h5py.vlen_dtype(np.float64), (6, 7, 8), (3, 4, 5)),
    "compound": (COMPOUND, (300,), (64,)),
}


def defined_mask(shape, pattern, rng):
    """Which elements a dataset defines: patterns that make the writer pick each encoding."""
    mask = np.zeros(shape, bool)
    if pattern == 0:
        mask[...] = rng.random(shape) < 0.03  # offsets / Rice offsets
    elif pattern == 1:
        mask[...] = rng.random(shape) < 0.5  # bitmap
    elif pattern == 2:
        flat = mask.reshape(-1)  # runs
        for start in rng.integers(0, flat.size - 20, 12):
            flat[start:start + int(rng.integers(3, 20))] = True
    elif pattern == 3:
        mask[tuple(slice(1, max(2, n - 2)) for n in shape)] = True  # one rectangle: blocks
    else:
        mask[...] = True  # all
    return mask


def write_corpus(path):
    """Every kind with every pipeline, written element by element box by box through the connector."""
    rng = np.random.default_rng(21)
    names = []
    with h5py.File(path, "w") as f:
        for k, (kind, (dtype, shape, chunks)) in enumerate(KINDS.items()):
            for p, (pipeline, filters) in enumerate(PIPELINES.items()):
                name = f"{kind}_{pipeline}"
                d = f.create_dataset(name, shape=shape, chunks=chunks, dtype=dtype, **h5sparse.Sparse(**filters))
                mask = defined_mask(shape, (k + p) % 5, rng)
                values = np.empty(shape, dtype)
                for index in map(tuple, np.argwhere(mask)):
                    values[index] = random_value(kind, rng)
                write_masked(d, values, mask)
                names.append(name)
        f.create_dataset("dense", shape=(5000,), chunks=(5000,), dtype=h5py.string_dtype(),
                         **h5sparse.VarChunks(data=Blosc("lz4", 5, "byte")))[...] = \
            np.array([WORDS[i % len(WORDS)] for i in range(5000)], dtype=object)
        names.append("dense")
    return names


def write_masked(d, values, mask):
    """Writes the masked elements: 1-D in one point selection, else one by one (h5py turns a
    run of equally long sequences into a 2-D array it cannot write)."""
    if mask.ndim == 1:
        d[np.flatnonzero(mask)] = values[mask]
        return
    for index in map(tuple, np.argwhere(mask)):
        d[index] = values[index]


READ_SCRIPT = r"""
import pickle, sys
import h5py, h5sparse
with h5py.File(sys.argv[1], "r") as f:
    assert f[sys.argv[3]].dtype == "V16"  # the opaque carrier: no connector here
    out = {}
    for name in sys.argv[3:]:
        try:
            e = h5sparse.read_vl_chunks(f[name])
            strings = h5sparse.read_vl_chunks(f[name], asstr=True).values if name.startswith(("utf8", "ascii")) else None
            out[name] = ("ok", e.coords, e.values, strings, h5sparse.vl_chunk_info(f[name]))
        except (h5sparse.CorruptChunkError, h5sparse.MissingCodecError) as x:
            out[name] = (type(x).__name__, str(x))
with open(sys.argv[2], "wb") as o:
    pickle.dump(out, o)
"""


def read_without_connector(path, names, tmp_path):
    out = tmp_path / "read.pickle"
    subprocess.run([sys.executable, "-c", READ_SCRIPT, str(path), str(out), *names], env=BARE_ENV, check=True)
    with open(out, "rb") as f:
        return pickle.load(f)


def same_value(got, want, dtype):
    """A reader value against h5py's for one element; NULL (None) reads as empty through h5py."""
    if dtype.names:
        return all(same_value(g, want[n], dtype[n]) for g, n in zip(got, dtype.names))
    if h5py.check_string_dtype(dtype):
        return (b"" if got is None else got) == want
    if h5py.check_vlen_dtype(dtype) is not None:
        return np.array_equal(np.zeros(0) if got is None else got, want)
    return got == want


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("vl_reader")
    path = tmp / "corpus.h5"
    names = write_corpus(path)
    return path, names, read_without_connector(path, names, tmp)


def test_reader_matches_h5py_through_the_connector(corpus):
    path, names, read = corpus
    with h5py.File(path, "r") as f:
        for name in names:
            assert read[name][0] == "ok", read[name]
            _, coords, values, strings, _infos = read[name]
            d = f[name]
            assert coords.tolist() == h5sparse.get_defined(d).tolist(), name
            data = d[...]
            for c, v in zip(coords, values):
                assert same_value(v, data[tuple(c)], d.dtype), (name, c, v, data[tuple(c)])
            if strings is not None:
                text = d.asstr()[...]
                assert [text[tuple(c)] for c in coords] == [("" if s is None else s) for s in strings], name
                assert all(isinstance(s, str) for s in strings)


def test_reader_with_the_connector_loaded_reads_the_same(corpus, tmp_path):
    """HDF5's chunk functions hand over whole structured chunks through the connector too."""
    path, names, read = corpus
    with h5py.File(path, "r") as f:
        for name in names[::4]:
            here = h5sparse.read_vl_chunks(f[name])
            assert here.coords.tolist() == read[name][1].tolist(), name
            assert [printable(v) for v in here.values] == [printable(v) for v in read[name][2]], name
    with h5py.File(tmp_path / "fixed.h5", "w") as f:
        f.create_dataset("fixed", shape=(4,), chunks=(4,), dtype="i4", **h5sparse.Sparse())[1] = 5
        with pytest.raises(ValueError, match="holds fixed-size values"):
            h5sparse.read_vl_chunks(f["fixed"])


def printable(value):
    return repr(value.tolist() if isinstance(value, np.ndarray) else
                tuple(printable(v) for v in value) if isinstance(value, tuple) else value)


def test_null_and_empty_stay_apart(corpus):
    path, _, read = corpus
    values = read["utf8_none"][2]
    assert b"" in values and None not in values  # "" written: defined, empty, not NULL
    with h5py.File(path, "r") as f:  # h5py writes an empty sequence as NULL, the connector keeps it so
        empty = [tuple(c) for c in h5sparse.get_defined(f["int16_none"]) if len(f["int16_none"][tuple(c)]) == 0]
    coords, values = read["int16_none"][1:3]
    got = {tuple(c): v for c, v in zip(coords.tolist(), values)}
    assert empty and all(got[c] is None for c in empty)


def test_section_sizes_come_from_the_headers(corpus):
    path, names, read = corpus
    with h5py.File(path, "r") as f:
        for name in names:
            infos = read[name][4]
            assert len(infos) == f[name].id.get_num_chunks()
            for info in infos:
                assert len(info.section_size) == 4 and info.size > sum(info.section_size)
                chunk = f[name].id.get_chunk_info_by_coord(info.offset)
                assert (chunk.byte_offset, chunk.size) == (info.addr, info.size)


def blosclz_samples():
    """What BloscLZ meets: runs and short periods (overlapping copies), long matches, a repeat
    13,000 bytes back (past the 13-bit distance field), literals, low entropy."""
    rng = np.random.default_rng(5)
    far = rng.integers(128, 256, 4000, dtype=np.uint8).tobytes()  # its only earlier copy is 13,000 back
    return [b"a" * 5000, b"abc" * 3000, b"ab" * 4500 + far + b"cd" * 4500 + far, bytes(range(256)) * 40,
            rng.integers(0, 4, 30000, dtype=np.uint8).tobytes(), b"z" * 70000]


def write_blosclz(path):
    """Per clevel a dataset of one uint8 sequence per chunk and sample: each chunk's data
    section is one BloscLZ frame of libblosc's."""
    samples = blosclz_samples()
    with h5py.File(path, "w") as f:
        for clevel in (1, 5, 9):
            d = f.create_dataset(f"blosclz{clevel}", shape=(len(samples),), chunks=(1,),
                                 dtype=h5py.vlen_dtype(np.uint8),
                                 **h5sparse.Sparse(lengths=Blosc("blosclz", clevel, "none"),
                                                   data=Blosc("blosclz", clevel, "none")))
            for i, sample in enumerate(samples):
                d[i] = np.frombuffer(sample, np.uint8)
    return samples


def test_blosclz_frames_of_libblosc_read_back(tmp_path):
    path = tmp_path / "blosclz.h5"
    samples = write_blosclz(path)
    names = [f"blosclz{clevel}" for clevel in (1, 5, 9)]
    read = read_without_connector(path, names, tmp_path)
    with h5py.File(path, "r") as f:
        for name in names:
            assert read[name][0] == "ok", read[name]
            assert [bytes(v) for v in read[name][2]] == samples, name
            infos = read[name][4]  # the data sections are compressed frames (mask 0), not copies
            assert sum(1 for i in infos if i.filter_mask[3] == 0 and i.section_size[3] < i.section_orig_size[3]) >= 4
            assert len(infos) == f[name].id.get_num_chunks() == len(samples)


# --- chunk headers (docs/FORMAT.md, version 3), for the checksum tests below --------------

@functools.lru_cache(None)
def libxxhash():
    lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib


def xxh3_low32(data):
    """The low 32 bits of XXH3-64 of `data`, by the system's libxxhash."""
    return libxxhash().XXH3_64bits(bytes(data), len(data)) & 0xFFFFFFFF


def header_fields(raw):
    """(sections, header checksum position) of a version-3 chunk: per section (stored bytes'
    start, stored size, position of their checksum)."""
    def varint(pos):
        value = shift = 0
        while True:
            value |= (raw[pos] & 0x7F) << shift
            shift, pos = shift + 7, pos + 1
            if not raw[pos - 1] & 0x80:
                return value, pos
    assert raw[0] == 3
    flags, pos, fields = raw[1], 2, []
    for s in range(4):
        size, pos = varint(pos)
        if flags >> s & 1:
            pos = varint(varint(pos)[1])[1]  # mask, unfiltered size
        fields.append([size, pos])
        pos += 8 if flags >> s & 1 else 4
    if flags & 0x10:
        pos = varint(pos)[1]
    start, sections = pos + 4, []
    for size, checksum_at in fields:
        sections.append((start, size, checksum_at))
        start += size
    return sections, pos


def test_stored_checksums_are_libxxhash_xxh3(corpus):
    """Every header and stored section of the corpus carries the low 32 bits of libxxhash's XXH3."""
    path, names, _ = corpus
    checked = set()
    with h5py.File(path, "r") as f:
        for name in names:
            for i in range(f[name].id.get_num_chunks()):
                raw = f[name].id.read_direct_chunk(f[name].id.get_chunk_info(i).chunk_offset)[1]
                sections, header_end = header_fields(raw)
                assert xxh3_low32(raw[:header_end]) == int.from_bytes(raw[header_end:header_end + 4], "little")
                for start, size, at in sections:
                    assert xxh3_low32(raw[start:start + size]) == int.from_bytes(raw[at:at + 4], "little")
                    checked.add(size)
    classes = {next(k for k, top in enumerate((0, 3, 8, 16, 128, 240)) if size <= top) if size <= 240 else 6
               for size in checked}
    assert classes == set(range(7)), sorted(checked)  # every length class of XXH3's (0, 1-3, ... 129-240, more)


def test_malformed_blosclz_stream_under_valid_checksums_is_corrupt(tmp_path):
    """A data frame whose BloscLZ stream copies from before its output's start (a match 6 bytes
    back after one byte), checksums made right: the decoder refuses it, naming the chunk."""
    path = tmp_path / "blosclz.h5"
    write_blosclz(path)
    with h5py.File(path, "r") as f:
        raw = bytearray(f["blosclz5"].id.read_direct_chunk((0,))[1])  # the "run" sample
        sections, header_end = header_fields(raw)
        start, size, at = sections[3]
        frame = raw[start:start + size]
        assert frame[2] & 0x02 == 0  # compressed, not copied
        (stream_size,) = np.frombuffer(frame, "<u4", 1, 20)
        frame[24:24 + stream_size] = (b"\x00a\x20\x05" + bytes(stream_size))[:stream_size]
        raw[start:start + size] = frame
        raw[at:at + 4] = xxh3_low32(frame).to_bytes(4, "little")
        raw[header_end:header_end + 4] = xxh3_low32(raw[:header_end]).to_bytes(4, "little")
    rewrite_chunk(path, "blosclz5", (0,), bytes(raw), tmp_path)
    kind, text = read_without_connector(path, ["blosclz5"], tmp_path)["blosclz5"]
    assert kind == "CorruptChunkError"
    assert text.startswith("dataset '/blosclz5', chunk at (0,): section 3 (data): blosc: frame payload is corrupt"), text


def rewrite_chunk(path, name, offset, raw, tmp_path):
    """Stores `raw` as the chunk at `offset` with HDF5's write_direct_chunk, without the connector."""
    script = "import sys, h5py\nwith h5py.File(sys.argv[1], 'r+') as f:\n" \
             "    f[sys.argv[2]].id.write_direct_chunk(tuple(int(v) for v in sys.argv[4:]), open(sys.argv[3], 'rb').read())\n"
    chunk = tmp_path / "chunk.bin"
    chunk.write_bytes(raw)
    subprocess.run([sys.executable, "-c", script, str(path), name, str(chunk), *map(str, offset)], env=BARE_ENV,
                   check=True)


def corrupt(path, name, where):
    """Flips one bit of the first stored chunk of `name`: `where` bytes from its start (negative:
    from its end)."""
    with h5py.File(path, "r") as f:
        info = f[name].id.get_chunk_info(0)
    at = info.byte_offset + (where if where >= 0 else info.size + where)
    with open(path, "r+b") as f:
        f.seek(at)
        byte = f.read(1)[0]
        f.seek(at)
        f.write(bytes([byte ^ 0x10]))
    return info.chunk_offset


@pytest.mark.parametrize("where, message", [(-2, "section 3 (data) stored-bytes checksum mismatch"),
                                            (4, "structured chunk header checksum mismatch")])
def test_corrupt_chunks_raise_naming_the_chunk(tmp_path, where, message):
    path = tmp_path / "corrupt.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("s", shape=(100,), chunks=(50,), dtype=h5py.string_dtype(),
                         **h5sparse.Sparse())[...] = np.array(["value %d" % i for i in range(100)], dtype=object)
    origin = corrupt(path, "s", where)
    kind, text = read_without_connector(path, ["s"], tmp_path)["s"]
    assert kind == "CorruptChunkError"
    assert text == f"dataset '/s', chunk at {tuple(origin)}: {message}", text


def test_a_codec_the_library_lacks_raises_missing_codec_error(tmp_path):
    """Parameters naming a section filter libh5sparse has no codec for (307, bzip2), as a writer
    without the plugin stores them: MissingCodecError naming the dataset, from either call."""
    path = tmp_path / "missing.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("s", shape=(10,), chunks=(5,), dtype=h5py.string_dtype(),
                             **h5sparse.Sparse(data=Blosc("zstd", 7, "byte")))
        cd = list(filter_values(d.id.get_create_plist(), h5sparse.FILTER_ID))
    cd[cd.index(32001)] = 307
    script = ("import sys, h5py\nwith h5py.File(sys.argv[1], 'w') as f:\n"
              "    f.create_dataset('m', shape=(10,), chunks=(5,), dtype='V16', compression=45100,"
              " compression_opts=tuple(int(v) for v in sys.argv[2:]), allow_unknown_filter=True)\n")
    subprocess.run([sys.executable, "-c", script, str(path), *map(str, cd)], env=BARE_ENV, check=True)
    kind, text = read_without_connector(path, ["m"], tmp_path)["m"]
    assert kind == "MissingCodecError"
    assert text.startswith("dataset '/m': structured-chunk parameters: section filter 307 is not supported"), text
