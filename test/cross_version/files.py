#!/usr/bin/env python3
"""Files written under one HDF5 major version are read under the other (scripts/dev test runs
this on the HDF5 1.14 and HDF5 2 toolchains, both directions).

  files.py write DIR   write DIR/<index>.h5 with this toolchain (the connector must be loaded)
  files.py check DIR   read them with this toolchain: with the connector (values, and which
                       elements are defined) and, in a child process without the connector,
                       with the plugin path only (sparse datasets read as dense, fill value
                       where undefined)

Each file holds one chunk index kind (single chunk, fixed array, extensible array, version 2
B-tree, version 1 B-tree) and in it a sparse dataset, a Blosc and an LZF dataset. The expected
contents are recomputed from the dataset's name, never read from the file."""
import os
import subprocess
import sys

import h5py
import numpy as np

import h5sparse

SHAPE = (40, 30)
CHUNKS = (8, 8)
FILL = -1.0
# index kind -> (libver of the file, maxshape, chunks)
INDEXES = {
    "single_chunk": ("v110", SHAPE, SHAPE),
    "fixed_array": ("v110", SHAPE, CHUNKS),
    "extensible_array": ("v110", (None, SHAPE[1]), CHUNKS),
    "btree_v2": ("v110", (None, None), CHUNKS),
    "btree_v1": ("earliest", (None, None), CHUNKS),
}
FILTERS = {
    "sparse": dict(**h5sparse.Sparse(values=h5sparse.Blosc("zstd", 5, "bit"), selection=h5sparse.Deflate(6))),
    "blosc": dict(compression=32001, compression_opts=(0, 0, 0, 0, 5, 1, 1)),  # lz4, byte shuffle
    "lzf": dict(compression="lzf"),
}


def expected(name):
    """(dense values, boolean mask of the defined elements) of the dataset called `name`."""
    rng = np.random.default_rng(sum(map(ord, name)))
    values = rng.standard_normal(SHAPE).astype("f4")
    if not name.endswith("sparse"):
        return values, np.ones(SHAPE, bool)
    defined = rng.random(SHAPE) < 0.1
    defined[3:11, 5:20] = True  # a box across chunk borders, and chunks left empty elsewhere
    defined[24:, :] = False
    return np.where(defined, values, np.float32(FILL)), defined


def write(directory):
    os.makedirs(directory, exist_ok=True)
    for index, (libver, maxshape, chunks) in INDEXES.items():
        with h5py.File(os.path.join(directory, index + ".h5"), "w", libver=(libver, "v110" if libver == "earliest" else libver)) as f:
            f.attrs["written_by_hdf5"] = h5py.version.hdf5_version
            for kind, options in FILTERS.items():
                name = index + "_" + kind
                values, defined = expected(name)
                d = f.create_dataset(name, shape=SHAPE, maxshape=maxshape, chunks=chunks, dtype="f4",
                                     fillvalue=FILL, **options)
                if kind == "sparse":
                    rows, cols = np.nonzero(defined)
                    for r, c in zip(rows, cols):  # define exactly these elements
                        d[r, c] = values[r, c]
                else:
                    d[...] = values
    print(f"wrote {len(INDEXES)} files with HDF5 {h5py.version.hdf5_version} into {directory}")


def check_file(path, with_connector):
    problems = []
    with h5py.File(path, "r") as f:
        writer = f.attrs["written_by_hdf5"]
        for name, d in f.items():
            values, defined = expected(name)
            got = d[...]
            if not np.array_equal(got, values):
                problems.append(f"{name}: {np.count_nonzero(got != values)} values differ")
            if with_connector and name.endswith("sparse"):
                coords = h5sparse.get_defined(d)
                mask = np.zeros(SHAPE, bool)
                mask[tuple(np.asarray(coords).T)] = True
                if not np.array_equal(mask, defined):
                    problems.append(f"{name}: defined elements differ ({len(coords)} vs {defined.sum()})")
    return writer, problems


def check(directory, with_connector=True):
    failures = 0
    for index in INDEXES:
        path = os.path.join(directory, index + ".h5")
        writer, problems = check_file(path, with_connector)
        how = "with the connector" if with_connector else "with the plugin path only"
        print(f"{path}: written by HDF5 {writer}, read by HDF5 {h5py.version.hdf5_version} {how}: "
              + ("; ".join(problems) if problems else "OK"))
        failures += len(problems)
    if with_connector:
        env = dict(os.environ)
        env.pop("HDF5_VOL_CONNECTOR", None)
        child = subprocess.run([sys.executable, __file__, "check-plugin-only", directory], env=env)
        failures += child.returncode != 0
    return failures


if __name__ == "__main__":
    verb, directory = sys.argv[1], sys.argv[2]
    if verb == "write":
        if "HDF5_VOL_CONNECTOR" not in os.environ:
            sys.exit("files.py write needs the connector (run it through scripts/dev run)")
        write(directory)
    elif verb in ("check", "check-plugin-only"):
        sys.exit(1 if check(directory, with_connector=verb == "check") else 0)
    else:
        sys.exit(__doc__)
