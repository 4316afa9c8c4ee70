#!/usr/bin/env python3
"""A sparse matrix read into scipy.sparse CSR and written from it, as anndata users move theirs:
h5sparse's `to_scipy(dset, format="csr")` and `from_scipy(dset, matrix)` against anndata's CSR
layout (data / indices / indptr read whole and handed to `scipy.sparse.csr_array`; written from
the matrix's arrays), with h5sparse's `read_coo` of the same elements beside.

    H5SPARSE_BUILD_DIR=$PWD/build-release scripts/dev run python3 bench/coo/scipy_io.py
    scripts/dev run python3 bench/coo/scipy_io.py --case 4096/1%/256 --reps 1 --results-md /dev/shm/R.md

Cases are bench/coo/run.py's (SIDE/ELEMENTS/CHUNK, the same inputs and files); codecs none and
blosc-lz4. Every measurement is a fresh process (open or create, read or write, close; imports
and the matrix to write made before the clock), best of --reps; "memory" = the peak RSS (VmHWM)
the call added to the process, "result" = the bytes of the arrays a read returned. Writes a
section of bench/RESULTS.md (--results-md PATH: of another file; runs with other cases or fewer
than 3 repetitions write none there unless given one).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from machine import Quiet, back_free_memory, busy_sentence, peak_rss, reset_peak_rss  # noqa: E402
import layouts  # noqa: E402
import results  # noqa: E402
import run  # noqa: E402

MiB = 1 << 20
CASES = ["4096/1%/256", "4096/10%/256", "65536/0.1%/1024", "65536/1%/1024", "1048576/2e6/16384"]
READS = {"h5sparse": "h5sparse `to_scipy` CSR", "h5sparse-coo": "h5sparse `read_coo`",
         "csr": "anndata CSR into `csr_array`"}
WRITES = {"h5sparse-write": "h5sparse `from_scipy`", "csr-write": "anndata CSR write"}


def read(kind, path, codec):
    """The read of one kind; returns the arrays it made."""
    import h5py
    if kind == "csr":
        import scipy.sparse
        with h5py.File(path, "r") as f:
            g = f["x"]
            m = scipy.sparse.csr_array((g["data"][...], g["indices"][...], g["indptr"][...]),
                                       shape=tuple(g.attrs["shape"]))
        return m.data, m.indices, m.indptr
    import h5sparse
    with h5py.File(path, "r") as f:
        if kind == "h5sparse-coo":
            return h5sparse.read_coo(f["x"])
        m = h5sparse.to_scipy(f["x"], format="csr")
        return m.data, m.indices, m.indptr


def layout_of(kind, job):
    return layouts.LAYOUTS["h5sparse" if kind.startswith("h5sparse") else "csr"](job["spec"], job["codec"])


def stored(kind, path):
    """The elements a write stored (counted after the clock)."""
    import h5py
    with h5py.File(path, "r") as f:
        if kind == "csr-write":
            return len(f["x/data"])
        import h5sparse
        return h5sparse.to_scipy(f["x"], format="csr").nnz


def worker(job):
    kind, path = job["kind"], job["file"]
    layout = layout_of(kind, job)  # the plugins load
    import scipy.sparse  # imported before the clock, as h5py
    if kind in WRITES:  # the matrix to write, made before the clock
        coords, values = np.load(job["coords"]), np.load(job["values"])
        matrix = scipy.sparse.csr_array((values, (coords[:, 0], coords[:, 1])), shape=job["spec"]["shape"])
        del coords, values
        reset_peak_rss()  # making the matrix peaked higher than a write may
    base = peak_rss()
    t0 = time.perf_counter()
    if kind in WRITES:
        layout.write_matrix(path, matrix)
        elapsed, memory = time.perf_counter() - t0, peak_rss() - base
        print(json.dumps({"time": elapsed, "memory": memory, "result": 0, "count": stored(kind, path)}))
        return
    arrays = read(kind, path, job["codec"])
    elapsed = time.perf_counter() - t0
    print(json.dumps({"time": elapsed, "memory": peak_rss() - base, "result": sum(a.nbytes for a in arrays),
                      "count": len(arrays[-1]) if kind == "h5sparse-coo" else len(arrays[0])}))


def measure(job, env, quiet):
    quiet.wait()
    back_free_memory()
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "worker", json.dumps(job)], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{job['kind']} {job['codec']} {job['case']}: {p.stderr.strip()[-500:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_cases(cases, reps, workdir, quiet):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLOSC_")}
    env["BLOSC_NTHREADS"] = "1"
    got = {}
    for case in cases:
        run.log(f"inputs of {case['name']}: {case['nnz']:,} elements")
        run.prepare(workdir, case, 2)
        base = os.path.join(workdir, run.case_tag(case))
        coords, values = np.load(base + "_coords.npy"), np.load(base + "_values.npy")
        spec = {"shape": case["shape"], "chunk": case["chunk"]}
        for codec in run.CODECS:
            files = {}
            for layout in ("h5sparse", "csr"):
                files[layout] = f"{base}_{layout}_{codec}.h5"
                layouts.LAYOUTS[layout](spec, codec).write(files[layout], coords, values)
            for rep in range(reps):
                for kind in list(READS) + list(WRITES):
                    job = {"kind": kind, "codec": codec, "case": case["name"], "spec": spec}
                    if kind in WRITES:
                        job.update(file=f"{base}_{kind}_{codec}.h5", coords=base + "_coords.npy",
                                   values=base + "_values.npy")
                    else:
                        job["file"] = files["csr" if kind == "csr" else "h5sparse"]
                    out = measure(job, env, quiet)
                    if kind in WRITES:
                        os.remove(job["file"])
                    if out["count"] != case["nnz"]:
                        raise SystemExit(f"{kind} {codec} {case['name']}: {out['count']} of {case['nnz']} elements")
                    r = got.setdefault((case["name"], codec, kind), {"time": [], "memory": []})
                    r["time"].append(out["time"])
                    r["memory"].append(out["memory"])
                    r["result"] = out["result"]
            for path in files.values():
                os.remove(path)
        run.log(f"{case['name']} done")
    return got


def table(cases, got, kinds, ours, theirs, ratio, with_result):
    """One row per case and codec: each kind's time, ours / theirs (headed `ratio`), each kind's added
    memory."""
    rows = []
    for case in cases:
        for codec in run.CODECS:
            v = {k: got[(case["name"], codec, k)] for k in kinds}
            t = {k: min(v[k]["time"]) for k in kinds}
            m = {k: min(v[k]["memory"]) for k in kinds}
            rows.append([case["label"], codec] + [f"{t[k] * 1000:,.1f}" for k in kinds]
                        + [f"{t[ours] / t[theirs]:.2f}"]
                        + [f"{m[k] / MiB:,.0f}" + (f" ({v[k]['result'] / MiB:,.0f})" if with_result else "")
                           for k in kinds])
    header = ["case", "codec"] + [f"{kinds[k]}, ms" for k in kinds] + [ratio] + [
        f"{kinds[k]}: memory" + (" (result)" if with_result else "") + ", MiB" for k in kinds]
    return results.md_table(header, rows)


def report(cases, got, reps, quiet, elapsed):
    return "\n".join([
        f"float32 values, inputs as bench/coo/run.py's, files in /dev/shm; best of {reps} fresh processes; "
        "memory = the peak RSS a call added, result = the bytes of the arrays a read returned. `to_scipy` gets "
        "the CSR arrays written by the library (`h5sparse_dread_csr`: int32 column indices and row counts, "
        "8 bytes an element); `read_coo` returns uint64 coordinates (20 bytes an element).", "",
        "**Reads** (open, read, close)", "",
        table(cases, got, READS, "h5sparse", "csr", "to_scipy / anndata CSR", True), "",
        "**Writes** of a `csr_array` into a new file (create, write, close): `from_scipy` writes a band of "
        "chunk rows at a time; anndata's layout stores int32 indices and int64 row pointers.", "",
        table(cases, got, WRITES, "h5sparse-write", "csr-write", "from_scipy / anndata CSR", False), "",
        f"Run time: {elapsed:.0f} s. {busy_sentence(quiet.busy)}".rstrip(), ""])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", help="SIDE/ELEMENTS/CHUNK (repeatable; default: " +
                    ", ".join(CASES).replace("%", "%%") + ")")
    ap.add_argument("--reps", type=int, default=3, help="repetitions (best of N; default 3)")
    ap.add_argument("--quiet-wait", type=float, default=1.0, help="seconds to wait for quiet before each measurement")
    ap.add_argument("--quiet-budget", type=float, default=120.0, help="seconds of such waiting in all")
    results.add_argument(ap)
    args = ap.parse_args()
    cases = [run.parse_case(c) for c in (args.case or CASES)]
    partial = bool(args.case and args.case != CASES) or args.reps < 3
    quiet = Quiet(args.quiet_wait, args.quiet_budget)
    workdir = tempfile.mkdtemp(prefix="h5sparse-bench-scipy-", dir="/dev/shm")
    t0 = time.time()
    try:
        got = run_cases(cases, args.reps, workdir, quiet)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    md = "\n".join(results.preamble("Coordinate I/O: a matrix to and from scipy.sparse", partial)
                   + [report(cases, got, args.reps, quiet, time.time() - t0)])
    print(md, flush=True)
    results.write(args, "bench/coo/scipy_io.py", md, quick=partial)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
    else:
        main()
