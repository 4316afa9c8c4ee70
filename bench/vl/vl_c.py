#!/usr/bin/env python3
"""Variable-length data from C: H5Dwrite and H5Dread of char* strings and hvl_t sequences into
a VarChunks dataset through the connector, against stock HDF5 VL datasets (no filter, gzip 6).
Runs build/bin/vl_c (bench/vl/vl_c.c) and writes its table as this script's section of
bench/RESULTS.md. Issue 21's target: write and read at least 2x faster than stock VL from C.

    scripts/dev run python3 bench/vl/vl_c.py [--reps 3]   # about ten minutes

Cases as bench/vl/vl_sizes.py's: 1 M English-like words, 100 k int32 sequences of length 0-100
(smooth). Wall time: the best of --reps fresh processes, in rounds (a write makes the file its
read reads), files in /dev/shm. Instructions (callgrind, collecting only in the measured call,
one thread) decide the ratios when wall time moves with the machine's load. VarChunks also
with zstd 1, zstd 5 and LZ4 in its data section, beside its choice by datatype.
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
CASES = (("1,000,000 words", "words", 1_000_000), ("100,000 int32 sequences", "sequences", 100_000))
LAYOUTS = (("h5sparse VarChunks (strings zstd 1, sequences zstd 3)", "varchunks"),
           ("h5sparse VarChunks, zstd 1", "varchunks-zstd1"), ("h5sparse VarChunks, zstd 5", "varchunks-zstd5"),
           ("h5sparse VarChunks, LZ4", "varchunks-lz4"), ("stock VL, none", "stock"), ("stock VL, gzip 6", "gzip"))


def run(binary, layout, op, kind, n, workdir, callgrind=False):
    return measured_phase.run([binary, layout, op, kind, workdir, str(n)], workdir, callgrind)


def measure(binary, workdir, reps, callgrind):
    """{(kind, layout): {"write": s, "read": s, "size": bytes, "write_ir": n, "read_ir": n}}"""
    got = {}
    for _ in range(reps):
        for _, kind, n in CASES:
            for _, layout in LAYOUTS:
                m = got.setdefault((kind, layout), {"write": [], "read": []})
                for op in ("write", "read"):
                    m[op].append(run(binary, layout, op, kind, n, workdir))
                m["size"] = os.path.getsize(os.path.join(workdir, f"{layout}-{kind}.h5"))
    for (kind, layout), m in got.items():
        m["write"], m["read"] = min(m["write"]), min(m["read"])
        if callgrind:
            n = next(n for _, k, n in CASES if k == kind)
            for op in ("write", "read"):
                m[op + "_ir"] = run(binary, layout, op, kind, n, workdir, callgrind=True)
    return got


def table(got, callgrind):
    rows = []
    for case, kind, _ in CASES:
        for name, layout in LAYOUTS:
            m, stock = got[(kind, layout)], got[(kind, "stock")]
            row = [case, name, f"{m['size']:,}", f"{m['write']:.3f}", f"{m['read']:.3f}",
                   f"{stock['write'] / m['write']:.2f}", f"{stock['read'] / m['read']:.2f}"]
            if callgrind:
                row += [f"{m['write_ir'] / 1e6:,.0f}M", f"{m['read_ir'] / 1e6:,.0f}M",
                        f"**{stock['write_ir'] / m['write_ir']:.2f}**", f"**{stock['read_ir'] / m['read_ir']:.2f}**"]
            rows.append(row)
    header = ["case", "layout", "file bytes", "write s", "read s", "write speed-up vs stock", "read speed-up vs stock"]
    if callgrind:
        header += ["write instr", "read instr", "write speed-up (instr)", "read speed-up (instr)"]
    return results.md_table(header, rows, right_from=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=REPS, help=f"repetitions, best of N (default {REPS})")
    results.add_argument(ap)
    args = ap.parse_args()
    build = os.environ.get("H5SPARSE_BUILD_DIR", os.path.join(results.REPO, "build"))
    binary = os.path.join(build, "bin", "vl_c")
    callgrind = shutil.which("valgrind") is not None
    partial = args.reps < REPS
    head = results.preamble("Variable-length data from C", partial)
    with tempfile.TemporaryDirectory(dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as workdir:
        got = measure(binary, workdir, args.reps, callgrind)
    md = head + [
        "One 1-D dataset, chunks of 65,536 elements, one `H5Dwrite` of `char *` strings or `hvl_t` sequences and "
        "one `H5Dread` back (checked against what was written) plus `H5Treclaim`, file creation (opening) and "
        "closing included (`bench/vl/vl_c.c`). VarChunks: lengths Blosc zstd 1, data Blosc, byte shuffle, through "
        "the connector; stock: HDF5's VL datasets, native VOL. Speed-up = stock VL without filter over the layout "
        f"(> 1: faster); wall time best of {args.reps} fresh processes" +
        (", instructions from one callgrind run on one thread collecting only in the measured call" if callgrind else
         " (valgrind not installed: no instruction counts)") + ".",
        "", table(got, callgrind), "",
        "Issue 21's target: write and read at least 2x faster than stock VL from C. Stock VL without a filter "
        "compresses nothing; a VarChunks write spends most of its instructions in its data section's codec."]
    print("\n".join(md))
    results.write(args, "bench/vl/vl_c.py", "\n".join(md), quick=partial)


if __name__ == "__main__":
    main()
