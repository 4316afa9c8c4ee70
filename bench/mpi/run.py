"""Parallel write benchmark: P ranks (1, 2, 4) write a 1% and a 10% dense N x N float32 array
(N = 8192) into one file, as a sparse dataset and as the dense chunked equivalent with the same
codec (Blosc lz4, byte shuffle), 256 x 256 chunks; time of the slowest rank and file size. With
--phases, the sparse runs also report each rank's time per phase of the collective write
(H5SPARSE_MPI_TIMING), the inputs of the scaling model in README ("Parallel writes").

    H5SPARSE_BUILD_DIR=$PWD/build-mpi scripts/dev run python3 bench/mpi/run.py [--n 8192] [--phases]

Run it through scripts/dev with the parallel build (plugins and connector of build-mpi). The
numbers of a shared 2-core machine are indicative: 4 ranks are oversubscribed there. The table
replaces this script's section of bench/RESULTS.md (--results-md PATH: of another file; a run
with --n below 8192 writes one only there).
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import results  # noqa: E402


def run(ranks, kind, n, density, chunk, out_dir, phases):
    path = os.path.join(out_dir, f"{kind}_{ranks}_{density}.h5")
    env = dict(os.environ)
    if phases and kind == "sparse":
        env["H5SPARSE_MPI_TIMING"] = "1"
    r = subprocess.run(["mpirun", "--oversubscribe", "-n", str(ranks), sys.executable, os.path.join(HERE, "write.py"),
                        kind, str(n), str(density), str(chunk), path], env=env, capture_output=True, text=True,
                       timeout=1800)
    if r.returncode != 0:
        raise SystemExit(f"{kind} with {ranks} ranks failed:\n{r.stdout}\n{r.stderr}")
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"{kind} with {ranks} ranks printed no result:\n{r.stdout}\n{r.stderr}")
    result = json.loads(lines[-1])
    result["phases"] = [dict(re.findall(r"(\w+)=([\d.]+)", line)) for line in r.stderr.splitlines()
                        if line.startswith("h5sparse-mpi-timing")]
    os.remove(path)
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--chunk", type=int, default=256)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--densities", default="0.01,0.1")
    ap.add_argument("--phases", action="store_true")
    ap.add_argument("--out", default=os.path.join(os.getcwd(), "build-mpi", "bench"))
    results.add_argument(ap)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if "HDF5_VOL_CONNECTOR" not in os.environ:
        raise SystemExit("run through scripts/dev with H5SPARSE_BUILD_DIR pointing at the parallel build")
    md = results.preamble("Parallel writes", quick=args.n < 8192) + [
        f"P ranks (h5py-mpi, `driver=\"mpio\"`, one file) each write a band of rows of an {args.n} x {args.n} "
        "float32 array whose non-zeros (random positions) are the data, with one collective write: into a sparse "
        "dataset (`fill_is_undefined`, values Blosc lz4 + byte shuffle) and into the dense chunked equivalent (Blosc "
        f"lz4 + byte shuffle, HDF5's collective filtered write); {args.chunk} x {args.chunk} chunks; seconds of the "
        "slowest rank; file size (MB = 10^6 bytes). More ranks than cores are oversubscribed.",
        "",
        "| density | ranks | sparse write s | dense write s | sparse MB | dense MB |",
        "| --- | --- | --- | --- | --- | --- |"]
    print("\n".join(md), flush=True)
    measured = []
    for density in (float(d) for d in args.densities.split(",")):
        for ranks in (int(r) for r in args.ranks.split(",")):
            s = run(ranks, "sparse", args.n, density, args.chunk, args.out, args.phases)
            d = run(ranks, "dense", args.n, density, args.chunk, args.out, args.phases)
            measured += [s, d]
            md.append(f"| {density:.0%} | {ranks} | {s['write_s']:.2f} | {d['write_s']:.2f} | "
                      f"{s['file_bytes'] / 1e6:.1f} | {d['file_bytes'] / 1e6:.1f} |")
            print(md[-1], flush=True)
    if args.phases:
        phases = ["", "Per-rank phases of the sparse writes (`H5SPARSE_MPI_TIMING=1`; seconds, max over ranks):", ""]
        for s in measured:
            if s["kind"] != "sparse" or not s["phases"]:
                continue
            keys = [k for k in s["phases"][0] if k != "rank"]
            worst = {k: max(float(p.get(k, 0)) for p in s["phases"]) for k in keys}
            phases.append(f"- {s['density']:.0%} x {s['ranks']} ranks: " +
                          ", ".join(f"{k} {v:.2f}" for k, v in worst.items()))
        print("\n".join(phases), flush=True)
        md += phases
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(measured, f, indent=1)
    results.write(args, "bench/mpi/run.py", "\n".join(md), quick=args.n < 8192)


if __name__ == "__main__":
    main()
