#!/usr/bin/env python3
"""End-to-end demo: unmodified h5py writes one dataset per Hangar compression option through
the h5sparse plugins, h5dump reads each back, and the sizes are compared.

Run it with `scripts/dev demo` (which builds first and exports HDF5_PLUGIN_PATH)."""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

# Hangar's vocabulary -> what unmodified h5py is given (the h5sparse filter plugins serve
# 32001 blosc and 32000 lzf from HDF5_PLUGIN_PATH).
BLOSC = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
SHUFFLE = {"none": 0, "byte": 1, "bit": 2}


def h5py_options(complib, complevel, shuffle):
    if complib.startswith("blosc:"):
        cname = complib.split(":")[1]
        return dict(compression=32001, compression_opts=(0, 0, 0, 0, complevel, SHUFFLE[shuffle], BLOSC[cname]))
    if complib == "lzf":
        return dict(compression="lzf", shuffle=shuffle == "byte")
    return dict(compression="gzip", compression_opts=complevel, shuffle=shuffle == "byte")


def field(shape):
    """A smooth float32 field with a little noise, like a simulation output."""
    y, x = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float32)
    rng = np.random.default_rng(0)
    return (np.sin(x / 37.0) * np.cos(y / 23.0) * 100 + rng.normal(0, 0.05, shape)).astype(np.float32)


def main():
    # h5py brings its own LZF; drop it so the h5sparse plugin on HDF5_PLUGIN_PATH serves 32000.
    h5py.h5z.unregister_filter(32000)
    print("connector in use:", os.environ.get("HDF5_VOL_CONNECTOR", "(none)"))
    print("h5plugin-config --env:")
    print(subprocess.run(["h5plugin-config", "--env"], capture_output=True, text=True, check=True).stdout)
    data = field((1024, 1024))
    raw = data.nbytes
    options = [("blosc:" + c, 5, s) for c in BLOSC for s in ("byte", "bit")]
    options += [("lzf", None, "byte"), ("gzip", 5, "byte")]
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'complib':<15} {'complevel':>9} {'shuffle':>7} {'stored bytes':>12} {'ratio':>6}  h5dump check")
        for complib, level, shuffle in options:
            path = os.path.join(tmp, f"{complib.replace(':', '_')}_{shuffle}.h5")
            with h5py.File(path, "w") as f:
                f.create_dataset("field", data=data, chunks=(128, 1024), **h5py_options(complib, level, shuffle))
            with h5py.File(path, "r") as f:
                stored = f["field"].id.get_storage_size()
                assert np.array_equal(f["field"][...], data), complib
            # h5dump decodes through the plugin on HDF5_PLUGIN_PATH: print one element back.
            dump = subprocess.run(["h5dump", "-d", "/field[512,512;;1,1;;]", "-p", path],
                                  capture_output=True, text=True, check=True).stdout
            value = dump.split("(512,512):")[1].split()[0].rstrip(",")
            ok = abs(float(value) - float(data[512, 512])) < 1e-3
            print(f"{complib:<15} {str(level):>9} {shuffle:>7} {stored:>12,} {raw / stored:>6.2f}  "
                  f"{'ok' if ok else 'MISMATCH'} ({value})")
            if not ok:
                sys.exit(1)
    print(f"\nuncompressed: {raw:,} bytes; every dataset read back exactly by h5py and decoded by h5dump")
    sparse_demo()


def sparse_demo():
    """A 1%-full array: dense chunked vs sparse (structured chunks), written by unmodified h5py
    through the connector, read back by h5dump with and without it."""
    import h5sparse
    print("\n--- sparse dataset: 2048 x 2048 float32, 1% of the elements defined ---")
    rng = np.random.default_rng(1)
    data = np.zeros((2048, 2048), np.float32)
    mask = rng.random(data.shape) < 0.01
    data[mask] = rng.normal(0, 1, mask.sum()).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        dense_path, sparse_path = os.path.join(tmp, "dense.h5"), os.path.join(tmp, "sparse.h5")
        with h5py.File(dense_path, "w") as f:
            f.create_dataset("x", data=data, chunks=(256, 256), compression=32001,
                             compression_opts=(0, 0, 0, 0, 5, 1, 1))
        with h5py.File(sparse_path, "w") as f:
            # Unmodified h5py code: a dense assignment; with fill_is_undefined only non-zeros are stored.
            d = f.create_dataset("x", shape=data.shape, dtype=np.float32, chunks=(256, 256),
                                 **h5sparse.Sparse(values=h5sparse.Blosc("lz4", 5, "byte"),
                                                   selection=h5sparse.Deflate(6), fill_is_undefined=True))
            d[...] = data
            defined = h5sparse.get_defined(d)
            print(f"connector: {h5sparse.connector_version(f)}; defined elements: {len(defined):,} "
                  f"(numpy count of non-zeros: {int(mask.sum()):,})")
            d[5, 5] = 0.0  # writing the fill value leaves it undefined under this option
            h5sparse.erase(d, np.s_[0:1024, :])
            print(f"after erasing the top half: {len(h5sparse.get_defined(d)):,} defined")
            d[0:1024, :] = data[0:1024, :]
        dense_size, sparse_size = os.path.getsize(dense_path), os.path.getsize(sparse_path)
        print(f"file size: dense chunked (blosc lz4) {dense_size:,} B, sparse {sparse_size:,} B "
              f"({dense_size / sparse_size:.1f}x smaller)")
        target = next(tuple(int(v) for v in c) for c in np.argwhere(mask))
        query = f"/x[{target[0]},{target[1]};;1,2;;]"
        for label, env in (("with the connector", dict(os.environ)),
                           ("plugin path only", {k: v for k, v in os.environ.items() if k != "HDF5_VOL_CONNECTOR"})):
            out = subprocess.run(["h5dump", "-d", query, sparse_path], capture_output=True, text=True,
                                 env=env, check=True).stdout
            line = [l.strip() for l in out.splitlines() if l.strip().startswith(f"({target[0]},")][0]
            print(f"h5dump {label:<20}: {line}   (expected {data[target]:.6g}, then fill 0)")
        with h5py.File(sparse_path, "r") as f:
            assert np.array_equal(f["x"][...], data)
        print("sparse dataset reads back equal to the dense array")


if __name__ == "__main__":
    main()
