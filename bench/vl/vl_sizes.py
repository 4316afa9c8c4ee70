#!/usr/bin/env python3
"""Variable-length data through h5py (issue 21): file size, write and read time of h5sparse's
VL chunks (`h5sparse.VarChunks()`, through the connector) against stock HDF5 VL datasets (gzip 6
and none), fixed-length strings of the longest length (gzip 6) and Arkouda-style values +
segments arrays (gzip 6), all in chunks of 65,536 elements.

  scripts/dev run python3 bench/vl/vl_sizes.py [--quick] [--reps N] [--results-md PATH]

Cases: 1 M English-like words, 1 M UUID strings, 100 k int32 sequences of length 0-100 (smooth:
consecutive values; random: uniform 32-bit), and the four cases of Lifeboat's 2024 VL benchmark
(10,000 uint8 vectors of length 1-10 or 1-100, random 0-127 or compressible 0, 1, 2, ...). File
size also after overwriting every value 10 times, in one open file and in reopen rounds. Write = create, write everything, close; read =
open, read everything, close; best of N in this process (HDF5 reads the connector variable
once, so every layout runs under the connector, which forwards ordinary datasets unchanged).
"""
import argparse
import os
import sys
import tempfile
import time
import uuid

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import results  # noqa: E402

os.environ.setdefault("HDF5_VOL_CONNECTOR", "h5sparse under_vol=0;under_info={}")
import h5py  # noqa: E402
import h5sparse  # noqa: E402

CHUNK = 65536
OVERWRITES = 10
GZIP = {"compression": "gzip", "compression_opts": 6}


def words(n, rng):
    letters = np.array(list("etaoinshrdlucmfwypvbgkjqxz"))
    p = rng.random(26) ** 2
    chars = rng.choice(letters, size=n * 10, p=p / p.sum())
    lengths = rng.integers(3, 11, n)
    return np.array(["".join(chars[i * 10:i * 10 + k]) for i, k in enumerate(lengths)], dtype=object)


def uuids(n, rng):
    return np.array([str(uuid.UUID(int=int(rng.integers(0, 2**63)) << 64 | int(rng.integers(0, 2**63))))
                     for _ in range(n)], dtype=object)


def sequences(n, rng, smooth):
    out = np.empty(n, dtype=h5py.vlen_dtype(np.int32))
    for i in range(n):
        k = int(rng.integers(0, 101))
        out[i] = (np.arange(k) + i).astype(np.int32) if smooth else rng.integers(-2**31, 2**31, k, dtype=np.int32)
    return out


# Lifeboat's published file sizes (benchmarks-2024-01-16, tables 5-8; h5stat of vl.c's files):
# stock VL (vltype.h5), stock VL with gzip 9 (vltype_comp.h5), and its structured-chunk emulation
# with gzip 9 (offset/length pairs and a blob as two datasets, vltype_struct_comp.h5).
LIFEBOAT_PUBLISHED = {(10, "random"): (425_640, 290_982, 69_296), (100, "random"): (884_392, 759_872, 468_922),
                      (10, "compressible"): (425_640, 290_961, 27_394),
                      (100, "compressible"): (884_392, 759_836, 42_848)}


def lifeboat_vectors(n, longest, rng, compressible):
    """Lifeboat's 2024 VL benchmark (vl.c): n uint8 vectors of random length 1 to `longest`,
    random values 0-127 or the compressible 0, 1, 2, ..."""
    out = np.empty(n, dtype=h5py.vlen_dtype(np.uint8))
    for i in range(n):
        k = int(rng.integers(1, longest + 1))
        out[i] = np.arange(k, dtype=np.uint8) if compressible else rng.integers(0, 128, k, dtype=np.uint8)
    return out


def values_segments(data):
    """Arkouda's layout: every value concatenated, and where each starts."""
    parts = [np.frombuffer(v.encode(), np.uint8) if isinstance(v, str) else v for v in data]
    lengths = np.array([len(p) for p in parts], np.int64)
    return np.concatenate(parts), np.concatenate([[0], np.cumsum(lengths)[:-1]])


def layouts(data, string):
    """Each layout's (create, overwrite): create writes `data` into a new file, overwrite(f, d)
    writes `d` (a rotation of data: the same total length) over it."""
    dtype = h5py.string_dtype() if string else h5py.vlen_dtype(data[0].dtype)
    chunk = (min(CHUNK, len(data)),)
    width = max(len(v) for v in data)

    def vl(**kw):
        return (lambda f: f.create_dataset("x", shape=data.shape, dtype=dtype, chunks=chunk, **kw).write_direct(data),
                lambda f, d: f["x"].write_direct(d))

    def fixed():
        return (lambda f: f.create_dataset("x", data=data.astype("S%d" % width), chunks=chunk, **GZIP),
                lambda f, d: f["x"].write_direct(d.astype("S%d" % width)))

    def fixed_sparse():
        """A fixed-size sparse dataset of the same values (strings of the longest length, sequences
        zero-padded to it) with VarChunks' data codec: the overwrite-growth baseline."""
        kw = h5sparse.Sparse(values=h5sparse.Blosc("zstd", 1 if string else 3, "byte"))
        if string:
            return (lambda f: f.create_dataset("x", data=data.astype("S%d" % width), chunks=chunk, **kw),
                    lambda f, d: f["x"].write_direct(d.astype("S%d" % width)))

        def padded(d):
            out = np.zeros((len(d), width), dtype=d[0].dtype)
            for i, v in enumerate(d):
                out[i, :len(v)] = v
            return out
        return (lambda f: f.create_dataset("x", data=padded(data), chunks=(chunk[0], width), **kw),
                lambda f, d: f["x"].write_direct(padded(d)))

    def segments():
        def create(f):
            values, starts = values_segments(data)
            f.create_dataset("values", data=values, chunks=(min(CHUNK * 8, len(values)),), **GZIP)
            f.create_dataset("segments", data=starts, chunks=chunk, **GZIP)

        def overwrite(f, d):
            values, starts = values_segments(d)
            f["values"][...] = values
            f["segments"][...] = starts
        return create, overwrite

    out = {"h5sparse VarChunks": vl(**h5sparse.VarChunks()), "stock VL, gzip 6": vl(**GZIP), "stock VL, none": vl()}
    if string:
        out["fixed-length, gzip 6"] = fixed()
    out["values + segments, gzip 6"] = segments()
    out["h5sparse fixed-size Sparse"] = fixed_sparse()
    return out


def read_all(f):
    return [f[name][...] for name in f]


def measure(path, write, reps):
    best_w = best_r = float("inf")
    for _ in range(reps):
        if os.path.exists(path):
            os.remove(path)
        t = time.perf_counter()
        with h5py.File(path, "w") as f:
            write(f)
        best_w = min(best_w, time.perf_counter() - t)
        t = time.perf_counter()
        with h5py.File(path, "r") as f:
            read_all(f)
        best_r = min(best_r, time.perf_counter() - t)
    return os.path.getsize(path), best_w, best_r


def growth(path, data, create, overwrite, rounds=OVERWRITES):
    """File sizes after overwriting every value `rounds` times in one open file, and in as many
    reopen-and-overwrite rounds (HDF5 frees a replaced chunk for reuse, but not global-heap
    space while the file stays open)."""
    sizes = []
    for reopen in (False, True):
        if os.path.exists(path):
            os.remove(path)
        with h5py.File(path, "w") as f:
            create(f)
            for k in range(1, rounds + 1) if not reopen else ():
                overwrite(f, np.roll(data, k))
        for k in range(1, rounds + 1) if reopen else ():
            with h5py.File(path, "a") as f:
                overwrite(f, np.roll(data, k))
        sizes.append(os.path.getsize(path))
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a tenth of the elements, one repetition")
    results.add_argument(ap)
    args = ap.parse_args()
    reps, scale = (1, 10) if args.quick else (args.reps, 1)
    rng = np.random.default_rng(21)
    n, m = 1_000_000 // scale, 100_000 // scale
    cases = [(f"{n:,} words", words(n, rng), True), (f"{n:,} UUIDs", uuids(n, rng), True),
             (f"{m:,} int32 sequences, smooth", sequences(m, rng, True), False),
             (f"{m:,} int32 sequences, random", sequences(m, rng, False), False)]
    lifeboat = {f"Lifeboat: 10,000 uint8 vectors, length 1-{longest}, {kind}": (longest, kind)
                for kind in ("random", "compressible") for longest in (10, 100)}
    cases += [(name, lifeboat_vectors(10_000, longest, rng, kind == "compressible"), False)
              for name, (longest, kind) in lifeboat.items()]
    rows, published = [], []
    with tempfile.TemporaryDirectory() as workdir:
        path = os.path.join(workdir, "vl.h5")
        for name, data, string in cases:
            measured = {layout: measure(path, create, reps) + tuple(growth(path, data, create, overwrite))
                        for layout, (create, overwrite) in layouts(data, string).items()}
            ours = measured["h5sparse VarChunks"]
            if name in lifeboat:
                published.append([name] + [f"{b:,}" for b in LIFEBOAT_PUBLISHED[lifeboat[name]]] +
                                 [f"{measured[k][0]:,}" for k in ("stock VL, none", "stock VL, gzip 6")] +
                                 [f"{ours[0]:,}"])
            for layout, (size, w, r, open_size, reopen_size) in measured.items():
                rows.append([name, layout, f"{size:,}", f"{size / ours[0]:.2f}", f"{w:.3f}", f"{r:.3f}",
                             f"{open_size:,}", f"{reopen_size:,}"])
    head = results.preamble("Variable-length data through h5py", args.quick)
    md = head + [
        f"Chunks of {CHUNK:,} elements (Lifeboat's cases: one chunk, as its vl.c); write and read through h5py, "
        f"best of {reps}; size ratio against h5sparse's VarChunks (lengths Blosc zstd 1, byte shuffle; "
        f"data the same for strings, zstd 3 for sequences). Last two columns: file bytes after overwriting "
        f"every value {OVERWRITES} times in one open file, and after {OVERWRITES} rounds of reopening and "
        f"overwriting.", "",
        results.md_table(["case", "layout", "file bytes", "size / h5sparse", "write s", "read s",
                          f"after {OVERWRITES} overwrites", f"after {OVERWRITES} reopen + overwrite"], rows,
                         right_from=2), "",
        "Lifeboat's cases beside its published file sizes (its tables 5-8: stock VL, stock VL with gzip 9, "
        "and its structured-chunk emulation with gzip 9; their data are drawn alike, not the same):", "",
        results.md_table(["case", "published stock VL", "published gzip 9", "published emulation, gzip 9",
                          "stock VL, none", "stock VL, gzip 6", "h5sparse VarChunks"], published, right_from=1)]
    print("\n".join(md))
    results.write(args, "bench/vl/vl_sizes.py", "\n".join(md), quick=args.quick)


if __name__ == "__main__":
    main()
