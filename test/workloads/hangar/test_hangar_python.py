"""python/h5sparse/hangar.py with unmodified h5py: Hangar's digest, round trips in both storage
modes, files interchangeable with the C++ example in both directions, sparse rows defining only
the sample, and Hangar's option vocabulary enforced.

The connector is on in this process (sparse writes through h5py need it): HDF5 reads
HDF5_VOL_CONNECTOR once, when h5py loads it, so it is set before h5py is imported."""
import os

os.environ["HDF5_VOL_CONNECTOR"] = "h5sparse under_vol=0;under_info={}"

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import h5sparse  # noqa: E402
from h5sparse import hangar  # noqa: E402
from hangar_support import records_of, run_store  # noqa: E402

MODES = ["dense", "sparse"]
DTYPES = ["bool", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "f4", "f8"]


def test_xxh64_hexdigest_is_hangars():
    # Known answers of XXH64 (seed 0), which xxhash.xxh64_hexdigest prints big-endian.
    assert hangar.xxh64_hexdigest(np.zeros(0, "u1")) == "ef46db3751d8e999"
    assert hangar.xxh64_hexdigest(np.frombuffer(b"a", "u1")) == "d24ec4f1a98c6e5b"
    assert hangar.xxh64_hexdigest(np.frombuffer(b"abc", "u1")) == "44bc2cf5ad770999"
    a = np.arange(12, dtype="<i4").reshape(3, 4)
    assert hangar.xxh64_hexdigest(a) == hangar.xxh64_hexdigest(np.frombuffer(a.tobytes(), "u1"))
    assert hangar.xxh64_hexdigest(a.T) == hangar.xxh64_hexdigest(np.ascontiguousarray(a.T))


def test_record_strings_follow_the_seed_examples():
    assert hangar.format_record("rlUK3C", "8067007c0f05c359", 16, 105, (10, 10)) == "00:rlUK3C:8067007c0f05c359:16:105:10 10"
    r = hangar.parse_record("00:rlUK3C:b89f873d3d153a9c:8:199:20 2 3")
    assert r == ("rlUK3C", "b89f873d3d153a9c", 8, 199, (20, 2, 3))
    for bad in ("01:rlUK3C:b89f873d3d153a9c:8:199:20", "00:rlUK3C:b89f:8:199:20", "00:../x:b89f873d3d153a9c:8:1:2"):
        with pytest.raises(ValueError):
            hangar.parse_record(bad)


def random_samples(rng, n):
    for _ in range(n):
        dtype = DTYPES[rng.integers(len(DTYPES))]
        shape = tuple(int(x) for x in rng.integers(1, [65, 65, 4]))
        if dtype == "bool":
            yield rng.integers(0, 2, shape).astype(bool)
        elif dtype[0] == "f":
            yield rng.standard_normal(shape).astype(dtype)
        else:
            yield rng.integers(0, 100, shape).astype(dtype)


@pytest.mark.parametrize("mode", MODES)
def test_python_store_round_trip_and_cpp_reads_it(tmp_path, mode):
    rng = np.random.default_rng(11)
    writers, written = {}, []
    for sample in random_samples(rng, 1500):
        w = writers.setdefault(sample.dtype, hangar.StoreWriter(tmp_path, (64, 64, 3), sample.dtype, mode=mode))
        written.append((w.write(sample), sample))
    for w in writers.values():
        w.close()
    with hangar.StoreReader(tmp_path) as reader:
        for record, sample in written:
            got = reader.read(record)
            assert got.dtype == sample.dtype and np.array_equal(got, sample)
    (tmp_path / "records.txt").write_text("".join(r + "\n" for r, _ in written))
    for connector in (True, False):
        r, _ = run_store("read", tmp_path, "--records", tmp_path / "records.txt", connector=connector)
        assert r["samples"] == 1500


@pytest.mark.parametrize("mode", MODES)
def test_cpp_store_is_read_by_python(tmp_path, mode):
    rec = tmp_path / "records.txt"
    run_store("write", tmp_path, "--mode", mode, "--samples", 800, "--dtypes", "all", "--dist", "skewed",
              "--compression", "complib=blosc:zstd,complevel=3,shuffle=bit", "--records", rec)
    kinds = set()
    with hangar.StoreReader(tmp_path) as reader:
        for record in records_of(rec):
            sample = reader.read(record)  # digest verified
            kinds.add(sample.dtype.name)
    assert kinds == {np.dtype(d).name for d in DTYPES}


def test_sparse_rows_define_only_the_sample(tmp_path):
    with hangar.StoreWriter(tmp_path, (64, 64, 3), "u2", mode="sparse") as w:
        records = [w.write(np.full(shape, 7, "u2")) for shape in [(1, 1, 1), (64, 64, 3), (10, 20, 3), (5, 64, 1)]]
        path = w.files[0]
    with h5py.File(path, "r") as f:
        d = f["0"]
        assert d.id.get_create_plist().get_filter(0)[0] == h5sparse.FILTER_ID
        for record in records:
            r = hangar.parse_record(record)
            defined = h5sparse.get_defined(d, np.s_[r.index, :])
            assert len(defined) == np.prod(r.shape)
            assert defined[:, 1].max() == np.prod(r.shape) - 1
        assert h5sparse.get_defined(d, np.s_[len(records):, :]).shape[0] == 0


@pytest.mark.parametrize("mode,index,maxrows", [("dense", None, 250), ("sparse", None, None),
                                                 ("sparse", "fixed", 250), ("dense", "extensible", None)])
def test_chunk_index_follows_the_mode_unless_chosen(tmp_path, mode, index, maxrows):
    with hangar.StoreWriter(tmp_path, (8, 8), "i2", mode=mode, chunk_index=index, collection_count=3) as w:
        samples = [np.full((k, 8), k, "i2") for k in range(1, 9)]
        records = [w.write(s) for s in samples]
        path = w.files[0]
    with h5py.File(path, "r") as f:
        assert [f[n].shape for n in "012"] == [(250, 64)] * 3               # Hangar's extent either way
        assert [f[n].maxshape for n in "012"] == [(maxrows, 64)] * 3
    with hangar.StoreReader(tmp_path) as reader:
        for record, sample in zip(records, samples):
            assert np.array_equal(reader.read(record), sample)
    (tmp_path / "records.txt").write_text("".join(r + "\n" for r in records))
    r, _ = run_store("read", tmp_path, "--records", tmp_path / "records.txt", connector=False)
    assert r["samples"] == 8


@pytest.mark.parametrize("options", [
    None,
    {"complib": "blosc:zstd", "complevel": 9, "shuffle": "bit"},
    {"complib": "blosc:blosclz", "complevel": 0, "shuffle": None},
    {"complib": "lzf", "complevel": None, "shuffle": True},
    {"complib": "gzip", "complevel": 4, "shuffle": False},
    {"complib": None, "complevel": None, "shuffle": None},
])
@pytest.mark.parametrize("mode", MODES)
def test_every_hangar_compression_option_round_trips(tmp_path, options, mode):
    sample = np.arange(30 * 40 * 2, dtype="f4").reshape(30, 40, 2)
    with hangar.StoreWriter(tmp_path, (64, 64, 3), "f4", mode=mode, backend_options=options,
                            collection_count=2) as w:
        record = w.write(sample)
    assert np.array_equal(hangar.StoreReader(tmp_path).read(record), sample)


def test_bad_options_and_samples_are_refused():
    for bad, word in [({"complib": "blosc:lz4", "complevel": 12, "shuffle": "byte"}, "complevel"),
                      ({"complib": "blosc:lz4", "complevel": 5, "shuffle": True}, "shuffle"),
                      ({"complib": "lzf", "complevel": 5, "shuffle": True}, "complevel"),
                      ({"complib": "snappy", "complevel": 5, "shuffle": None}, "complib")]:
        with pytest.raises(ValueError, match=word):
            hangar.compression_kwargs(bad)
    w = hangar.StoreWriter("/nonexistent", (4, 4), "u1")
    with pytest.raises(ValueError, match="does not fit"):
        w.write(np.zeros((5, 4), "u1"))
    with pytest.raises(ValueError, match="dtype"):
        w.write(np.zeros((2, 2), "f4"))
    with pytest.raises(ValueError, match="unsupported dtype"):
        hangar.StoreWriter("/nonexistent", (4, 4), "c8")
    with pytest.raises(ValueError, match="chunk_index must be one of"):
        hangar.StoreWriter("/nonexistent", (4, 4), "u1", chunk_index="btree")
