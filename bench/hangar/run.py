"""Hangar-style sample store: dense-padded (Hangar's HDF5_00) vs sparse, same run.

For each shape distribution (every sample at the maximum shape, then from uniform to heavily
skewed) and each compression (Hangar's default blosc:lz4hc 5 byte shuffle, and none), the
hangar_store example writes the same samples dense (plain HDF5 and a fixed-array chunk index,
exactly as Hangar does) and sparse (through the h5sparse connector, with the store's default
extensible-array chunk index), each in its own process, then reads them all back (digests
verified). Reported: file size, write and read throughput (samples/s and MB/s of sample bytes)
and the sparse/dense time ratios, from the CPU time spent in the store calls (the wall time
ratio is shown too). Repeats are interleaved (dense, sparse, dense, ...) and the least time of
each is kept: load on a shared machine only ever adds time. Files in /dev/shm.

A second table separates the chunk index from sparseness: both modes with both indexes, write
time relative to Hangar's dense store.

    scripts/dev run python3 bench/hangar/run.py [--samples N] [--repeat R] [--quick]
                                                [--values ramp|random] [--compression blosc|none]

The tables replace this script's section of bench/RESULTS.md (--results-md PATH: of another
file; a --quick run, one of a single compression or of fewer samples writes a section only
there).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench"))
import results  # noqa: E402
CONNECTOR = "h5sparse under_vol=0;under_info={}"
DISTRIBUTIONS = ["full", "large", "uniform", "skewed", "heavy"]
COMPRESSIONS = {"blosc:lz4hc 5 byte": "", "none": "none"}
# (mode, chunk index): the first two are the comparison, the other two isolate the index.
CONFIGS = [("dense", "fixed"), ("sparse", "extensible"), ("dense", "extensible"), ("sparse", "fixed")]


def run(store, args, sparse):
    env = dict(os.environ)
    if sparse:
        env["HDF5_VOL_CONNECTOR"] = CONNECTOR
    else:
        env.pop("HDF5_VOL_CONNECTOR", None)  # dense: plain HDF5, as Hangar runs
    p = subprocess.run([store, *map(str, args)], capture_output=True, text=True, env=env, check=True)
    return json.loads(p.stdout)


def measure_once(store, workdir, config, dist, compression, samples, dtype, values):
    mode, index = config
    d = os.path.join(workdir, f"{mode}-{index}")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    rec = os.path.join(d, "records.txt")
    w = run(store, ["write", d, "--mode", mode, "--index", index, "--samples", samples, "--dist", dist,
                    "--dtypes", dtype, "--values", values, "--compression", compression, "--records", rec, "--seed", 1],
            mode == "sparse")
    r = run(store, ["read", d, "--records", rec], mode == "sparse")
    shutil.rmtree(d, ignore_errors=True)
    return {"file_bytes": w["file_bytes"], "bytes": w["bytes"], "padded": w["padded_bytes"],
            "write_s": w["seconds"], "write_cpu": w["cpu_seconds"], "read_s": r["seconds"], "read_cpu": r["cpu_seconds"]}


def measure(store, workdir, configs, dist, compression, samples, dtype, values, repeat):
    runs = {c: [] for c in configs}
    for _ in range(repeat):  # interleaved, so load changes hit every configuration alike
        for c in configs:
            runs[c].append(measure_once(store, workdir, c, dist, compression, samples, dtype, values))
    out = {}
    for c, rs in runs.items():
        out[c] = dict(rs[0])
        for key in ("write_s", "write_cpu", "read_s", "read_cpu"):
            out[c][key] = min(r[key] for r in rs)
    return out


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * 2 + "---:|" * (len(header) - 2)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dtype", default="u1")
    ap.add_argument("--values", default="ramp", choices=["ramp", "random"], help="sample values (hangar_store --values)")
    ap.add_argument("--compression", choices=["blosc", "none"], help="only this compression")
    ap.add_argument("--quick", action="store_true", help="1000 samples, one run each")
    ap.add_argument("--store", default=os.path.join(REPO, "build", "bin", "hangar_store"))
    ap.add_argument("--json", help="also write the raw figures here")
    results.add_argument(ap)
    a = ap.parse_args()
    if a.quick:
        a.samples, a.repeat = 1000, 1
    partial = bool(a.quick or a.compression or a.samples < ap.get_default("samples"))
    head = results.preamble("Hangar sample store", partial)
    load_before = os.getloadavg()
    workdir = tempfile.mkdtemp(prefix="hangar_bench_", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    rows, index_rows, raw = [], [], []
    n = a.samples
    try:
        for cname, compression in COMPRESSIONS.items():
            if a.compression and not cname.startswith(a.compression):
                continue
            for dist in DISTRIBUTIONS:
                res = measure(a.store, workdir, CONFIGS, dist, compression, n, a.dtype, a.values, a.repeat)
                raw.append({"compression": cname, "dist": dist, **{f"{m}-{i}": v for (m, i), v in res.items()}})
                d, s = res[CONFIGS[0]], res[CONFIGS[1]]
                mb = d["bytes"] / 1e6
                rows.append([cname, dist, f"{d['bytes'] / d['padded']:.2f}",
                             f"{d['file_bytes'] / 2**20:.2f}", f"{s['file_bytes'] / 2**20:.2f}",
                             f"{s['file_bytes'] / d['file_bytes']:.3f}",
                             f"{n / d['write_cpu']:,.0f} / {mb / d['write_cpu']:.1f}",
                             f"{n / s['write_cpu']:,.0f} / {mb / s['write_cpu']:.1f}",
                             f"{s['write_cpu'] / d['write_cpu']:.2f}", f"{s['write_s'] / d['write_s']:.2f}",
                             f"{n / d['read_cpu']:,.0f} / {mb / d['read_cpu']:.1f}",
                             f"{n / s['read_cpu']:,.0f} / {mb / s['read_cpu']:.1f}",
                             f"{s['read_cpu'] / d['read_cpu']:.2f}", f"{s['read_s'] / d['read_s']:.2f}"])
                base = d["write_cpu"]
                index_rows.append([cname, dist] + [f"{res[c]['write_cpu'] / base:.2f}" for c in CONFIGS[1:]] +
                                  [f"{res[c]['file_bytes'] / d['file_bytes']:.3f}" for c in CONFIGS[1:]])
                print(" | ".join(rows[-1]), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    load_after = os.getloadavg()
    md = head + [
        "Hangar's HDF5_00 storage method (`hangar_store`, `workloads/hangar/`): dense with plain HDF5 and Hangar's "
        "fixed-array chunk index, exactly as Hangar runs; sparse through the connector with the store's "
        "extensible-array index; each mode in its own process, the same samples, digests verified on read. Times "
        "cover the store calls only (creating the file, writing and flushing each sample, closing); /dev/shm.",
        "",
        table(["compression", "shapes", "mean size / max", "dense MiB", "sparse MiB", "sparse/dense size",
               "dense write samples/s / MB/s", "sparse write samples/s / MB/s", "sparse/dense write CPU time",
               "(wall)", "dense read samples/s / MB/s", "sparse read samples/s / MB/s",
               "sparse/dense read CPU time", "(wall)"], rows),
        "",
        "The chunk index apart from sparseness: both modes with both indexes, against Hangar's dense store.",
        "",
        table(["compression", "shapes"] + [f"{m} {i} write / dense fixed" for m, i in CONFIGS[1:]] +
              [f"{m} {i} size / dense fixed" for m, i in CONFIGS[1:]], index_rows),
        "",
        f"{n} samples of dtype {a.dtype} ({a.values} values), maximum shape 64x64x3, best of {a.repeat} interleaved "
        "runs; throughput from the CPU time in the store calls; MB/s of sample bytes (not padding). "
        f"Load average (1, 5, 15 min) before {load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f}, "
        f"after {load_after[0]:.1f} {load_after[1]:.1f} {load_after[2]:.1f}."]
    print("\n".join(md), flush=True)
    results.write(a, "bench/hangar/run.py", "\n".join(md), quick=partial)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
