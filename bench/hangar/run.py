"""Hangar-style sample store: dense-padded (Hangar's HDF5_00) vs sparse, same run.

For each shape distribution (every sample at the maximum shape, then from uniform to heavily
skewed) and each compression (Hangar's default blosc:lz4hc 5 byte shuffle, and none), the
hangar_store example writes the same samples once dense (plain HDF5, as Hangar does) and once
sparse (through the h5sparse connector), each in its own process, then reads them all back
(digests verified). Reported: file size, write and read throughput (samples/s and MB/s of
sample bytes). Best of --repeat runs, files in /dev/shm.

    scripts/dev run python3 bench/hangar/run.py [--samples N] [--repeat R] [--quick]
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONNECTOR = "h5sparse under_vol=0;under_info={}"
DISTRIBUTIONS = ["full", "large", "uniform", "skewed", "heavy"]
COMPRESSIONS = {"blosc:lz4hc 5 byte": "", "none": "none"}


def run(store, args, sparse):
    env = dict(os.environ)
    if sparse:
        env["HDF5_VOL_CONNECTOR"] = CONNECTOR
    else:
        env.pop("HDF5_VOL_CONNECTOR", None)  # dense: plain HDF5, as Hangar runs
    p = subprocess.run([store, *map(str, args)], capture_output=True, text=True, env=env, check=True)
    return json.loads(p.stdout)


def measure(store, workdir, mode, dist, compression, samples, dtype, repeat):
    best = None
    for _ in range(repeat):
        d = os.path.join(workdir, mode)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        rec = os.path.join(d, "records.txt")
        w = run(store, ["write", d, "--mode", mode, "--samples", samples, "--dist", dist, "--dtypes", dtype,
                        "--compression", compression, "--records", rec, "--seed", 1], mode == "sparse")
        r = run(store, ["read", d, "--records", rec], mode == "sparse")
        cur = {"file_bytes": w["file_bytes"], "bytes": w["bytes"], "padded": w["padded_bytes"],
               "write_s": w["seconds"], "read_s": r["seconds"]}
        if best is None:
            best = cur
        else:
            best["write_s"] = min(best["write_s"], cur["write_s"])
            best["read_s"] = min(best["read_s"], cur["read_s"])
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dtype", default="u1")
    ap.add_argument("--quick", action="store_true", help="1000 samples, one run each")
    ap.add_argument("--store", default=os.path.join(REPO, "build", "bin", "hangar_store"))
    ap.add_argument("--json", help="also write the raw figures here")
    a = ap.parse_args()
    if a.quick:
        a.samples, a.repeat = 1000, 1
    workdir = tempfile.mkdtemp(prefix="hangar_bench_", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    rows, raw = [], []
    try:
        for cname, compression in COMPRESSIONS.items():
            for dist in DISTRIBUTIONS:
                res = {m: measure(a.store, workdir, m, dist, compression, a.samples, a.dtype, a.repeat)
                       for m in ("dense", "sparse")}
                raw.append({"compression": cname, "dist": dist, **res})
                d, s = res["dense"], res["sparse"]
                n = a.samples
                mb = d["bytes"] / 1e6
                rows.append([cname, dist, f"{d['bytes'] / d['padded']:.2f}",
                             f"{d['file_bytes'] / 2**20:.2f}", f"{s['file_bytes'] / 2**20:.2f}",
                             f"{s['file_bytes'] / d['file_bytes']:.2f}",
                             f"{n / d['write_s']:,.0f} / {mb / d['write_s']:.1f}",
                             f"{n / s['write_s']:,.0f} / {mb / s['write_s']:.1f}",
                             f"{s['write_s'] / d['write_s']:.2f}",
                             f"{n / d['read_s']:,.0f} / {mb / d['read_s']:.1f}",
                             f"{n / s['read_s']:,.0f} / {mb / s['read_s']:.1f}",
                             f"{s['read_s'] / d['read_s']:.2f}"])
                print(" | ".join(rows[-1]), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    header = ["compression", "shapes", "mean size / max", "dense MiB", "sparse MiB", "sparse/dense size",
              "dense write samples/s / MB/s", "sparse write samples/s / MB/s", "sparse/dense write time",
              "dense read samples/s / MB/s", "sparse read samples/s / MB/s", "sparse/dense read time"]
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * 2 + "---:|" * (len(header) - 2))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print(f"\n{a.samples} samples of dtype {a.dtype}, maximum shape 64x64x3, best of {a.repeat}; "
          "MB/s of sample bytes (not padding).")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(raw, f, indent=1)


if __name__ == "__main__":
    main()
