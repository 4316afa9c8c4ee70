#!/usr/bin/env python3
"""What one touched chunk costs in coordinate I/O, against HDF5's own direct chunk calls: runs
build/bin/coo_chunk_cost (bench/coo/chunk_cost.c) and writes its table as this script's section
of bench/RESULTS.md. Issue 19's bound: a touched chunk costs at most 2x `H5Dwrite_chunk`.

    scripts/dev run python3 bench/coo/chunk_cost.py [--n 20000] [--reps 3]   # about two minutes

One element in each of N distinct random chunks of a 2^20 x 2^20 float32 dataset with
1024 x 1024 chunks. Writes: `h5sparse_dwrite_coo` of the N elements against N `H5Dwrite_chunk`
calls (40 bytes each, native VOL, same file format and chunk index); reads: `h5sparse_diterate_coo`
of everything against `H5Dchunk_iter` plus N `H5Dread_chunk`. Each includes creating (opening)
and closing the file. Instructions (callgrind, collecting only in the measured calls) decide the
ratio, since they do not move with the machine's load; wall time is the best of --reps
fresh processes, run in rounds. Files in /dev/shm. A run with fewer than 3 repetitions writes a
section only into the file --results-md names.
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import measured_phase  # noqa: E402
import results  # noqa: E402

REPS = 3
PAIRS = (("write", "coo-write", "direct-write", "`h5sparse_dwrite_coo`", "`H5Dwrite_chunk` x N"),
         ("read", "coo-read", "direct-read", "`h5sparse_diterate_coo`", "`H5Dchunk_iter` + `H5Dread_chunk` x N"))


def run(binary, mode, workdir, n, callgrind=False):
    return measured_phase.run([binary, mode, workdir, str(n)], workdir, callgrind)


def measure(binary, workdir, n, reps, callgrind):
    seconds = {mode: [] for _, a, b, _, _ in PAIRS for mode in (a, b)}
    for _ in range(reps):  # rounds: the write modes make the files the read modes read
        for _, a, b, _, _ in PAIRS:
            for mode in (a, b):
                seconds[mode].append(run(binary, mode, workdir, n))
    counts = {mode: run(binary, mode, workdir, n, callgrind=True) for mode in seconds} if callgrind else {}
    return {mode: min(s) for mode, s in seconds.items()}, counts


def table(n, best, counts):
    rows = []
    for op, ours, theirs, ours_name, theirs_name in PAIRS:
        row = [op, ours_name, theirs_name, f"{best[ours] / n * 1e6:.1f}", f"{best[theirs] / n * 1e6:.1f}",
               f"{best[ours] / best[theirs]:.2f}"]
        if counts:
            row += [f"{counts[ours] / n / 1e3:.1f}K", f"{counts[theirs] / n / 1e3:.1f}K",
                    f"**{counts[ours] / counts[theirs]:.2f}**"]
        rows.append(row)
    header = ["operation", "h5sparse", "HDF5", "h5sparse µs/chunk", "HDF5 µs/chunk", "wall ratio"]
    if counts:
        header += ["h5sparse instr/chunk", "HDF5 instr/chunk", "instruction ratio"]
    return results.md_table(header, rows, right_from=3)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000, help="touched chunks (default 20000)")
    ap.add_argument("--reps", type=int, default=REPS, help=f"repetitions, best of N (default {REPS})")
    results.add_argument(ap)
    args = ap.parse_args()
    build = os.environ.get("H5SPARSE_BUILD_DIR", os.path.join(results.REPO, "build"))
    binary = os.path.join(build, "bin", "coo_chunk_cost")
    callgrind = shutil.which("valgrind") is not None
    partial = args.reps < REPS
    head = results.preamble("Coordinate I/O: the cost of a touched chunk", partial)
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as workdir:
        best, counts = measure(binary, workdir, args.n, args.reps, callgrind)
    md = head + [
        f"One element in each of {args.n:,} distinct random chunks of a 2^20 x 2^20 float32 dataset, 1024 x 1024 "
        "chunks (`bench/coo/chunk_cost.c`). h5sparse: the connector's coordinate calls on a sparse dataset; HDF5: "
        "its direct chunk calls on a chunked dataset of the same shape, file format and chunk index with a deflate "
        "filter (so stored sizes may vary, as the sparse dataset's filter lets them; the bytes are never decoded), native "
        "VOL, 40 bytes a chunk (a stored one-element structured chunk is 30-40 bytes). Each includes creating "
        "(opening) and closing the file. Per chunk = the whole call divided by the chunks; wall time best of "
        f"{args.reps} fresh processes" + (", instructions from one callgrind run collecting only in the measured "
                                            "calls (they decide the ratio: wall time moves with the machine's load)"
                                            if counts else " (valgrind not installed: no instruction counts)") + ".",
        "", table(args.n, best, counts), "",
        "Issue 19's bound: a touched chunk costs at most 2x `H5Dwrite_chunk`. A write pays HDF5's chunk lookup "
        "(the chunk may hold elements already) and index insert plus the engine's grouping, merge and encoding; "
        "a read pays the index listing and one `H5Dread_chunk` a chunk plus the decoding and the row-major merge."]
    print("\n".join(md))
    results.write(args, "bench/coo/chunk_cost.py", "\n".join(md), quick=partial)


if __name__ == "__main__":
    main()
