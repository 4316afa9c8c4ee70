"""bench/coo's layouts return what was written, after update and erase too (small arrays)."""
import importlib.util
import os
import sys

import numpy as np
import pytest

SOURCE = os.environ.get("H5SPARSE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "bench", "coo"))
import layouts  # noqa: E402

layouts.use_bench_site()   # TileDB-Py, when bench/coo/install-tiledb has put it there

SPEC = {"shape": [64, 48], "chunk": 16}
BOX = [10, 30, 5, 20]
HAVE_TILEDB = importlib.util.find_spec("tiledb") is not None
NAMES = ["coo", "csr", "dense"] + (["tiledb", "tiledb-default"] if HAVE_TILEDB else [])


def inputs():
    rng = np.random.default_rng(5)
    n, m = SPEC["shape"]
    keys = rng.permutation(rng.choice(n * m, size=300, replace=False))
    coords = np.stack([keys // m, keys % m], axis=1).astype(np.int64)
    return coords, (1 + rng.random(len(keys))).astype(np.float32)


def expected(coords, values, region):
    r0, r1, c0, c1 = region
    inside = (coords[:, 0] >= r0) & (coords[:, 0] < r1) & (coords[:, 1] >= c0) & (coords[:, 1] < c1)
    return np.sort(values[inside])


def found(name, got):
    got = np.asarray(got).ravel()
    return np.sort(got[got != 0] if name == "dense" else got)


@pytest.mark.parametrize("codec", ["none", "blosc-lz4"])
@pytest.mark.parametrize("name", NAMES)
def test_layout(tmp_path, name, codec):
    if name == "tiledb-default":   # TileDB's own filters: one codec
        if codec != "none":
            pytest.skip("tiledb-default has one codec")
        codec = "default"
    layout = layouts.LAYOUTS[name](SPEC, codec)
    path = str(tmp_path / ("x.tdb" if name.startswith("tiledb") else "x.h5"))
    coords, values = inputs()
    layouts.preload(name, "write")
    layout.write(path, coords, values)
    everything = [0, SPEC["shape"][0], 0, SPEC["shape"][1]]
    assert np.array_equal(found(name, layout.read(path)), np.sort(values))
    for region in (BOX, [16, 32, 0, 48], [0, 64, 16, 32]):
        assert np.array_equal(found(name, layout.read(path, region)), expected(coords, values, region))
    pts = np.concatenate([coords[:20], [[63, 47], [0, 0], [5, 7]]])
    lookup = {(int(r), int(c)): v for (r, c), v in zip(coords, values)}
    assert np.array_equal(layout.points(path, pts), [lookup.get((int(r), int(c)), 0) for r, c in pts])
    values = values.copy()
    values[::10] += 1
    layout.update(path, coords[::10], values[::10])
    assert np.array_equal(found(name, layout.read(path, everything)), np.sort(values))
    layout.erase(path, BOX)
    r0, r1, c0, c1 = BOX
    keep = ~((coords[:, 0] >= r0) & (coords[:, 0] < r1) & (coords[:, 1] >= c0) & (coords[:, 1] < c1))
    assert np.array_equal(found(name, layout.read(path)), np.sort(values[keep]))
    assert layouts.size_on_disk(path) > 0
