"""Coordinate I/O (h5sparse.write_coo, read_coo, iter_coo, erase_coo, get_defined) on real files
through the connector: random sequences against a numpy model at ranks 1-4 and every dtype the
model test uses, after reopening and read densely without the connector; batches of iter_coo;
huge extents in little memory; bad input refused with nothing changed."""
import os
import resource
import subprocess
import sys
import textwrap

import h5py
import numpy as np
import pytest

import h5sparse
from test_sparse_model import DTYPES, random_values

SHAPES = [((300,), (32,)), ((40, 57), (16, 16)), ((9, 10, 11), (4, 3, 5)), ((6, 5, 4, 7), (2, 3, 4, 2))]


def random_coords(rng, shape, n):
    return np.stack([rng.integers(0, s, n) for s in shape], axis=1)


def random_region(rng, shape):
    return tuple(slice(int(a), int(a) + int(rng.integers(0, s - a + 1))) for s in shape for a in [rng.integers(0, s)])


def model_coo(values, defined, region=None):
    """(coords, values) of the model in row-major order, inside `region`."""
    mask = defined.copy()
    if region is not None:
        inside = np.zeros_like(mask)
        inside[region] = True
        mask &= inside
    coords = np.argwhere(mask)
    return coords.astype(np.uint64), values[tuple(coords.T)]


def apply_write(values, defined, coords, new):
    for c, v in zip(map(tuple, coords), new):  # in order: a repeated coordinate takes its last value
        values[c] = v
        defined[c] = True


@pytest.mark.parametrize("shape,chunks", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_random_sequences_match_the_model(tmp_path, shape, chunks, dtype):
    rng = np.random.default_rng(len(shape) * 100 + DTYPES.index(dtype))
    path = tmp_path / "coo.h5"
    values = np.zeros(shape, dtype)
    defined = np.zeros(shape, bool)
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", shape=shape, dtype=dtype, chunks=chunks,
                             **h5sparse.Sparse(values=h5sparse.Blosc("lz4")))
        for step in range(12):
            n = int(rng.integers(1, 80))
            coords = random_coords(rng, shape, n)
            if n > 2:
                coords[-1] = coords[0]  # repeated: the last one wins
            if step % 4 == 3:
                h5sparse.erase_coo(d, coords)
                defined[tuple(coords.T)] = False
            else:
                new = random_values(rng, dtype, n)
                h5sparse.write_coo(d, coords, new)
                apply_write(values, defined, coords, new)
            got_coords, got_values = h5sparse.read_coo(d)
            want_coords, want_values = model_coo(values, defined)
            np.testing.assert_array_equal(got_coords, want_coords)
            assert got_values.tobytes() == want_values.tobytes()
            region = random_region(rng, shape)
            got_coords, got_values = h5sparse.read_coo(d, region)
            want_coords, want_values = model_coo(values, defined, region)
            np.testing.assert_array_equal(got_coords, want_coords)
            assert got_values.tobytes() == want_values.tobytes()
            np.testing.assert_array_equal(h5sparse.get_defined(d, region), want_coords)
    with h5py.File(path, "r") as f:  # reopened
        got_coords, got_values = h5sparse.read_coo(f["x"])
        want_coords, want_values = model_coo(values, defined)
        np.testing.assert_array_equal(got_coords, want_coords)
        assert got_values.tobytes() == want_values.tobytes()
        fill = f["x"].fillvalue
    expected = values.copy()  # in the dataset's byte order
    expected[~defined] = fill
    assert_dense_without_connector(path, expected)


def assert_dense_without_connector(path, expected):
    """A reader with only the filter plugin sees the model densely (undefined: the fill value)."""
    np.save(str(path) + ".npy", expected)
    env = {k: v for k, v in os.environ.items() if k != "HDF5_VOL_CONNECTOR"}
    script = textwrap.dedent(f"""
        import h5py, numpy as np
        with h5py.File({str(path)!r}, "r") as f:
            assert f["x"][...].tobytes() == np.load({str(path) + '.npy'!r}).tobytes()
    """)
    subprocess.run([sys.executable, "-c", script], env=env, check=True)


def test_values_convert_as_h5dwrite_converts(tmp_path):
    with h5py.File(tmp_path / "c.h5", "w") as f:
        d = f.create_dataset("x", shape=(100, 100), dtype="f4", chunks=(10, 10), **h5sparse.Sparse())
        h5sparse.write_coo(d, [[1, 2], [3, 4]], np.array([7, -3], dtype="i8"))
        coords, values = h5sparse.read_coo(d)
        assert values.dtype == np.float32 and values.tolist() == [7.0, -3.0]
        assert d[1, 2] == 7.0 and d[3, 4] == -3.0


def test_fill_values_erase_with_fill_is_undefined(tmp_path):
    with h5py.File(tmp_path / "f.h5", "w") as f:
        d = f.create_dataset("x", shape=(50,), dtype="i4", chunks=(8,), fillvalue=-1,
                             **h5sparse.Sparse(fill_is_undefined=True))
        h5sparse.write_coo(d, [[1], [2], [3]], [5, 6, 7])
        h5sparse.write_coo(d, [[2], [9]], [-1, -1])
        assert h5sparse.read_coo(d)[0].ravel().tolist() == [1, 3]


def test_iter_coo_batches_whole_chunks_in_row_major_order(tmp_path):
    rng = np.random.default_rng(3)
    with h5py.File(tmp_path / "i.h5", "w") as f:
        d = f.create_dataset("x", shape=(512, 512), dtype="f8", chunks=(32, 32), **h5sparse.Sparse())
        h5sparse.write_coo(d, random_coords(rng, (512, 512), 20000), rng.random(20000))
        all_coords, all_values = h5sparse.read_coo(d)
        batches = list(h5sparse.iter_coo(d, max_bytes=40000))
        assert len(batches) >= 8  # two bands of 32 rows (about 2,500 elements) fill a batch
        np.testing.assert_array_equal(np.concatenate([c for c, _ in batches]), all_coords)
        np.testing.assert_array_equal(np.concatenate([v for _, v in batches]), all_values)
        for coords, _ in batches:  # whole chunks: no chunk in two batches
            chunks = {tuple(c) for c in (coords // 32).tolist()}
            assert all(tuple(c) in chunks for c in (coords // 32).tolist())
        seen = set()
        for coords, _ in batches:
            chunks = {tuple(c) for c in (coords // 32).tolist()}
            assert not chunks & seen
            seen |= chunks
        # Batches smaller than a band of chunks: groups of whole chunks, each in row-major order.
        region = np.s_[100:300, 7:501]
        small = list(h5sparse.iter_coo(d, region, max_bytes=10000))
        for coords, _ in small:
            np.testing.assert_array_equal(coords, coords[np.lexsort(coords.T[::-1])])
        got = np.concatenate([c for c, _ in small])
        got = got[np.lexsort(got.T[::-1])]
        np.testing.assert_array_equal(got, h5sparse.read_coo(d, region)[0])
        assert list(h5sparse.iter_coo(d, np.s_[0:0, :])) == []



def test_read_coo_joins_its_batches(tmp_path, monkeypatch):
    rng = np.random.default_rng(4)
    with h5py.File(tmp_path / "j.h5", "w") as f:
        d = f.create_dataset("x", shape=(256, 256), dtype="i2", chunks=(16, 16), **h5sparse.Sparse())
        h5sparse.write_coo(d, random_coords(rng, (256, 256), 5000), rng.integers(-9, 9, 5000))
        whole = h5sparse.read_coo(d)
        monkeypatch.setattr(h5sparse.coo, "_DEFAULT_MAX_BYTES", 4000)  # many batches
        batched = h5sparse.read_coo(d)
        assert len(list(h5sparse.iter_coo(d, max_bytes=4000))) > 4
        for a, b in zip(whole, batched):
            np.testing.assert_array_equal(a, b)
        assert batched[1].dtype == np.int16 and batched[0].shape == (len(batched[1]), 2)
        coords, values = h5sparse.read_coo(d, np.s_[0:0, :])
        assert coords.shape == (0, 2) and coords.dtype == np.uint64 and values.shape == (0,)
        assert h5sparse.read_coo(d, values=False)[1] is None

HUGE = """
import resource, sys, h5py, numpy as np, h5sparse
side, n = int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(1)
coords = np.stack([rng.integers(0, side, n), rng.integers(0, side, n)], axis=1)
values = rng.random(n).astype("f4")
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("x", shape=(side, side), dtype="f4", chunks=(1024, 1024), **h5sparse.Sparse())
    h5sparse.write_coo(d, coords, values)
with h5py.File(sys.argv[1], "r") as f:
    got_coords, got_values = h5sparse.read_coo(f["x"])
    band = h5sparse.read_coo(f["x"], np.s_[5000:9000, :])[0]
    assert f["x"][int(coords[7, 0]), int(coords[7, 1])] == values[7]
order = np.lexsort((coords[:, 1], coords[:, 0]))
keep = np.ones(n, bool)  # the last of repeated coordinates
keep[order[:-1]] = np.any(coords[order[1:]] != coords[order[:-1]], axis=1)
expect = order[keep[order]]
assert np.array_equal(got_coords, coords[expect].astype(np.uint64))
assert np.array_equal(got_values, values[expect])
assert np.array_equal(band, got_coords[(got_coords[:, 0] >= 5000) & (got_coords[:, 0] < 9000)])
lo, hi = side // 2, side // 2 + side // 10  # a 1% box: 10^10 (2^31: 4 x 10^16) elements
with h5py.File(sys.argv[1], "r+") as f:
    h5sparse.erase(f["x"], np.s_[lo:hi, lo:hi])
    left = h5sparse.read_coo(f["x"])[0]
inside = np.all((got_coords >= lo) & (got_coords < hi), axis=1)
assert inside.sum() > 100 and np.array_equal(left, got_coords[~inside])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.parametrize("side", [2**20, 2**31])
def test_huge_extents_in_little_memory(tmp_path, side):
    """20,000 elements in a 2^20 x 2^20 (and 2^31 x 2^31) extent, written, read and a 1% box of
    them erased: seconds, and memory that follows the elements (the dense array would be 4 TiB)."""
    baseline = subprocess.run([sys.executable, "-c", "import resource, h5py, numpy, h5sparse; "
                               "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"],
                              check=True, capture_output=True, text=True)
    run = subprocess.run([sys.executable, "-c", HUGE, str(tmp_path / "huge.h5"), str(side), "20000"], check=True,
                         capture_output=True, text=True)
    peak, base = int(run.stdout.split()[-1]), int(baseline.stdout.split()[-1])
    assert peak - base < 64, f"peak RSS {peak} MiB, {base} MiB after imports"


ONE_BATCH_WRITE = """
import sys, h5py, numpy as np, h5sparse
side, n = 32768, int(sys.argv[2])
rng = np.random.default_rng(2)
flat = np.unique(rng.integers(0, side * side, n))
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("x", shape=(side, side), dtype="f8", chunks=(1024, 1024), **h5sparse.Sparse())
    h5sparse.write_coo(d, np.stack([flat // side, flat % side], axis=1), flat.astype("f8"))
"""

ONE_BATCH_READ = """
import resource, sys, h5py, numpy as np, h5sparse
with h5py.File(sys.argv[1], "r") as f:
    coords, values = h5sparse.read_coo(f["x"])
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024  # before the checks' temporaries
assert np.array_equal(values, (coords[:, 0] * 32768 + coords[:, 1]).astype("f8"))
assert np.all(np.diff(values) > 0)  # row-major
print(peak, (coords.nbytes + values.nbytes) >> 20)
"""


def test_one_batch_reads_need_little_memory_beside_their_result(tmp_path):
    """read_coo of 8 M float64 elements (chunks of 10^4-10^5 elements, 110 MB stored): one batch
    of 192 MiB, and less than 64 MiB of memory beside it and the imports (chunks beyond what a
    batch holds are read again when it is written, not held decoded)."""
    path = str(tmp_path / "one_batch.h5")
    subprocess.run([sys.executable, "-c", ONE_BATCH_WRITE, path, "8000000"], check=True)
    baseline = subprocess.run([sys.executable, "-c", "import resource, h5py, numpy, h5sparse; "
                               "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"],
                              check=True, capture_output=True, text=True)
    run = subprocess.run([sys.executable, "-c", ONE_BATCH_READ, path], check=True, capture_output=True, text=True)
    (peak, result), base = map(int, run.stdout.split()), int(baseline.stdout.split()[-1])
    assert result > 180
    assert peak - base - result < 64, f"peak RSS {peak} MiB: {base} MiB after imports, {result} MiB of result"


WRITE_MEMORY = """
import sys, h5py, numpy as np, h5sparse
side, n = 32768, int(sys.argv[2])
rng = np.random.default_rng(3)
flat = rng.permutation(np.unique(rng.integers(0, side * side, n)))  # random order: sorted by the write
coords, values = np.stack([flat // side, flat % side], axis=1), flat.astype("f8")
def mib(field):
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(field)) >> 10
with h5py.File(sys.argv[1], "w") as f:
    d = f.create_dataset("x", shape=(side, side), dtype="f8", chunks=(1024, 1024), **h5sparse.Sparse())
    open("/proc/self/clear_refs", "w").write("5")  # the peak from here on
    before = mib("VmRSS")
    h5sparse.write_coo(d, coords, values)
    print(mib("VmHWM") - before, len(flat))
"""


@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="the sanitizer's quarantine keeps freed memory resident")
def test_coordinate_writes_hold_little_beside_their_input(tmp_path):
    """write_coo of 4 M points in random order (96 MiB of input) adds less than 12 bytes a point
    and 16 MiB: a point takes 8 bytes while grouped by chunk (it took 48 before)."""
    run = subprocess.run([sys.executable, "-c", WRITE_MEMORY, str(tmp_path / "w.h5"), "4000000"], check=True,
                         capture_output=True, text=True)
    added, points = map(int, run.stdout.split())
    assert added < (12 * points >> 20) + 16, f"the write added {added} MiB for {points} points"


def expect_refused(d, error, fragment, call, *args):
    before = h5sparse.read_coo(d)
    with pytest.raises(error) as e:
        call(d, *args)
    assert fragment in str(e.value)
    after = h5sparse.read_coo(d)
    np.testing.assert_array_equal(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])


def test_bad_input_is_refused_and_changes_nothing(tmp_path):
    with h5py.File(tmp_path / "b.h5", "w") as f:
        d = f.create_dataset("x", shape=(20, 30), dtype="i4", chunks=(8, 8), **h5sparse.Sparse())
        h5sparse.write_coo(d, [[1, 1], [10, 20]], [3, 4])
        write, erase = h5sparse.write_coo, h5sparse.erase_coo
        expect_refused(d, h5sparse.H5SparseError, "coordinate (20, 0) (point 1) is outside the extent (20, 30)",
                       write, [[0, 0], [20, 0]], [1, 2])
        expect_refused(d, h5sparse.H5SparseError, "outside the extent", erase, [[0, 30]])
        expect_refused(d, ValueError, "coordinate (-1, 3) (point 1) is negative", write, [[0, 0], [-1, 3]], [1, 2])
        expect_refused(d, ValueError, "must be an (N, 2) array", write, [[0, 0, 0]], [1])
        expect_refused(d, ValueError, "must be an (N, 2) array", write, [0, 1], [1, 2])
        expect_refused(d, TypeError, "coordinates must be integers", write, [[0.5, 1.0]], [1])
        expect_refused(d, ValueError, "2 coordinates need 2 values", write, [[0, 0], [1, 1]], [1, 2, 3])
        expect_refused(d, TypeError, "do not convert", write, [[0, 0]], ["seven"])
        expect_refused(d, h5sparse.H5SparseError, "convert", write, [[0, 0]], np.zeros(1, [("a", "i4")]))
        with pytest.raises((ValueError, IndexError)):
            h5sparse.read_coo(d, np.s_[25, :])  # as dset[25, :] refuses it
        dense = f.create_dataset("dense", data=np.ones((4, 4)))
        with pytest.raises(h5sparse.H5SparseError, match="not sparse"):
            h5sparse.write_coo(dense, [[0, 0]], [1.0])
        with pytest.raises(h5sparse.H5SparseError, match="not sparse"):
            h5sparse.read_coo(dense)
        np.testing.assert_array_equal(h5sparse.get_defined(dense, np.s_[1:2, 2:4]), [[1, 2], [1, 3]])


def test_a_failing_callback_stops_with_its_exception(tmp_path):
    with h5py.File(tmp_path / "cb.h5", "w") as f:
        d = f.create_dataset("x", shape=(64,), dtype="i4", chunks=(8,), **h5sparse.Sparse())
        h5sparse.write_coo(d, [[i] for i in range(0, 64, 3)], list(range(0, 64, 3)))
        batches = h5sparse.iter_coo(d, max_bytes=1)
        first = next(batches)
        assert first[0].ravel().tolist() == [0, 3, 6]
        from h5sparse import coo

        class Failing(coo._Batches):
            def room(self, count, coords, values):
                return 1 // 0
        with pytest.raises(ZeroDivisionError):
            coo._read(d, None, d.dtype, 0, None, Failing(1, d.dtype))
        assert h5sparse.read_coo(d)[0].size == 22  # the dataset is still usable


def test_point_selections_of_unmodified_h5py_take_the_coordinate_path(tmp_path):
    """dset[mask] = values (h5py selects the mask's points) defines exactly those elements, as
    write_coo does, and h5sparse.erase with a mask erases them."""
    rng = np.random.default_rng(8)
    mask = rng.random((70, 90)) < 0.2
    values = rng.random(int(mask.sum())).astype("f4")
    with h5py.File(tmp_path / "p.h5", "w") as f:
        a = f.create_dataset("a", shape=(70, 90), dtype="f4", chunks=(16, 32), **h5sparse.Sparse())
        b = f.create_dataset("b", shape=(70, 90), dtype="f4", chunks=(16, 32), **h5sparse.Sparse())
        a[mask] = values
        h5sparse.write_coo(b, np.argwhere(mask), values)
        for x in (a, b):
            coords, got = h5sparse.read_coo(x)
            np.testing.assert_array_equal(coords, np.argwhere(mask))
            np.testing.assert_array_equal(got, values)
        half = mask & (rng.random((70, 90)) < 0.5)
        h5sparse.erase(a, half)
        np.testing.assert_array_equal(h5sparse.get_defined(a), np.argwhere(mask & ~half))
