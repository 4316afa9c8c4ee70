#!/usr/bin/env python3
"""LZF through h5py: one side per process, driven by bench/run.py.

  lzf_h5py.py --dir D --shape R,C --dtype float32|int32 --name field --side builtin|ours
              [--shuffle] [--reps N] [--file F.h5]

builtin: h5py's own LZF filter (compiled into h5py, registered at import).
ours:    h5py's LZF unregistered, so filter 32000 is loaded from HDF5_PLUGIN_PATH (our plugin).
Both write the same raw data (D/<name>.bin from `filter_bench gen`) into 512x512 chunks with
the filter optional (what compression='lzf' does), with HDF5's shuffle filter in front when
--shuffle is given, close, reopen and read back; best of N.
Prints one JSON object.
"""
import argparse
import json
import os
import time

import h5py
import numpy as np

CHUNK = (512, 512)
LZF = 32000


def loaded_lzf_libraries():
    with open("/proc/self/maps") as maps:
        return sorted({line.split()[-1] for line in maps if "lzf" in line.lower() and "/" in line})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--shape", required=True)
    ap.add_argument("--dtype", required=True)
    ap.add_argument("--side", choices=["builtin", "ours"], required=True)
    ap.add_argument("--shuffle", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-reps", type=int, default=0, help="attempts to get --reps clean ones (default 3x)")
    ap.add_argument("--file", default=f"/dev/shm/lzf_h5py_{os.getpid()}.h5")
    a = ap.parse_args()

    shape = tuple(int(x) for x in a.shape.split(","))
    data = np.fromfile(os.path.join(a.dir, a.name + ".bin"), dtype=a.dtype,
                       count=shape[0] * shape[1]).reshape(shape)
    if a.side == "ours":
        h5py.h5z.unregister_filter(LZF)
        compression = LZF  # h5py: set_filter(32000, FLAG_OPTIONAL), loaded from the plugin path
        if not h5py.h5z.filter_avail(LZF):
            raise SystemExit("our LZF plugin was not found on HDF5_PLUGIN_PATH")
    else:
        compression = "lzf"

    back = np.empty_like(data)
    # (wall, cpu) per repetition; clean = not preempted: wall within 5% (+2 ms) of the CPU time
    writes, reads = [], []
    clean = lambda xs: [w for w, c in xs if w <= 1.05 * c + 0.002]
    max_reps = a.max_reps or 3 * a.reps
    stored = 0

    def enough(xs):  # as filter_bench: reps clean ones, or two clean ones within 2%
        c = sorted(clean(xs))
        return len(c) >= a.reps or (len(c) >= 2 and c[1] <= 1.02 * c[0])

    def write_once():
        if os.path.exists(a.file):
            os.remove(a.file)
        c0, t0 = time.process_time(), time.perf_counter()
        with h5py.File(a.file, "w") as f:
            d = f.create_dataset(a.name, shape=shape, dtype=data.dtype, chunks=CHUNK,
                                 compression=compression, shuffle=a.shuffle)
            d[...] = data
        writes.append((time.perf_counter() - t0, time.process_time() - c0))

    def read_once():
        nonlocal stored
        back[...] = 0
        c0, t0 = time.process_time(), time.perf_counter()
        f = h5py.File(a.file, "r")
        d = f[a.name]
        d.read_direct(back)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        stored = d.id.get_storage_size()  # untimed, like the C++ side
        del d
        c0, t0 = time.process_time(), time.perf_counter()
        f.close()
        reads.append((wall + time.perf_counter() - t0, cpu + time.process_time() - c0))
        if not np.array_equal(back, data):
            raise SystemExit("data read back differs")

    while not enough(writes) and len(writes) < max_reps:
        write_once()
        read_once()
    while len(clean(reads)) < a.reps and len(reads) < max_reps:
        read_once()
    best_w = min(clean(writes) or [w for w, _ in writes])
    best_r = min(clean(reads) or [r for r, _ in reads])
    os.remove(a.file)
    print(json.dumps({"mode": "lzf_h5py", "side": a.side, "dataset": a.name, "bytes": data.nbytes,
                      "shuffle": a.shuffle, "stored": int(stored), "write_s": best_w, "read_s": best_r, "reps": a.reps,
                      "writes": [len(clean(writes)), len(writes)], "reads": [len(clean(reads)), len(reads)],
                      "lzf_libraries": loaded_lzf_libraries()}))


if __name__ == "__main__":
    main()
