"""Property test: random sequences of writes, erases and reads on sparse datasets (1-D to 4-D,
edge chunks, random types, fill values and section pipelines) give exactly the values and the
defined sets of a dense numpy model; the files then read the same without the connector."""
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5sparse

SEQUENCES = int(os.environ.get("H5SPARSE_MODEL_SEQUENCES", "1000"))
COMPOUND = np.dtype([("a", "<i4"), ("b", "<f8")])
WITH_ARRAY = np.dtype([("v", "<f4", (3,)), ("k", "u1")])  # compound holding an H5T_ARRAY member
ENUM = h5py.enum_dtype({"red": 1, "green": 2, "blue": 7}, basetype="i1")
FIXED_STRING = np.dtype("S7")
DTYPES = [np.dtype(t) for t in ("u1", "<i2", "<i4", ">i8", "<f4", "<f8")] + [COMPOUND, WITH_ARRAY, ENUM,
                                                                             FIXED_STRING]
PIPELINES = [
    None,
    h5sparse.Deflate(4),
    [h5sparse.Shuffle(), h5sparse.Deflate(1)],
    h5sparse.LZF(),
    h5sparse.Blosc("lz4", 5, "byte"),
    h5sparse.Blosc("zstd", 3, "bit"),
    [h5sparse.Shuffle(), h5sparse.LZF()],
]


def random_values(rng, dtype, n):
    if dtype == WITH_ARRAY:
        out = np.zeros(n, dtype)
        out["v"] = rng.normal(size=(n, 3))
        out["k"] = rng.integers(0, 255, n)
        return out
    if h5py.check_enum_dtype(dtype):
        return rng.choice(np.array([1, 2, 7], dtype), n)
    if dtype.kind == "S":
        return np.array([bytes(rng.integers(97, 123, int(rng.integers(0, 8))).astype(np.uint8)) for _ in range(n)],
                        dtype)
    if dtype == COMPOUND:
        out = np.zeros(n, dtype)
        out["a"] = rng.integers(-1000, 1000, n)
        out["b"] = rng.normal(size=n)
        return out
    if dtype.kind == "f":
        return rng.normal(0, 100, n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -10**6), min(info.max, 10**6), n, endpoint=True).astype(dtype)


def random_selection(rng, shape):
    """An index for dset[...]: regular slices (sometimes strided) or a list of points."""
    kind = rng.integers(0, 4)
    if kind == 0:  # one point per axis-list (h5py allows one fancy axis): scattered points in 1 dim
        axis = int(rng.integers(0, len(shape)))
        index = []
        for d, n in enumerate(shape):
            if d == axis:
                k = int(rng.integers(1, min(n, 6) + 1))
                index.append(sorted(rng.choice(n, size=k, replace=False).tolist()))
            else:
                index.append(int(rng.integers(0, n)))
        return tuple(index)
    index = []
    for n in shape:
        start = int(rng.integers(0, n))
        stop = int(rng.integers(start + 1, n + 1))
        step = int(rng.integers(1, 4)) if kind == 3 else 1
        index.append(slice(start, stop, step))
    return tuple(index)


def model_index(sel):
    """numpy index equivalent to an h5py selection (lists select along one axis)."""
    return tuple(np.array(s) if isinstance(s, list) else s for s in sel)


def check_partial_reads(rng, dset, expected):
    """Reads that are not the whole dataset into a fresh array: a random selection, the same
    into a strided (non-contiguous) memory selection, points in arbitrary order, and (for
    numeric types) with datatype conversion."""
    sel = random_selection(rng, expected.shape)
    assert np.array_equal(dset[sel], expected[model_index(sel)])
    region = expected[model_index(sel)]
    if region.size:  # into every other element of memory: a non-contiguous memory selection
        out = np.zeros(region.shape + (2,), expected.dtype)
        mspace = h5py.h5s.create_simple(out.shape)
        mspace.select_hyperslab((0,) * region.ndim + (1,), region.shape + (1,))
        dset.id.read(mspace, _file_space(dset, sel), out)
        assert np.array_equal(out[..., 1], region) and not np.any(out[..., 0] != np.zeros(1, expected.dtype)[0])
    points = np.argwhere(np.ones(expected.shape, bool))
    points = points[rng.permutation(len(points))[: int(rng.integers(1, min(len(points), 50) + 1))]]
    fspace = dset.id.get_space()
    fspace.select_elements(points.astype(np.uint64))
    out = np.zeros(len(points), expected.dtype)
    dset.id.read(h5py.h5s.create_simple((len(points),)), fspace, out)
    assert np.array_equal(out, expected[tuple(points.T)])
    if expected.dtype.kind in "iuf" and not h5py.check_enum_dtype(expected.dtype):
        assert np.array_equal(dset.astype(np.float64)[sel], expected[model_index(sel)].astype(np.float64))


def _file_space(dset, sel):
    """The file dataspace h5py builds for dset[sel]."""
    from h5py._hl import selections
    return selections.select(dset.shape, sel, dset).id


def check(dset, values, defined, fill, rng=None):
    expected = np.where(defined, values, fill) if values.dtype.names is None else None
    got = dset[...]
    if expected is None:
        expected = values.copy()
        expected[~defined] = fill
    assert np.array_equal(got, expected)
    coords = h5sparse.get_defined(dset)
    assert np.array_equal(coords, np.argwhere(defined).astype(np.uint64))
    if rng is not None:
        check_partial_reads(rng, dset, expected)


def is_fill(data, fill):
    """Elementwise: equal to the fill value byte for byte (what fill_is_undefined compares)."""
    flat = np.ascontiguousarray(np.asarray(data).reshape(-1))
    raw = flat.view(np.uint8).reshape(flat.size, data.dtype.itemsize)
    fill_bytes = np.array([fill], data.dtype).view(np.uint8)
    return np.all(raw == fill_bytes, axis=-1).reshape(np.shape(data))


def run_sequence(seed, path):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 5))
    shape = tuple(int(rng.integers(1, [200, 40, 14, 8][rank - 1] + 1)) for _ in range(rank))
    chunks = tuple(int(rng.integers(1, n + 1)) for n in shape)
    dtype = DTYPES[int(rng.integers(0, len(DTYPES)))]
    user_fill = bool(rng.integers(0, 2))
    fill = random_values(rng, dtype, 1)[0] if user_fill else np.zeros(1, dtype)[0]
    kwargs = dict(fillvalue=fill) if user_fill else {}
    values_pipeline = PIPELINES[int(rng.integers(0, len(PIPELINES)))]
    selection_pipeline = PIPELINES[int(rng.integers(0, 3))]
    # With fill_is_undefined, written elements equal (byte for byte) to the fill value become
    # undefined; a third of each write is then the fill value.
    fill_undefined = bool(rng.integers(0, 3) == 0)
    values = np.zeros(shape, dtype)
    defined = np.zeros(shape, bool)
    with h5py.File(path, "w") as f:
        dset = f.create_dataset("d", shape=shape, dtype=dtype, chunks=chunks, **kwargs,
                                **h5sparse.Sparse(values=values_pipeline, selection=selection_pipeline,
                                                  fill_is_undefined=fill_undefined))
        for _ in range(int(rng.integers(2, 9))):
            sel = random_selection(rng, shape)
            region = values[model_index(sel)]
            op = rng.integers(0, 5)
            if op == 0:
                h5sparse.erase(dset, sel)
                defined[model_index(sel)] = False
            else:
                data = random_values(rng, dtype, region.size).reshape(region.shape)
                if fill_undefined:
                    data.reshape(-1)[rng.random(data.size) < 1 / 3] = fill
                if op == 1 and dtype.kind in "iu" and dtype.itemsize >= 4 and not h5py.check_enum_dtype(dtype):
                    dset[sel] = data.astype("<i4") if dtype.itemsize == 4 else data  # conversion path
                elif op == 1 and dtype == np.float32:
                    dset[sel] = data.astype(np.float64)  # float64 in memory, float32 in the file
                else:
                    dset[sel] = data
                values[model_index(sel)] = data
                defined[model_index(sel)] = ~is_fill(data, fill) if fill_undefined else True
            if rng.integers(0, 3) == 0:
                check(dset, values, defined, fill, rng)
        check(dset, values, defined, fill, rng)
    # Reopened (h5py opens datasets with H5Oopen): still sparse, still writable with the RFC meaning.
    with h5py.File(path, "a") as f:
        dset = f["d"]
        check(dset, values, defined, fill)
        sel = random_selection(rng, shape)
        data = random_values(rng, dtype, values[model_index(sel)].size).reshape(values[model_index(sel)].shape)
        dset[sel] = data
        values[model_index(sel)] = data
        defined[model_index(sel)] = ~is_fill(data, fill) if fill_undefined else True
        check(dset, values, defined, fill)
    return values, defined, fill


@pytest.mark.parametrize("batch", range(8))
def test_random_sequences_match_model(tmp_path, batch):
    per_batch = SEQUENCES // 8
    for seed in range(batch * per_batch, (batch + 1) * per_batch):
        path = tmp_path / f"s{seed}.h5"
        values, defined, fill = run_sequence(seed, path)
        if seed % 20 == 0:  # without the connector: the filter alone expands chunks
            expected = values.copy()
            expected[~defined] = fill
            np.save(tmp_path / "expected.npy", expected)
            script = ("import h5py, numpy as np, sys\n"
                      "e = np.load(sys.argv[2]); a = h5py.File(sys.argv[1], 'r')['d'][...]\n"
                      "assert np.array_equal(a, e), 'values differ without the connector'\n")
            env = {k: v for k, v in os.environ.items() if k != "HDF5_VOL_CONNECTOR"}
            subprocess.run([sys.executable, "-c", script, str(path), str(tmp_path / "expected.npy")],
                           env=env, check=True)
        path.unlink()
