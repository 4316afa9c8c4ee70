#!/usr/bin/env python3
"""Appending scattered elements: runs build/bin/append_bench (bench/sparse/append_bench.c) and
writes its table as this script's section of bench/RESULTS.md.

    scripts/dev run python3 bench/sparse/append.py [--reps 3]     # about a minute

1,000 writes, each growing a 1,024-column float32 dataset with an unlimited first dimension by
16 rows and writing 1,000 distinct random elements of them with one point selection; sparse
through the connector against dense chunked, no compression and deflate 1, plain and SWMR
(details at the top of append_bench.c). Files in /dev/shm. A run with fewer than 3 repetitions
writes a section only into the file --results-md names.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import results  # noqa: E402

REPS = 3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=REPS, help=f"repetitions, best of N (default {REPS})")
    results.add_argument(ap)
    args = ap.parse_args()
    build = os.environ.get("H5SPARSE_BUILD_DIR", os.path.join(results.REPO, "build"))
    partial = args.reps < REPS
    head = results.preamble("Appending scattered elements", partial)
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as workdir:
        p = subprocess.run([os.path.join(build, "bin", "append_bench"), workdir, str(args.reps)],
                           capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"append_bench failed:\n{p.stderr[-3000:]}")
    md = head + [
        "1,000 writes, each growing a 1,024-column float32 dataset with an unlimited first dimension by 16 rows and "
        "writing 1,000 distinct random elements of them (6.1%) with one point selection: 1,000,000 elements. Chunks "
        "64 x 1,024 (four writes share a chunk). Sparse through the connector, dense = native chunked dataset, same "
        "chunks and codec (deflate 1: on both sections of the sparse chunks); \"plain\": one file, closed at the "
        "end; \"swmr\": latest format, SWMR-write mode, `H5Dflush` after every write. Time = create + writes + "
        f"close, best of {args.reps}, one process (`build/bin/append_bench`), files in /dev/shm; both datasets are "
        "read back and checked.", "", p.stdout.strip()]
    print("\n".join(md), flush=True)
    results.write(args, "bench/sparse/append.py", "\n".join(md), quick=partial)


if __name__ == "__main__":
    main()
