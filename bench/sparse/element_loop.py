#!/usr/bin/env python3
"""Element-wise reads, `dset[i, j]` in a Python loop: what HDF5's chunk cache is for.

    scripts/dev run python3 bench/sparse/element_loop.py [--reps 5] [--densities 0.1,1]

The density sweep's 4096x4096 float32 dataset (256x256 chunks, uncompressed and blosc-lz4, same
inputs and seed as density.py), read one element per call in four patterns of 256 reads each:
along a row of one chunk, down a column of one chunk, at random inside one chunk, and 256
random elements of the whole dataset. Layouts: sparse through the connector (its decoded-chunk
cache, budget = the dataset's rdcc_nbytes, 1 MiB by default), sparse with rdcc_nbytes=0 (every
read decodes its chunk), and dense through stock HDF5 (its chunk cache, 1 MiB). Each layout in
its own process; microseconds per read, best of --reps passes; files in /dev/shm. The table
replaces this script's section of bench/RESULTS.md (--results-md PATH: of another file; a run
with other --reps or --densities writes a section only there).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import density  # noqa: E402
import results  # noqa: E402

N, CHUNK, READS = 4096, 256, 256
PATTERNS = ("row in a chunk", "column in a chunk", "random in a chunk", "random in the dataset")
LAYOUTS = (("sparse", None), ("sparse", 0), ("dense", None))


def coordinates():
    rng = np.random.default_rng(5)
    r0, c0 = 5 * CHUNK, 9 * CHUNK  # one chunk inside the dataset
    k = np.arange(READS)
    return {
        PATTERNS[0]: np.stack([np.full(READS, r0 + 17), c0 + k], axis=1),
        PATTERNS[1]: np.stack([r0 + k, np.full(READS, c0 + 40)], axis=1),
        PATTERNS[2]: np.stack([r0 + rng.integers(0, CHUNK, READS), c0 + rng.integers(0, CHUNK, READS)], axis=1),
        PATTERNS[3]: rng.integers(0, N, (READS, 2)),
    }


def worker(job):
    import h5py
    density._load_plugins(job["layout"], job["codec"])
    expected = np.load(job["dense"], mmap_mode="r")
    kwargs = {} if job["rdcc"] is None else {"rdcc_nbytes": job["rdcc"]}
    out = {}
    with h5py.File(job["file"], "r", **kwargs) as f:
        d = f["x"]
        for name, pts in coordinates().items():
            best = float("inf")
            for _ in range(job["reps"]):
                got = np.empty(READS, np.float32)
                t0 = time.perf_counter()
                for k, (i, j) in enumerate(pts):
                    got[k] = d[i, j]
                best = min(best, time.perf_counter() - t0)
                if not np.array_equal(got, expected[pts[:, 0], pts[:, 1]]):
                    raise SystemExit(f"{job['file']}: {name} read wrong values")
            out[name] = best / READS * 1e6
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--densities", default="0.1,1")
    results.add_argument(ap)
    args = ap.parse_args()
    partial = (args.reps, args.densities) != (ap.get_default("reps"), ap.get_default("densities"))
    head = results.preamble("Element-wise reads", partial)
    densities = [float(x) for x in args.densities.split(",")]
    workdir = tempfile.mkdtemp(prefix="h5sparse-elements-", dir="/dev/shm")
    density.prepare(workdir, N, densities, 10)
    rows = []
    for d in densities:
        tag = density.density_tag(d)
        for codec in density.CODECS:
            per_layout = {}
            for layout, rdcc in LAYOUTS:
                path = os.path.join(workdir, f"{layout}_{codec}_{tag}.h5")
                env = dict(os.environ)
                if layout == "dense":
                    env.pop("HDF5_VOL_CONNECTOR", None)
                base = {"workdir": workdir, "tag": tag, "n": N, "chunk": CHUNK, "layout": layout, "codec": codec,
                        "file": path}
                if not os.path.exists(path):
                    subprocess.run([sys.executable, os.path.join(HERE, "density.py"), "worker",
                                    json.dumps(dict(base, op="write"))], env=env, check=True, capture_output=True)
                job = dict(base, rdcc=rdcc, reps=args.reps, dense=os.path.join(workdir, f"{tag}_dense.npy"))
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "worker", json.dumps(job)], env=env,
                                   capture_output=True, text=True)
                if p.returncode:
                    raise SystemExit(p.stderr[-2000:])
                per_layout[(layout, rdcc)] = json.loads(p.stdout.strip().splitlines()[-1])
            for name in PATTERNS:
                s, s0, dn = (per_layout[k][name] for k in LAYOUTS)
                rows.append(f"| {codec} | {d * 100:g}% | {name} | {s:.1f} | {s0:.1f} | {dn:.1f} | {s / dn:.2f} | "
                            f"{s0 / s:.1f}x |")
    md = head + [
        f"{READS} `dset[i, j]` reads in a Python loop, along a row of one {CHUNK}x{CHUNK} chunk, down its column, at "
        f"random inside it, and at random over the whole {N}x{N} float32 dataset; sparse through the connector with "
        "its decoded-chunk cache (1 MiB, h5py's default `rdcc_nbytes`), the same file with `rdcc_nbytes=0`, and "
        "dense through stock HDF5 with its chunk cache. Microseconds per read, best of "
        f"{args.reps}, one process per layout; cache gain = `rdcc_nbytes=0` / cached.",
        "",
        "| codec | density | 256 reads | sparse | sparse, rdcc_nbytes=0 | dense | sparse/dense | cache gain |",
        "|---|---|---|---:|---:|---:|---:|---:|"] + rows
    print("\n".join(md))
    results.write(args, "bench/sparse/element_loop.py", "\n".join(md), quick=partial)
    subprocess.run(["rm", "-rf", workdir], check=False)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
    else:
        main()
