"""Variable-length sparse datasets (issue 21) through unmodified h5py with the connector:
strings (ASCII, UTF-8 with multibyte characters) and sequences of several base types at ranks
1-3, random writes, overwrites with longer and shorter values and erases against a Python
model, reopened; what h5py can tell apart of NULL and empty; and without the connector: reads
refused by the filter, h5dump's opaque view, h5sparse-tool's values, and h5repack, h5copy and h5py's copy keeping the
values (read back through the connector)."""
import os
import subprocess
import sys
import zlib

import h5py
import numpy as np
import pytest

import h5sparse

PLAIN_ENV = {k: v for k, v in os.environ.items() if k != "HDF5_VOL_CONNECTOR"}
UTF8_CHARS = "ab z\u00e9\u00fc\u6f22\u5b57\U0001f642"


def random_utf8(rng):
    return "".join(rng.choice(list(UTF8_CHARS), size=int(rng.integers(0, 300 if rng.random() < 0.1 else 12))))


def random_ascii(rng):
    return "".join(rng.choice(list("abcxyz _-"), size=int(rng.integers(0, 40))))


def random_sequence(dtype):
    def make(rng):
        n = int(rng.integers(0, 100 if rng.random() < 0.1 else 8))
        return (rng.random(n) * 1000 - 500).astype(dtype)
    return make


KINDS = {
    "utf8": (h5py.string_dtype(), random_utf8),
    "ascii": (h5py.string_dtype("ascii"), random_ascii),
    "int32": (h5py.vlen_dtype(np.int32), random_sequence(np.int32)),
    "float64": (h5py.vlen_dtype(np.float64), random_sequence(np.float64)),
    "int16": (h5py.vlen_dtype(np.int16), random_sequence(np.int16)),
}
SHAPES = [((50,), (8,)), ((9, 11), (4, 3)), ((5, 6, 7), (2, 4, 3))]


def is_string(kind):
    return kind in ("utf8", "ascii")


def empty_value(kind):
    return "" if is_string(kind) else np.zeros(0, KINDS[kind][0].metadata["vlen"])


def read_all(dset, kind):
    """The dataset as h5py reads it: str (decoded) for strings, arrays for sequences."""
    return dset.asstr()[...] if is_string(kind) else dset[...]


def assert_equal(read, model, kind):
    assert read.shape == model.shape
    for index in np.ndindex(model.shape):
        got, want = read[index], model[index]
        if is_string(kind):
            assert got == want, (index, got, want)
        else:
            assert got.dtype == want.dtype and np.array_equal(got, want), (index, got, want)


def random_box(rng, shape):
    start = [int(rng.integers(0, n)) for n in shape]
    stop = [int(rng.integers(s + 1, min(n, s + 6) + 1)) for s, n in zip(start, shape)]
    return tuple(slice(a, b) for a, b in zip(start, stop))


def empty_model(kind, shape):
    model = np.empty(shape, dtype=object)
    for index in np.ndindex(shape):
        model[index] = empty_value(kind)
    return model


def expect_model(dset, kind, model, defined):
    assert_equal(read_all(dset, kind), model, kind)
    assert np.array_equal(h5sparse.get_defined(dset), np.argwhere(defined).astype(np.uint64))


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("shape,chunks", SHAPES)
def test_random_writes_overwrites_and_erases_match_a_model(tmp_path, kind, shape, chunks):
    rng = np.random.default_rng(zlib.crc32(repr((kind, shape)).encode()))  # the same in every process
    dtype, make = KINDS[kind]
    model, defined = empty_model(kind, shape), np.zeros(shape, bool)
    path = tmp_path / "vl.h5"
    with h5py.File(path, "w") as f:
        dset = f.create_dataset("x", shape=shape, chunks=chunks, dtype=dtype, **h5sparse.Sparse())
        assert dset.dtype == dtype
        for _ in range(25):
            box = random_box(rng, shape)
            if rng.random() < 0.25:
                h5sparse.erase(dset, box)
                defined[box] = False
                for index in np.ndindex(model[box].shape):
                    model[box][index] = empty_value(kind)
                continue
            values = np.empty(model[box].shape, dtype=dtype)
            for index in np.ndindex(values.shape):
                values[index] = make(rng)
            if is_string(kind):
                dset[box] = values
            else:  # dset[box] = values would take equal-length sequences for one more dimension
                dset.write_direct(values, dest_sel=box)
            model[box], defined[box] = values, True
            expect_model(dset, kind, model, defined)
    with h5py.File(path, "r") as f:
        expect_model(f["x"], kind, model, defined)
        assert f["x"].dtype == dtype


COMPOUND = np.dtype([("id", "<i4"), ("name", h5py.string_dtype()), ("x", "<f8"),
                     ("values", h5py.vlen_dtype(np.float32)), ("tag", "S3")])


def random_record(rng):
    return (int(rng.integers(-1000, 1000)), random_utf8(rng), float(rng.random()),
            random_sequence(np.float32)(rng), b"abc"[:int(rng.integers(0, 4))])


def assert_records_equal(read, model):
    for index in np.ndindex(model.shape):
        got, want = read[index], model[index]
        assert got["id"] == want["id"] and got["x"] == want["x"] and got["tag"] == want["tag"], index
        assert got["name"].decode() == want["name"], index
        assert np.array_equal(got["values"], want["values"]), index


def test_compound_with_variable_length_members_matches_a_model(tmp_path):
    rng = np.random.default_rng(8)
    shape, path = (7, 9), tmp_path / "compound.h5"
    model = np.zeros(shape, COMPOUND)
    for index in np.ndindex(shape):
        model[index] = (0, "", 0.0, np.zeros(0, np.float32), b"")
    with h5py.File(path, "w") as f:
        dset = f.create_dataset("c", shape=shape, chunks=(3, 4), dtype=COMPOUND, **h5sparse.Sparse())
        stock = f.create_dataset("stock", shape=shape, chunks=(3, 4), dtype=COMPOUND)
        assert dset.dtype == stock.dtype  # what h5py makes of the type, as for stock VL data
        assert h5py.check_string_dtype(dset.dtype["name"]).encoding == "utf-8"
        assert h5py.check_vlen_dtype(dset.dtype["values"]) == np.float32
        for _ in range(20):
            box = random_box(rng, shape)
            values = np.zeros(model[box].shape, COMPOUND)
            for index in np.ndindex(values.shape):
                values[index] = random_record(rng)
            dset[box] = values
            model[box] = values
            assert_records_equal(dset[...], model)
    with h5py.File(path, "r") as f:
        assert_records_equal(f["c"][...], model)
    header = plain(["h5dump", "-H", str(path)]).stdout
    assert 'OPAQUE_TAG "h5sparse-vl: compound of 5 members, 2 of variable length"' in header, header


def test_nested_variable_length_types_are_refused(tmp_path):
    with h5py.File(tmp_path / "nested.h5", "w") as f:
        for dtype in (h5py.vlen_dtype(h5py.string_dtype()),
                      np.dtype([("a", "<i4"), ("b", np.dtype([("s", h5py.string_dtype())]))])):
            with pytest.raises((OSError, ValueError), match="nested|not supported|variable-length members"):
                f.create_dataset("x", shape=(4,), chunks=(4,), dtype=dtype, **h5sparse.Sparse())
        assert "x" not in f


def test_null_and_empty_as_h5py_sees_them(tmp_path):
    """h5py reads NULL and empty strings alike (b''): what tells them apart through h5py is
    get-defined. An element written '' is defined; one never written is not."""
    with h5py.File(tmp_path / "e.h5", "w") as f:
        dset = f.create_dataset("s", shape=(4,), chunks=(4,), dtype=h5py.string_dtype(), **h5sparse.Sparse())
        dset[1] = ""
        dset[2] = "x"
        assert list(dset[...]) == [b"", b"", b"x", b""]
        assert dset.fillvalue == b""  # as h5py gives for stock VL strings
        assert h5sparse.get_defined(dset).ravel().tolist() == [1, 2]
        h5sparse.erase(dset, [1, 3])  # a point selection
        assert h5sparse.get_defined(dset).ravel().tolist() == [2]
        only_empty = f.create_dataset("e", shape=(4,), chunks=(4,), dtype=h5py.string_dtype(), **h5sparse.Sparse())
        only_empty[0] = ""  # a chunk whose strings hold no byte at all
        assert list(only_empty[...]) == [b""] * 4 and h5sparse.get_defined(only_empty).ravel().tolist() == [0]


def test_numpy_string_dtype_where_h5py_supports_it(tmp_path):
    with h5py.File(tmp_path / "sd.h5", "w") as f:
        dset = f.create_dataset("s", shape=(4,), chunks=(4,), dtype=h5py.string_dtype(), **h5sparse.Sparse())
        dset[0:2] = np.array(["ab", "c\u00e9"])
        dset[2] = b"raw"
        string_dtype = getattr(np.dtypes, "StringDType", None)
        try:
            read = dset.astype(string_dtype())[...] if string_dtype else None
        except TypeError:  # h5py before 3.14: no StringDType conversion
            read = None
        if read is None:
            pytest.skip("this h5py reads no NumPy StringDType")
        assert read.dtype == string_dtype() and read.tolist() == ["ab", "c\u00e9", "raw", ""]


def test_dense_variant_stores_every_written_element_and_compresses(tmp_path):
    words = np.array(["word%d" % (i % 97) for i in range(20000)], dtype=object)
    path = tmp_path / "dense.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("w", data=words, chunks=(4096,), dtype=h5py.string_dtype(), **h5sparse.VarChunks())
        f.create_dataset("stock", data=words, chunks=(4096,), dtype=h5py.string_dtype(), compression="gzip")
    with h5py.File(path, "r") as f:
        assert list(f["w"].asstr()[...]) == list(words)
        assert f["w"].id.get_storage_size() * 4 < f["stock"].id.get_storage_size()


def data_pipeline(dset):
    """Section 3's pipeline as stored: [(filter id, flags, cd_values)], by the client library's
    h5sparse_pget_section_nfilters and h5sparse_pget_section_filter."""
    import ctypes
    lib, uint, size = h5sparse.library(), ctypes.c_uint, ctypes.c_size_t
    lib.h5sparse_pget_section_nfilters.argtypes = [ctypes.c_int64, uint]
    lib.h5sparse_pget_section_filter.argtypes = [ctypes.c_int64, uint, uint, ctypes.POINTER(uint),
                                                 ctypes.POINTER(size), ctypes.POINTER(uint)]
    out = []
    for i in range(lib.h5sparse_pget_section_nfilters(dset.id.id, 3)):
        flags, count, cd = uint(), size(16), (uint * 16)()
        fid = lib.h5sparse_pget_section_filter(dset.id.id, 3, i, ctypes.byref(flags), ctypes.byref(count), cd)
        out.append((fid, flags.value, list(cd[:count.value])))
    return out


def test_dense_variant_picks_the_data_codec_by_datatype(tmp_path):
    """VarChunks() leaves section 3 to the connector: Blosc zstd level 1 for strings, 3 when a
    member is a sequence; a data pipeline given stays as given."""
    blosc = lambda level: [(32001, 1, [0, 0, 0, 0, level, 1, 5])]  # noqa: E731
    compound = np.dtype([("id", np.int32), ("name", h5py.string_dtype()), ("v", h5py.vlen_dtype(np.int16))])
    cases = {"s": (h5py.string_dtype(), {}, blosc(1)), "b": (h5py.string_dtype("ascii"), {}, blosc(1)),
             "i": (h5py.vlen_dtype(np.int32), {}, blosc(3)), "u8": (h5py.vlen_dtype(np.uint8), {}, blosc(3)),
             "c": (compound, {}, blosc(3)),
             "given": (h5py.vlen_dtype(np.int32), {"data": h5sparse.LZF()}, [(32000, 1, [])])}
    path = tmp_path / "by_type.h5"
    with h5py.File(path, "w") as f:
        for name, (dtype, kw, _) in cases.items():
            f.create_dataset(name, shape=(10,), chunks=(4,), dtype=dtype, **h5sparse.VarChunks(**kw))
        f["i"][3] = np.arange(50, dtype=np.int32)
    with h5py.File(path, "r") as f:
        for name, (_, _, expected) in cases.items():
            assert data_pipeline(f[name]) == expected, name
        assert f["i"][3].tolist() == list(range(50))
    with pytest.raises(ValueError, match="variable-length"):  # no section 3 in a fixed-size dataset
        with h5py.File(tmp_path / "fixed.h5", "w") as f:
            f.create_dataset("x", shape=(10,), chunks=(4,), dtype="f4", **h5sparse.VarChunks())


def write_corpus(path):
    """A string and a sequence dataset; returns their values as h5py reads them."""
    rng = np.random.default_rng(3)
    with h5py.File(path, "w") as f:
        s = f.create_dataset("s", shape=(30,), chunks=(8,), dtype=h5py.string_dtype(), **h5sparse.Sparse())
        s[2:20] = np.array([random_utf8(rng) for _ in range(18)], dtype=object)
        v = f.create_dataset("v", shape=(6, 5), chunks=(4, 4), dtype=h5py.vlen_dtype(np.int32),
                             **h5sparse.VarChunks())
        values = np.empty((6, 5), dtype=h5py.vlen_dtype(np.int32))
        for index in np.ndindex(values.shape):
            values[index] = random_sequence(np.int32)(rng)
        v.write_direct(values)
        return {"s": s[...], "v": v[...]}


def assert_corpus(path, expected):
    with h5py.File(path, "r") as f:
        for name, values in expected.items():
            read = f[name][...]
            assert all(np.array_equal(a, b) for a, b in zip(read.ravel(), values.ravel())), name


def plain(argv, check=True):
    return subprocess.run(argv, env=PLAIN_ENV, capture_output=True, text=True, check=check)


def test_without_connector_reads_are_refused_and_h5dump_shows_an_opaque_dataset(tmp_path):
    path = tmp_path / "c.h5"
    write_corpus(path)
    # h5py has no conversion from the opaque type to its own V16: read in the dataset's type.
    script = ("import h5py, sys, numpy as np\n"
              "f = h5py.File(sys.argv[1], 'r')\n"
              "print(f['s'].dtype, f['v'].dtype)\n"
              "d = f['s']\n"
              "d.id.read(h5py.h5s.ALL, h5py.h5s.ALL, np.empty(d.shape, 'V16'), mtype=d.id.get_type())\n")
    out = plain([sys.executable, "-c", script, str(path)], check=False)
    assert out.returncode != 0 and out.stdout.split() == ["|V16", "|V16"], out
    # HDF5 1.14 clears the error stack inside filters; 2.x keeps the filter's own record.
    ours = "a variable-length sparse dataset is read through the h5sparse VOL connector"
    expected = ours if h5py.version.hdf5_version_tuple >= (2,) else "filter returned failure during read"
    assert expected in out.stderr, out.stderr
    dump = plain(["h5dump", "--enable-error-stack", "-d", "/s", str(path)], check=False)
    assert dump.returncode != 0
    # h5sparse-tool reads the chunks itself (test/tools/test_tool_vl.py).
    tool = plain([os.path.join(os.environ["H5SPARSE_BIN_DIR"], "h5sparse-tool"), "show", str(path)])
    assert "DEFINED_ELEMENTS 18 OF 30" in tool.stdout and "DEFINED_ELEMENTS 30 OF 30" in tool.stdout, tool.stdout
    header = plain(["h5dump", "-H", "-p", str(path)]).stdout
    assert 'OPAQUE_TAG "h5sparse-vl: variable-length string, UTF-8"' in header, header
    assert 'OPAQUE_TAG "h5sparse-vl: variable-length sequence of 4-byte elements"' in header
    assert "FILTER_ID 45100" in header


def test_copies_without_connector_keep_the_values(tmp_path):
    src = tmp_path / "src.h5"
    expected = write_corpus(src)
    plain(["h5repack", str(src), str(tmp_path / "repacked.h5")])
    assert_corpus(tmp_path / "repacked.h5", expected)
    for name in expected:
        plain(["h5copy", "-i", str(src), "-o", str(tmp_path / "copied.h5"), "-s", name, "-d", name])
    assert_corpus(tmp_path / "copied.h5", expected)
    script = ("import h5py, sys\n"
              "with h5py.File(sys.argv[1], 'r') as a, h5py.File(sys.argv[2], 'w') as b:\n"
              "    a.copy('s', b)\n"
              "    a.copy('v', b)\n")
    plain([sys.executable, "-c", script, str(src), str(tmp_path / "h5py_copy.h5")])
    assert_corpus(tmp_path / "h5py_copy.h5", expected)
    with h5py.File(src, "r") as a, h5py.File(tmp_path / "connector_copy.h5", "w") as b:  # with the connector
        a.copy("s", b)
        a.copy("v", b)
    assert_corpus(tmp_path / "connector_copy.h5", expected)
    # h5repack with a filter option reads through the filter: refused, no wrong value written.
    out = plain(["h5repack", "-f", "s:GZIP=1", str(src), str(tmp_path / "refused.h5")], check=False)
    assert out.returncode != 0


def test_a_chunk_beyond_what_hdf5_1_14_records_for_its_chunk_size(tmp_path):
    """HDF5 1.14 records a chunk's stored size in bytes sized by the nominal chunk size (here
    4 x 16 bytes: two bytes, at most 65535): a larger chunk is refused and nothing is stored.
    HDF5 2.x stores it."""
    with h5py.File(tmp_path / "big.h5", "w") as f:
        dset = f.create_dataset("s", shape=(4,), maxshape=(None,), chunks=(4,), dtype=h5py.string_dtype(),
                                **h5sparse.Sparse())
        dset[1] = "kept"
        big = "x" * 100000
        if h5py.version.hdf5_version_tuple >= (2,):
            dset[0] = big
            assert list(dset.asstr()[...]) == [big, "kept", "", ""]
            return
        with pytest.raises(OSError, match="chunk size can't be encoded"):
            dset[0] = big
        assert list(dset.asstr()[...]) == ["", "kept", "", ""]
        assert h5sparse.get_defined(dset).ravel().tolist() == [1]


def stored_chunk(path, name):
    script = ("import h5py, sys\n"
              "with h5py.File(sys.argv[1], 'r') as f:\n"
              "    print(f[sys.argv[2]].id.read_direct_chunk((0,))[1].hex())\n")
    return plain([sys.executable, "-c", script, str(path), name]).stdout


def test_corrupt_chunks_are_reported_and_never_overwritten(tmp_path):
    path = tmp_path / "corrupt.h5"
    with h5py.File(path, "w") as f:
        s = f.create_dataset("s", shape=(8,), chunks=(8,), dtype=h5py.string_dtype(), **h5sparse.Sparse())
        s[...] = np.array(["v%d" % i for i in range(8)], dtype=object)
    script = ("import h5py, sys\n"
              "with h5py.File(sys.argv[1], 'r+') as f:\n"
              "    mask, raw = f['s'].id.read_direct_chunk((0,))\n"
              "    raw = bytearray(raw); raw[-3] ^= 0x20\n"
              "    f['s'].id.write_direct_chunk((0,), bytes(raw), mask)\n")
    plain([sys.executable, "-c", script, str(path)])
    before = stored_chunk(path, "s")
    with h5py.File(path, "r+") as f:
        with pytest.raises(OSError, match="corrupt|checksum"):
            f["s"][...]
        with pytest.raises(OSError, match="corrupt|checksum"):
            f["s"][3] = "new"
    assert stored_chunk(path, "s") == before
