#!/usr/bin/env python3
"""File size and write/read time of one mostly-fill Arkouda pdarray under each storage option
of python/arkouda_hdf5 (indicative timings: one run each, on whatever else the machine does).

    scripts/dev run python3 bench/arkouda_storage.py [--elements N] [--density D] [--dir DIR]
Prints a Markdown table and writes it as this script's section of bench/RESULTS.md
(--results-md PATH: of another file; a run with other --elements or --density writes a section
only there). Runs with the connector when scripts/dev run sets it (it does)."""
import argparse
import os
import sys
import time
import warnings

import numpy as np

import arkouda_hdf5 as ah

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import results  # noqa: E402

ELEMENTS, DENSITY = 4_000_000, 0.01


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--elements", type=int, default=ELEMENTS)
    ap.add_argument("--density", type=float, default=DENSITY, help="fraction of non-zero elements")
    ap.add_argument("--dir", default="build/scratch")
    results.add_argument(ap)
    opts = ap.parse_args()
    partial = (opts.elements, opts.density) != (ELEMENTS, DENSITY)
    md = results.preamble("Arkouda storage options", partial)
    os.makedirs(opts.dir, exist_ok=True)
    rng = np.random.default_rng(7)
    x = np.zeros(opts.elements)
    where = rng.choice(opts.elements, int(opts.elements * opts.density), replace=False)
    x[where] = rng.standard_normal(where.size)
    path = os.path.join(opts.dir, "arkouda_storage.h5")
    md += [f"One mostly-fill Arkouda pdarray (`python/arkouda_hdf5`), {opts.elements:,} float64, {opts.density:.1%} "
           f"non-zero, written with `to_hdf` and read back with `read_hdf` under each storage option (connector "
           f"{'on' if os.environ.get('HDF5_VOL_CONNECTOR') else 'off'}; one run each, indicative; file in {opts.dir}).",
           "", "| storage | file MB | write s | read s |", "| --- | ---: | ---: | ---: |"]
    print("\n".join(md), flush=True)
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
        md.append(f"| {label} | {os.path.getsize(path) / 1e6:.2f} | {write:.2f} | {read:.2f} |")
        print(md[-1], flush=True)
    os.remove(path)
    results.write(opts, "bench/arkouda_storage.py", "\n".join(md), quick=partial)


if __name__ == "__main__":
    main()
