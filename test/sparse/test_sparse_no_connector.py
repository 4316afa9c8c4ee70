"""Files written through the connector are ordinary HDF5 files for clients that have only the
plugin path: h5py and h5dump read the dense values (undefined = fill value) through the
structured-chunk filter, and h5repack -f UD=45100 turns a dense dataset into a sparse one."""
import os
import subprocess
import sys

import h5py
import numpy as np

import h5sparse

PLAIN_ENV = {k: v for k, v in os.environ.items() if k != "HDF5_VOL_CONNECTOR"}


def write_corpus(path):
    rng = np.random.default_rng(5)
    expected = {}
    with h5py.File(path, "w") as f:
        specs = {
            "f4_blosc": (np.float32, (60, 70), (16, 16), -1.5, h5sparse.Blosc("zstd", 5, "bit")),
            "i2_deflate": (np.int16, (1000,), (64,), 7, h5sparse.Deflate(6)),
            "u1_lzf": (np.uint8, (20, 20, 20), (8, 8, 8), None, [h5sparse.Shuffle(), h5sparse.LZF()]),
            "compound": (np.dtype([("x", "<i4"), ("y", "<f8")]), (50,), (16,), None, None),
        }
        for name, (dtype, shape, chunks, fill, pipeline) in specs.items():
            kwargs = {} if fill is None else {"fillvalue": fill}
            d = f.create_dataset(name, shape=shape, dtype=dtype, chunks=chunks, **kwargs,
                                 **h5sparse.Sparse(values=pipeline))
            model = np.zeros(shape, dtype) if fill is None else np.full(shape, fill, dtype)
            mask = rng.random(shape) < 0.1
            if np.dtype(dtype).names:
                vals = np.zeros(int(mask.sum()), dtype)
                vals["x"] = np.arange(vals.size)
                vals["y"] = vals["x"] * 0.5
            else:
                vals = (rng.random(int(mask.sum())) * 100).astype(dtype)
            model[mask] = vals
            # Define exactly the masked elements, point by point per row block.
            for index in np.argwhere(mask):
                d[tuple(index)] = model[tuple(index)]
            expected[name] = model
    return expected


def test_plain_h5py_and_h5dump_read_sparse_files(tmp_path):
    path = tmp_path / "corpus.h5"
    expected = write_corpus(path)
    for name, model in expected.items():
        np.save(tmp_path / f"{name}.npy", model)
    script = ("import h5py, numpy as np, sys\n"
              "f = h5py.File(sys.argv[1], 'r')\n"
              "for name in sys.argv[2:]:\n"
              "    assert np.array_equal(f[name][...], np.load(sys.argv[1][:-9] + name + '.npy')), name\n"
              "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", script, str(path), *expected], env=PLAIN_ENV,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"
    with_connector = subprocess.run(["h5dump", str(path)], capture_output=True, text=True, check=True).stdout
    plain = subprocess.run(["h5dump", str(path)], capture_output=True, text=True, env=PLAIN_ENV, check=True).stdout
    assert plain == with_connector
    assert "FILTER_ID 45100" in subprocess.run(["h5dump", "-p", "-H", str(path)], capture_output=True,
                                               text=True, env=PLAIN_ENV, check=True).stdout


def test_h5repack_converts_dense_to_sparse_without_connector(tmp_path):
    dense, sparse = tmp_path / "dense.h5", tmp_path / "sparse.h5"
    data = np.zeros((200, 300), np.float64)
    data[::17, ::13] = np.arange(data[::17, ::13].size).reshape(data[::17, ::13].shape) + 1
    with h5py.File(dense, "w") as f:
        f.create_dataset("x", data=data, chunks=(50, 50))
    # UD=<id>,<flags>,<count>,<cd...>: options 1 (fill stays undefined), no section filters.
    subprocess.run(["h5repack", "-f", "x:UD=45100,0,3,1,0,0", str(dense), str(sparse)], env=PLAIN_ENV, check=True)
    with h5py.File(sparse, "r") as f:
        assert np.array_equal(f["x"][...], data)
    assert os.path.getsize(sparse) < os.path.getsize(dense) / 4
    # With the connector, the repacked dataset's defined set is exactly the non-zeros.
    with h5py.File(sparse, "r") as f:
        coords = h5sparse.get_defined(f["x"])
    assert np.array_equal(coords, np.argwhere(data != 0).astype(np.uint64))
