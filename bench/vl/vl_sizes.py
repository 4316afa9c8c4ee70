#!/usr/bin/env python3
"""Variable-length data through h5py (issue 21): file size, write and read time of h5sparse's
VL chunks (`h5sparse.VarChunks()`, through the connector) against stock HDF5 VL datasets (gzip 6
and none), fixed-length strings of the longest length (gzip 6) and Arkouda-style values +
segments arrays (gzip 6), all in chunks of 65,536 elements.

  scripts/dev run python3 bench/vl/vl_sizes.py [--quick] [--reps N] [--results-md PATH]

Cases: 1 M English-like words, 1 M UUID strings, 100 k int32 sequences of length 0-100 (smooth:
consecutive values; random: uniform 32-bit). Write = create, write everything, close; read =
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


def values_segments(data):
    """Arkouda's layout: every value concatenated, and where each starts."""
    parts = [np.frombuffer(v.encode(), np.uint8) if isinstance(v, str) else v for v in data]
    lengths = np.array([len(p) for p in parts], np.int64)
    return np.concatenate(parts), np.concatenate([[0], np.cumsum(lengths)[:-1]])


def writers(data, string):
    dtype = h5py.string_dtype() if string else h5py.vlen_dtype(np.int32)
    chunk = (min(CHUNK, len(data)),)

    def vl(**kw):
        return lambda f: f.create_dataset("x", shape=data.shape, dtype=dtype, chunks=chunk, **kw).write_direct(data)

    def fixed(f):
        f.create_dataset("x", data=data.astype("S%d" % max(len(v) for v in data)), chunks=chunk, **GZIP)

    def segments(f):
        values, starts = values_segments(data)
        f.create_dataset("values", data=values, chunks=(min(CHUNK * 8, len(values)),), **GZIP)
        f.create_dataset("segments", data=starts, chunks=chunk, **GZIP)

    out = {"h5sparse VarChunks": vl(**h5sparse.VarChunks()), "stock VL, gzip 6": vl(**GZIP), "stock VL, none": vl()}
    if string:
        out["fixed-length, gzip 6"] = fixed
    out["values + segments, gzip 6"] = segments
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
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        path = os.path.join(workdir, "vl.h5")
        for name, data, string in cases:
            measured = {layout: measure(path, write, reps) for layout, write in writers(data, string).items()}
            ours = measured["h5sparse VarChunks"]
            for layout, (size, w, r) in measured.items():
                rows.append([name, layout, f"{size:,}", f"{size / ours[0]:.2f}", f"{w:.3f}", f"{r:.3f}"])
    head = results.preamble("Variable-length data through h5py", args.quick)
    md = head + [
        f"Chunks of {CHUNK:,} elements; write and read through h5py, best of {reps}; size ratio against "
        "h5sparse's VarChunks (lengths deflate 6, data Blosc zstd 5 byte shuffle).", "",
        results.md_table(["case", "layout", "file bytes", "size / h5sparse", "write s", "read s"], rows,
                         right_from=2)]
    print("\n".join(md))
    results.write(args, "bench/vl/vl_sizes.py", "\n".join(md), quick=args.quick)


if __name__ == "__main__":
    main()
