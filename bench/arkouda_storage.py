#!/usr/bin/env python3
"""File size and write/read time of one mostly-fill Arkouda pdarray under each storage option
of python/arkouda_hdf5 (indicative timings: one run each, on whatever else the machine does).

    scripts/dev run python3 bench/arkouda_storage.py [--elements N] [--density D] [--dir DIR]
Prints a Markdown table. Runs with the connector when scripts/dev run sets it (it does)."""
import argparse
import os
import time
import warnings

import numpy as np

import arkouda_hdf5 as ah


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--elements", type=int, default=4_000_000)
    ap.add_argument("--density", type=float, default=0.01, help="fraction of non-zero elements")
    ap.add_argument("--dir", default="build/scratch")
    opts = ap.parse_args()
    os.makedirs(opts.dir, exist_ok=True)
    rng = np.random.default_rng(7)
    x = np.zeros(opts.elements)
    where = rng.choice(opts.elements, int(opts.elements * opts.density), replace=False)
    x[where] = rng.standard_normal(where.size)
    path = os.path.join(opts.dir, "arkouda_storage.h5")
    print(f"{opts.elements} float64, {opts.density:.1%} non-zero, connector: "
          f"{'on' if os.environ.get('HDF5_VOL_CONNECTOR') else 'off'}\n")
    print("| storage | file MB | write s | read s |\n| --- | ---: | ---: | ---: |")
    warnings.simplefilter("ignore", ah.OverwriteWarning)
    for label, storage in [("none", ah.Storage()), ("blosc (lz4, byte shuffle)", ah.Storage(compression="blosc")),
                           ("lzf", ah.Storage(compression="lzf")), ("sparse", ah.Storage(sparse="auto")),
                           ("sparse + blosc", ah.Storage(sparse="auto", compression="blosc")),
                           ("sparse + lzf", ah.Storage(sparse="auto", compression="lzf"))]:
        t = time.perf_counter()
        ah.to_hdf(path, {"x": x}, storage=storage)
        write = time.perf_counter() - t
        t = time.perf_counter()
        back = ah.read_hdf(path, "x")
        read = time.perf_counter() - t
        assert ah.same(back, x), label
        print(f"| {label} | {os.path.getsize(path) / 1e6:.2f} | {write:.2f} | {read:.2f} |")
    os.remove(path)


if __name__ == "__main__":
    main()
