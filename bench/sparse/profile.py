#!/usr/bin/env python3
"""Instruction counts of one density-sweep cell (callgrind): deterministic, unlike wall time on a
shared machine.

    scripts/dev run python3 bench/sparse/profile.py --density 0.1 --codec none
    scripts/dev run python3 bench/sparse/profile.py --density 0.01 --ops readbuf --keep

Writes the sweep's input for one density (density.prepare, same seed), then runs each operation
(write, readbuf) of the sparse layout (`--layout dense` for the native one) in its own process
under `valgrind --tool=callgrind`, collecting only inside the HDF5 calls a storage layer pays
for (file create/open/close, dataset create/open/write/read/close), so Python and numpy stay out.
Prints the instructions per operation; `--keep` leaves the callgrind.out files (for
callgrind_annotate) in the work directory.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import density  # noqa: E402

COLLECTED = ("H5Fcreate", "H5Fopen", "H5Fclose", "H5Dcreate2", "H5Dcreate_anon", "H5Dopen2", "H5Dwrite",
             "H5Dread", "H5Dclose")


def totals(path):
    with open(path) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError(f"no callgrind totals in {path}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--density", type=float, default=0.1)
    parser.add_argument("--codec", choices=density.CODECS, default="none")
    parser.add_argument("--layout", choices=("sparse", "dense"), default="sparse")
    parser.add_argument("--ops", default="write,readbuf")
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--chunk", type=int, default=256)
    parser.add_argument("--dir", default=os.path.join(os.path.dirname(os.path.dirname(HERE)), "build", "scratch",
                                                      "profile"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    tag = density.density_tag(args.density)
    if not os.path.exists(os.path.join(args.dir, f"{tag}_dense.npy")):
        density.prepare(args.dir, args.n, [args.density], 10)
    path = os.path.join(args.dir, f"{args.layout}-{args.codec}-{tag}.h5")
    job = {"workdir": args.dir, "tag": tag, "file": path, "n": args.n, "chunk": args.chunk,
           "layout": args.layout, "codec": args.codec}
    env = dict(os.environ)
    if args.layout == "dense":
        env.pop("HDF5_VOL_CONNECTOR", None)
    ops = args.ops.split(",")
    if "write" not in ops and not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(HERE, "density.py"), "worker", json.dumps(dict(job, op="write"))],
                       env=env, check=True, capture_output=True)
    for op in ops:
        out = os.path.join(args.dir, f"callgrind.{args.layout}-{args.codec}-{tag}-{op}.out")
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--callgrind-out-file={out}"]
        cmd += [f"--toggle-collect={name}" for name in COLLECTED]
        cmd += [sys.executable, os.path.join(HERE, "density.py"), "worker", json.dumps(dict(job, op=op))]
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        print(f"{args.layout} {args.codec} {args.density * 100:g}% {op}: {totals(out):,} instructions"
              + (f"  ({out})" if args.keep else ""))
        if not args.keep:
            os.remove(out)


if __name__ == "__main__":
    main()
