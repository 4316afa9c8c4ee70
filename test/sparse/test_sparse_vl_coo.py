"""Coordinate I/O of variable-length sparse datasets from Python (write_coo, erase_coo, read_coo,
iter_coo, get_defined) against a model, at ranks 1-3, for UTF-8 and ASCII strings and
sequences of int16 and float64: random coordinates in any order with repeats (the last wins),
NULL and "" kept apart; what read_coo gives equals what h5py reads through the connector and
what the connector-free reader decodes; bad input is refused and changes nothing."""
import h5py
import numpy as np
import pytest

import h5sparse

WORDS = ["alpha", "", "z\u00e9\u00fc\u6f22\u5b57\U0001f642", "gamma delta", "q\"u\\o"]
KINDS = {  # kind: dtype, shape, chunks
    "utf8": (h5py.string_dtype(), (300,), (16,)),
    "ascii": (h5py.string_dtype("ascii"), (20, 30), (4, 8)),
    "int16": (h5py.vlen_dtype(np.int16), (12, 10), (5, 3)),
    "float64": (h5py.vlen_dtype(np.float64), (6, 7, 8), (3, 4, 5)),
}


def random_value(kind, rng):
    if rng.random() < 0.1:
        return None
    if kind == "utf8":
        return WORDS[rng.integers(len(WORDS))] * int(rng.integers(1, 3))
    if kind == "ascii":
        return "abc xyz"[:int(rng.integers(0, 8))].encode()
    n = int(rng.integers(0, 9))
    return rng.integers(-300, 300, n).astype(np.int16) if kind == "int16" else np.round(rng.random(n) * 10, 2)


def as_h5py_reads(kind, value):
    """A written value as h5py reads it back: NULL as b"" or an empty array, str as UTF-8 bytes."""
    if kind in ("utf8", "ascii"):
        return b"" if value is None else value.encode() if isinstance(value, str) else value
    return np.zeros(0, KINDS[kind][0].metadata["vlen"]) if value is None else value


def same(kind, a, b):
    return a == b if kind in ("utf8", "ascii") else np.array_equal(a, b)


@pytest.mark.parametrize("kind", KINDS)
def test_coordinate_io_matches_the_model(kind, tmp_path):
    dtype, shape, chunks = KINDS[kind]
    rng = np.random.default_rng(len(kind))
    model = {}
    with h5py.File(tmp_path / "vl.h5", "w") as f:
        d = f.create_dataset("d", shape=shape, chunks=chunks, dtype=dtype, **h5sparse.Sparse())
        for _ in range(12):
            n = int(rng.integers(1, 40))
            coords = np.stack([rng.integers(0, s, n) for s in shape], axis=1)
            if rng.random() < 0.25:
                h5sparse.erase_coo(d, coords)
                for c in map(tuple, coords):
                    model.pop(c, None)
                continue
            values = [random_value(kind, rng) for _ in range(n)]
            h5sparse.write_coo(d, coords, values)
            for c, v in zip(map(tuple, coords), values):
                model[c] = as_h5py_reads(kind, v)  # the last of a repeated coordinate wins
        want = sorted(model)
        coords, values = h5sparse.read_coo(d)
        assert [tuple(c) for c in coords.tolist()] == want
        assert values.dtype == object and all(same(kind, v, model[c]) for c, v in zip(want, values))
        assert [tuple(c) for c in h5sparse.get_defined(d).tolist()] == want
        dense = d[...]
        assert all(same(kind, dense[c], model[c]) for c in want)
        box = tuple(slice(1, max(2, s - 1)) for s in shape)
        inside = [c for c in want if all(sl.start <= x < sl.stop for x, sl in zip(c, box))]
        coords, values = h5sparse.read_coo(d, box)
        assert [tuple(c) for c in coords.tolist()] == inside
        assert all(same(kind, v, model[c]) for c, v in zip(inside, values))
        got = {}
        for coords, values in h5sparse.iter_coo(d, max_bytes=64):
            got.update({tuple(c): v for c, v in zip(coords.tolist(), values)})
        assert sorted(got) == want and all(same(kind, got[c], model[c]) for c in want)
        alone = h5sparse.read_vl_chunks(d)  # the connector-free reader: NULL is None there
        assert [tuple(c) for c in alone.coords.tolist()] == want
        assert all(same(kind, as_h5py_reads(kind, v), model[c]) for c, v in zip(want, alone.values))


def test_bad_input_is_refused_and_changes_nothing(tmp_path):
    with h5py.File(tmp_path / "bad.h5", "w") as f:
        s = f.create_dataset("s", shape=(10, 10), chunks=(4, 4), dtype=h5py.string_dtype(), **h5sparse.Sparse())
        a = f.create_dataset("a", shape=(10,), chunks=(4,), dtype=h5py.string_dtype("ascii"), **h5sparse.Sparse())
        q = f.create_dataset("q", shape=(10,), chunks=(4,), dtype=h5py.vlen_dtype(np.int32), **h5sparse.Sparse())
        h5sparse.write_coo(s, [[1, 2], [3, 4]], ["kept", None])
        h5sparse.write_coo(a, [[1]], [b"kept"])
        before = h5sparse.read_coo(s)
        with pytest.raises(TypeError, match="takes str, bytes or None"):
            h5sparse.write_coo(s, [[5, 5]], [7])
        with pytest.raises(ValueError, match="2 coordinates need 2 values"):
            h5sparse.write_coo(s, [[5, 5], [6, 6]], ["x"])
        with pytest.raises(ValueError, match="NUL"):
            h5sparse.write_coo(s, [[5, 5]], ["a\0b"])
        with pytest.raises(h5sparse.H5SparseError, match=r"coordinate \(10, 0\) \(point 1\) is outside the extent"):
            h5sparse.write_coo(s, [[5, 5], [10, 0]], ["x", "y"])
        with pytest.raises(UnicodeEncodeError):
            h5sparse.write_coo(a, [[2]], ["\u00e9"])
        with pytest.raises(ValueError):
            h5sparse.write_coo(q, [[2]], [["not a number"]])
        coords, values = h5sparse.read_coo(s)
        assert coords.tolist() == before[0].tolist() and values.tolist() == [b"kept", b""]
        assert h5sparse.read_coo(a)[1].tolist() == [b"kept"]
        assert len(h5sparse.read_coo(q)[0]) == 0
        compound = np.dtype([("id", "<i4"), ("name", h5py.string_dtype())])
        c = f.create_dataset("c", shape=(4,), chunks=(4,), dtype=compound, **h5sparse.Sparse())
        with pytest.raises(TypeError, match="compounds with variable-length members"):
            h5sparse.write_coo(c, [[1]], [(1, "x")])
