#!/usr/bin/env python3
"""Filter benchmark: our Blosc (32001) and LZF (32000) plugins against their peers.

Run it through the toolchain, which builds the Release tree first:

    scripts/dev bench            # full run: 256 MiB float32 field + 64 MiB int32 counts
    scripts/dev bench --quick    # 32 MiB field, to try it out (a few minutes)

Options: --mb N (or env H5SPARSE_BENCH_MB) sets the field size in MiB (the counts are a quarter
of it); --reps N the repetitions per measurement (best of N, default 3); --only SECTIONS runs
a comma-separated subset of blosc,threads,overhead,lzf; --quiet-wait S waits up to S seconds
before each measurement for other processes to leave the CPUs alone (default 30, 0 = never).

What is measured (every measurement in its own process, best of N repetitions; a write or
compression stops early after two repetitions within 2% of each other or one over 2 s, as the
slow compressors' 6-second writes are stable; only repetitions that nothing preempted count;
ours and the peer each run in two processes, ABBA order, N-1 repetitions each):
  * Blosc: our plugin vs the hdf5-blosc peer plugin (Debian hdf5-filter-plugin-blosc), each
    complib with byte and bit shuffle, clevel 5, one thread each (BLOSC_NTHREADS=1). Write =
    H5Fcreate .. H5Dwrite of the whole dataset .. H5Fclose; read = H5Fopen .. H5Dread .. H5Fclose;
    MB/s are 10^6 bytes of uncompressed data per second; the compression ratio is the
    uncompressed size over H5Dget_storage_size. Reads are measured in fresh reader processes
    (the file each side's writer left, ABBA order again), not in the process that has just
    written: what a process compressed before decides through glibc's dynamic mmap threshold
    whether HDF5's 1 MiB chunk buffers are faulted in afresh on every read (c-blosc's per-block
    contexts raise the threshold). The reads in the
    writing process are kept as an extra table, with the page faults per read of both kinds.
  * Plugin overhead: time inside each plugin's filter callback (the benchmark registers the
    plugin's own class with a timing wrapper around its callback) vs calling the codec core
    directly on the same chunks in memory.
  * Threads: our plugin with BLOSC_NTHREADS=2 vs the peer with BLOSC_NTHREADS=1 (and 2).
  * LZF: through h5py, our plugin (h5py's LZF unregistered, so 32000 comes from the plugin path)
    vs h5py's built-in LZF, without and with HDF5's shuffle filter.
Each process sees HDF5_PLUGIN_PATH pointing at one side only, no VOL connector, and no other
BLOSC_* variables. Data and files live in /dev/shm. The Markdown goes to stdout, to
bench/results/filters.md (filters-<variant>.md for partial or smaller runs) and, for a full run,
to this script's section of bench/RESULTS.md (--results-md PATH: of another file, for any run);
the raw measurements to the .json beside filters.md.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from machine import cpu_busy  # noqa: E402
import results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PEER_DIR = os.environ.get("H5SPARSE_PEER_PLUGIN_DIR", "/usr/lib/x86_64-linux-gnu/hdf5/serial/plugins")
PEER_BLOSC = "libH5Zblosc.so"

COMPLIBS = [("blosclz", 0), ("lz4", 1), ("lz4hc", 2), ("zlib", 4), ("zstd", 5)]
SHUFFLES = [("byte", 1), ("bit", 2)]
CLEVEL = 5
CHUNK_BYTES = 512 * 512 * 4
SECTIONS = ("blosc", "threads", "overhead", "lzf")
# Allocator setting for the "warm allocator" overhead column: keep 16 MiB at the heap top so
# glibc stops returning (and re-faulting) the 1 MiB chunk buffers on every chunk.
TOP_PAD = "glibc.malloc.top_pad=16777216"

# A clean write or compression that takes this long is not repeated within its process.
LONG_MS = 2000

TARGET_SPEED = 0.95
TARGET_OVERHEAD = 0.10
TARGET_THREADS = 1.6


def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def mbps(nbytes, seconds):
    return nbytes / 1e6 / seconds if seconds else float("nan")


class Bench:
    def __init__(self, build, data_dir, mb, reps, quiet_wait):
        self.build = os.path.abspath(build)
        self.exe = os.path.join(self.build, "bin", "filter_bench")
        self.ours_dir = os.path.join(self.build, "plugins")
        self.data_dir = data_dir
        self.mb = mb
        self.reps = reps
        self.pair_reps = max(1, reps - 1)  # per process when a side runs in two processes (ABBA)
        self.records = []
        self.quiet_wait = quiet_wait
        self.waited = 0.0
        self.busy_starts = 0
        self.empty_dir = os.path.join(data_dir, "no-plugins")
        os.makedirs(self.empty_dir, exist_ok=True)
        for path in (self.exe, os.path.join(self.ours_dir, "libh5sparse_blosc.so"),
                     os.path.join(self.ours_dir, "libh5sparse_lzf.so"), os.path.join(PEER_DIR, PEER_BLOSC)):
            if not os.path.exists(path):
                raise SystemExit(f"missing {path} (build with scripts/dev bench)")

    # --- processes ----------------------------------------------------------------------------
    def env(self, plugin_dir, threads=1, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("BLOSC_") and k not in ("HDF5_PLUGIN_PATH", "HDF5_VOL_CONNECTOR",
                                                           "GLIBC_TUNABLES", "MALLOC_TOP_PAD_")}
        env["HDF5_PLUGIN_PATH"] = plugin_dir
        env["BLOSC_NTHREADS"] = str(threads)
        env.update(extra or {})
        return env

    def quiet(self):
        """Waits (up to --quiet-wait s) until other processes use less than a quarter of a core."""
        start = time.time()
        while True:
            busy = cpu_busy()
            if busy < 0.25 or time.time() - start >= self.quiet_wait:
                break
            time.sleep(1.0)
        waited = time.time() - start
        self.waited += waited
        if busy >= 0.25:
            self.busy_starts += 1
        return waited

    def run(self, cmd, env, tag):
        if self.quiet_wait > 0:
            self.quiet()
        t0 = time.time()
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise SystemExit(f"failed ({tag}): {' '.join(cmd)}\n{p.stderr[-3000:]}")
        out = json.loads(p.stdout.strip().splitlines()[-1])
        out["tag"] = tag
        out["wall_s"] = time.time() - t0
        self.records.append(out)
        return out

    def side(self, side):
        if side == "ours":
            return self.ours_dir, os.path.join(self.ours_dir, "libh5sparse_blosc.so")
        return PEER_DIR, os.path.join(PEER_DIR, PEER_BLOSC)

    def h5_blosc(self, side, dataset, compcode, shuffle, threads=1, extra_env=None, tag="", reps=None,
                 keep=None, read_only=None):
        """Writes and reads back in one process; keep=FILE leaves the file there, read_only=FILE
        only reads FILE (a fresh reader process)."""
        plugin_dir, lib = self.side(side)
        cd = f"0,0,0,0,{CLEVEL},{shuffle},{compcode}"
        cmd = [self.exe, "h5", "--dir", self.data_dir, "--mb", str(self.mb), "--dataset", dataset,
               "--filter", "32001", "--cd", cd, "--plugin-lib", lib, "--reps", str(reps or self.reps),
               "--long-ms", str(LONG_MS)]
        if keep or read_only:
            cmd += ["--file", keep or read_only, "--keep", "1", "--read-only", "1" if read_only else "0"]
        if threads > 1:
            cmd += ["--clean", "0"]  # the preemption check holds for one thread only
        kind = " read" if read_only else ""
        return self.run(cmd, self.env(plugin_dir, threads, extra_env),
                        tag or f"h5{kind} {side} {dataset} {cd} t{threads}")

    def h5_blosc_fresh_reads(self, order, dataset, compcode, shuffle, written, threads=1):
        """Replaces the reads in `written` (side -> record of a writing process that kept its
        file) by those of fresh reader processes, two per side in ABBA order; the reads in the
        writing process stay as *_after_write."""
        fresh = {side: self.h5_blosc(side, dataset, compcode, shuffle, threads, reps=self.pair_reps,
                                     read_only=self.h5_file(side)) for side in order}
        for side in reversed(order):
            fresh[side] = best_of(fresh[side], self.h5_blosc(side, dataset, compcode, shuffle, threads,
                                                             reps=self.pair_reps, read_only=self.h5_file(side)))
        for side, rec in written.items():
            for key in READ_KEYS:
                rec[key + "_after_write"] = rec[key]
                rec[key] = fresh[side][key]
        return written

    def h5_file(self, side):
        return os.path.join(self.data_dir, f"bench-{side}.h5")

    def h5_lzf(self, dataset, extra_env=None):
        lib = os.path.join(self.ours_dir, "libh5sparse_lzf.so")
        cmd = [self.exe, "h5", "--dir", self.data_dir, "--mb", str(self.mb), "--dataset", dataset,
               "--filter", "32000", "--plugin-lib", lib, "--reps", str(self.reps), "--long-ms", str(LONG_MS)]
        return self.run(cmd, self.env(self.ours_dir, 1, extra_env), f"h5 ours lzf {dataset}")

    def direct(self, dataset, codec, compcode=0, shuffle=0, threads=1):
        cmd = [self.exe, "direct", "--dir", self.data_dir, "--mb", str(self.mb), "--dataset", dataset,
               "--codec", codec, "--cd", f"0,0,0,0,{CLEVEL},{shuffle},{compcode}",
               "--nthreads", str(threads), "--reps", str(self.reps), "--long-ms", str(LONG_MS)]
        if threads > 1:
            cmd += ["--clean", "0"]
        return self.run(cmd, self.env(self.empty_dir, threads), f"direct {codec} {dataset} {compcode} {shuffle} t{threads}")

    def lzf_py(self, side, dataset, shape, dtype, shuffle, reps=None):
        plugin_dir = self.ours_dir if side == "ours" else self.empty_dir
        cmd = [sys.executable, os.path.join(HERE, "lzf_h5py.py"), "--dir", self.data_dir, "--name", dataset,
               "--shape", f"{shape[0]},{shape[1]}", "--dtype", dtype, "--side", side, "--reps", str(reps or self.reps)]
        if shuffle:
            cmd.append("--shuffle")
        out = self.run(cmd, self.env(plugin_dir), f"lzf_h5py {side} {dataset} shuffle={shuffle}")
        libs = out.get("lzf_libraries", [])
        if (side == "ours") != any("h5sparse_lzf" in lib for lib in libs):
            raise SystemExit(f"LZF side {side} loaded the wrong filter: {libs}")
        return out




# What a read measures: replaced by the fresh reader processes' figures (see h5_blosc_fresh_reads).
READ_KEYS = ("read_s", "filter_read_s", "faults_read", "filter_faults_read", "calls_read")


def best_of(a, b):
    """Merges two measurements of the same configuration: the best time of each kind."""
    merged = dict(a)
    for key in ("write_s", "read_s", "filter_write_s", "filter_read_s"):
        if a.get(key) is not None and b.get(key) is not None:
            merged[key] = min(a[key], b[key])
    merged["processes"] = a.get("processes", 1) + b.get("processes", 1)
    return merged


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def f0(x):
    return f"{x:.0f}"


def pct(x):
    return f"{100 * x:+.0f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="Release build tree (scripts/dev passes it)")
    ap.add_argument("--quick", action="store_true", help="32 MiB field instead of 256 MiB")
    ap.add_argument("--mb", type=int, help="field size in MiB (default: $H5SPARSE_BENCH_MB or 256)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--quiet-wait", type=float, default=30,
                    help="before each measurement wait up to this many seconds for other load to go away")
    ap.add_argument("--out", help="Markdown file (default bench/results/filters.md for a full run, "
                    "filters-<variant>.md for --quick, --mb, --reps or --only runs)")
    results.add_argument(ap)
    args = ap.parse_args()
    sections = set(args.only.split(","))
    if sections - set(SECTIONS):
        raise SystemExit(f"--only takes {','.join(SECTIONS)}")
    mb = args.mb or int(os.environ.get("H5SPARSE_BENCH_MB") or 0) or (32 if args.quick else 256)
    mb = max(16, (mb + 15) // 16 * 16)  # the 512-row chunks must tile the field
    # A partial or smaller run overwrites neither the full run's tables nor its RESULTS.md section.
    variant = [v for v, on in (("quick", args.quick), (f"{mb}mb", mb != 256 and not args.quick),
                               (f"reps{args.reps}", args.reps != 3),
                               ("-".join(sorted(sections)), sections != set(SECTIONS))) if on]
    if not args.out:
        name = "filters-" + "-".join(variant) + ".md" if variant else "filters.md"
        args.out = os.path.join(HERE, "results", name)
    argv = sys.argv[1:]
    if "--build" in argv:
        i = argv.index("--build")
        del argv[i:i + 2]
    command = results.toolchain_prefix(build=False) + "scripts/dev bench" + "".join(" " + a for a in argv)
    if os.environ.get("H5SPARSE_BENCH_MB"):
        command = f"H5SPARSE_BENCH_MB={os.environ['H5SPARSE_BENCH_MB']} " + command

    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
    data_dir = tempfile.mkdtemp(prefix="h5sparse-bench-", dir=shm)
    started = time.time()
    try:
        b = Bench(args.build, data_dir, mb, args.reps, args.quiet_wait)
        md = run_all(b, sections, command, partial=bool(variant))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    single = [r for r in b.records if "writes" in r and not r["tag"].endswith("t2")]
    short = [r for r in single if (r["writes"][0] == 0 and not r["tag"].startswith("h5 read"))
             or r["reads"][0] < r["reps"]]
    md += (f"\n\nTotal benchmark time: {time.time() - started:.0f} s, of which {b.waited:.0f} s waiting for other "
           f"load to go away ({b.busy_starts} measurements started with other load present). Single-threaded "
           f"repetitions count only when nothing preempted them (wall time within 5% of CPU time): "
           f"{len(single) - len(short)} of {len(single)} single-threaded measurements got enough of those"
           + (f"; the other {len(short)} show the best of all their attempts (details in filters.json)" if short else "")
           + ".\n")
    print(md)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(md)
    with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
        json.dump(b.records, f, indent=1)
    log(f"wrote {args.out}")
    results.write(args, "bench/run.py", md, quick=bool(variant))


def after_write_table(main_rows, datasets):
    """The reads measured in the process that wrote the file, next to the fresh readers' page faults."""
    rows = []
    for (ds, name, sname), (o, p, _) in main_rows.items():
        if ds not in datasets or "read_s_after_write" not in o:
            continue
        n = o["bytes"]
        orr, pr = mbps(n, o["read_s_after_write"]), mbps(n, p["read_s_after_write"])
        rows.append([ds, name, sname, f0(orr), f0(pr), f"{orr / pr:.2f}",
                     f"{o['faults_read']} / {p['faults_read']}",
                     f"{o['faults_read_after_write']} / {p['faults_read_after_write']}"])
    return ("#### Reads in the writing process (not the reported figure)\n\n"
            "The same reads measured in the process that has just written the file (best of its "
            "repetitions), and the minor page faults of one whole-dataset read: in a fresh reader "
            "process (the tables above) and after the writes. c-blosc's per-block contexts raise glibc's "
            "dynamic mmap threshold in the peer's writing process, so its later chunk buffers come from "
            "a kept heap; fresh readers start from the same allocator state on both sides.\n\n"
            + table(["data", "complib", "shuffle", "ours read MB/s", "peer read MB/s", "ratio",
                     "faults/read fresh ours / peer", "after write ours / peer"], rows) + "\n")


def run_all(b, sections, command, partial=False):
    info = b.run([b.exe, "info"], b.env(b.empty_dir), "info")
    gen = b.run([b.exe, "gen", "--dir", b.data_dir, "--mb", str(b.mb)], b.env(b.empty_dir), "gen")
    shapes = {"field": gen["field_shape"], "counts": gen["counts_shape"]}
    sizes = {"field": gen["field_bytes"], "counts": gen["counts_bytes"]}
    dtypes = {"field": "float32", "counts": "int32"}
    head = results.preamble("Filter plugins", partial, command=command,
                            extra=f"c-blosc {info['c_blosc']}, peer plugin {os.path.join(PEER_DIR, PEER_BLOSC)}")
    out = ["\n".join(head),
           f"Data: `field` float32 {shapes['field'][0]}x{shapes['field'][1]} ({sizes['field'] >> 20} MiB; "
           "smooth temperature-like field: gradient + 5 low-frequency waves + ±0.02 K noise) and "
           f"`counts` int32 {shapes['counts'][0]}x{shapes['counts'][1]} ({sizes['counts'] >> 20} MiB; Poisson "
           "counts, rate varying smoothly over 0..6), chunks 512x512 (1 MiB), filters optional, "
           f"Blosc clevel {CLEVEL}. Each side in its own processes: ours and the peer run twice each in "
           f"ABBA order, {b.pair_reps} repetitions per process, best of all (other measurements: best of "
           f"{b.reps}; writes stop after 2 that agree within 2% or one over {LONG_MS // 1000} s), "
           "files in /dev/shm. MB/s = 10^6 uncompressed bytes per second; ratio = ours / peer "
           "(> 1: ours faster); CR = uncompressed / stored size.\n"]
    verdicts = []
    datasets = ["field", "counts"]

    # --- Blosc vs hdf5-blosc, 1 thread each -----------------------------------------------------
    main_rows = {}  # (dataset, complib, shuffle) -> (ours, peer, direct)
    need_main = sections & {"blosc", "overhead", "threads"}
    if need_main:
        n = 0
        for ds in datasets:
            for name, code in COMPLIBS:
                for sname, shuf in SHUFFLES:
                    if not sections & {"blosc", "overhead"} and (ds, sname) != ("field", "byte"):
                        continue  # the threads table compares field/byte only
                    n += 1
                    log(f"blosc {ds} {name} {sname}")
                    # Two processes per side in ABBA order (BAAB for every other configuration),
                    # so that drifting machine speed and per-process luck favour neither side.
                    order = ["ours", "peer"] if n % 2 else ["peer", "ours"]
                    r = {side: b.h5_blosc(side, ds, code, shuf, reps=b.pair_reps) for side in order}
                    d = b.direct(ds, "blosc", code, shuf)
                    for side in reversed(order):
                        r[side] = best_of(r[side], b.h5_blosc(side, ds, code, shuf, reps=b.pair_reps,
                                                              keep=b.h5_file(side)))
                    b.h5_blosc_fresh_reads(order, ds, code, shuf, r)
                    main_rows[(ds, name, sname)] = [r["ours"], r["peer"], d]

    if "blosc" in sections:
        misses, unequal = [], []
        for ds in datasets:
            rows = []
            for name, _ in COMPLIBS:
                for sname, _ in SHUFFLES:
                    o, p, _ = main_rows[(ds, name, sname)]
                    n = o["bytes"]
                    ow, pw, orr, pr = mbps(n, o["write_s"]), mbps(n, p["write_s"]), mbps(n, o["read_s"]), mbps(n, p["read_s"])
                    rows.append([name, sname, f0(ow), f0(pw), f"{ow / pw:.2f}", f0(orr), f0(pr), f"{orr / pr:.2f}",
                                 f"{n / o['stored']:.3f}", f"{n / p['stored']:.3f}"])
                    if o["stored"] != p["stored"]:
                        unequal.append(f"{ds}/{name}/{sname}")
                    for what, ratio in (("write", ow / pw), ("read", orr / pr)):
                        if ratio < TARGET_SPEED:
                            misses.append(f"{ds} {name}/{sname} {what} {ratio:.2f}")
            out.append(f"#### Blosc (32001): ours vs hdf5-blosc, `{ds}`, 1 thread each\n")
            out.append(table(["complib", "shuffle", "ours write MB/s", "peer write MB/s", "ratio", "ours read MB/s",
                              "peer read MB/s", "ratio", "ours CR", "peer CR"], rows) + "\n")
        out.append(after_write_table(main_rows, datasets))
        verdicts.append(("Blosc speed ratio >= 0.95 vs hdf5-blosc (write and read, every complib/shuffle, both datasets)",
                         not misses, "all rows" if not misses else "missed: " + "; ".join(misses)))
        verdicts.append(("... at equal compression ratio", not unequal,
                         "stored sizes identical in every row" if not unequal else "differs: " + ", ".join(unequal)))

    # --- LZF vs h5py's built-in ----------------------------------------------------------------
    lzf_cpp = {}
    if "lzf" in sections or "overhead" in sections:
        for ds in datasets:
            log(f"lzf direct/h5 {ds}")
            lzf_cpp[ds] = (b.h5_lzf(ds), b.direct(ds, "lzf"))
    if "lzf" in sections:
        rows, misses = [], []
        for ds in datasets:
            for shuffle in (False, True):
                log(f"lzf h5py {ds} shuffle={shuffle}")
                args = (ds, shapes[ds], dtypes[ds], shuffle)
                o = b.lzf_py("ours", *args, reps=b.pair_reps)  # ABBA, as for Blosc
                p = b.lzf_py("builtin", *args, reps=b.pair_reps)
                p = best_of(p, b.lzf_py("builtin", *args, reps=b.pair_reps))
                o = best_of(o, b.lzf_py("ours", *args, reps=b.pair_reps))
                n = o["bytes"]
                ow, pw, orr, pr = mbps(n, o["write_s"]), mbps(n, p["write_s"]), mbps(n, o["read_s"]), mbps(n, p["read_s"])
                flt = "shuffle + lzf" if shuffle else "lzf"
                rows.append([ds, flt, f0(ow), f0(pw), f"{ow / pw:.2f}", f0(orr), f0(pr), f"{orr / pr:.2f}",
                             f"{n / o['stored']:.3f}", f"{n / p['stored']:.3f}"])
                for what, ratio in (("write", ow / pw), ("read", orr / pr)):
                    if ratio < TARGET_SPEED:
                        misses.append(f"{ds} {flt} {what} {ratio:.2f}")
                if o["stored"] != p["stored"]:
                    misses.append(f"{ds} {flt}: stored sizes differ")
        out.append("#### LZF (32000): ours vs h5py's built-in LZF, through h5py\n")
        out.append(table(["data", "filters", "ours write MB/s", "h5py write MB/s", "ratio", "ours read MB/s",
                          "h5py read MB/s", "ratio", "ours CR", "h5py CR"], rows) + "\n")
        verdicts.append(("LZF speed ratio >= 0.95 vs h5py's LZF at equal compression ratio", not misses,
                         "all rows" if not misses else "missed: " + "; ".join(misses)))

    # --- plugin overhead -------------------------------------------------------------------------
    if "overhead" in sections:
        warm = {}
        log("overhead with a warm allocator (field, byte shuffle)")
        for name, code in COMPLIBS:
            warm[(name, "byte")] = b.h5_blosc("ours", "field", code, 1, extra_env={"GLIBC_TUNABLES": TOP_PAD},
                                              tag=f"h5 ours field {name} byte top_pad")
        warm[("lzf", "-")] = b.h5_lzf("field", extra_env={"GLIBC_TUNABLES": TOP_PAD})
        fault = b.run([b.exe, "faults"], b.env(b.empty_dir), "faults")
        rows, misses, misses_warm = [], [], []
        entries = [(ds, name, sname, *main_rows[(ds, name, sname)]) for ds in datasets for name, _ in COMPLIBS
                   for sname, _ in SHUFFLES]
        entries += [(ds, "lzf", "-", lzf_cpp[ds][0], None, lzf_cpp[ds][1]) for ds in datasets]
        for ds, name, sname, o, p, d in entries:
            n = d["bytes"]
            ow = (o["filter_write_s"] - d["compress_s"]) / d["compress_s"]
            orr = (o["filter_read_s"] - d["decompress_s"]) / d["decompress_s"]
            pw = (p["filter_write_s"] - d["compress_s"]) / d["compress_s"] if p else None
            pr = (p["filter_read_s"] - d["decompress_s"]) / d["decompress_s"] if p else None
            w = warm.get((name, sname)) if ds == "field" else None
            ww = (w["filter_write_s"] - d["compress_s"]) / d["compress_s"] if w else None
            wr = (w["filter_read_s"] - d["decompress_s"]) / d["decompress_s"] if w else None
            faults = f"{o['filter_faults_write'] / o['calls_write']:.0f} / {o['filter_faults_read'] / max(o['calls_read'], 1):.0f}"
            # What the read callback's page faults alone cost, against the codec's time.
            floor = o["filter_faults_read"] * fault["per_fault_s"] / d["decompress_s"]
            rows.append([ds, name, sname, f0(mbps(n, d["compress_s"])), f0(mbps(n, o["filter_write_s"])), pct(ow),
                         pct(pw) if p else "n/a", pct(ww) if w else "", f0(mbps(n, d["decompress_s"])),
                         f0(mbps(n, o["filter_read_s"])), pct(orr), pct(pr) if p else "n/a", pct(wr) if w else "",
                         pct(floor), faults])
            for what, x in (("write", ow), ("read", orr)):
                if x > TARGET_OVERHEAD:
                    misses.append(f"{ds} {name}/{sname} {what} {pct(x)}")
            for what, x in (("write", ww), ("read", wr)):
                if x is not None and x > TARGET_OVERHEAD:
                    misses_warm.append(f"{name}/{sname} {what} {pct(x)}")
        out.append("#### Plugin overhead: filter callback vs the codec called directly on the same chunks\n")
        out.append("Codec = `h5sparse::blosc_compress/_decompress`, `lzf_compress/_decompress` on the same 1 MiB "
                   "chunks, each copied into a reused buffer first (untimed). Filter = time inside the plugin's "
                   "filter callback during H5Dwrite/H5Dread. Overhead = (filter − codec) / codec; the peer column "
                   "compares hdf5-blosc's callback with the same codec time. \"warm alloc\" = ours again with "
                   f"`GLIBC_TUNABLES={TOP_PAD}` (field, byte shuffle). Faults = minor page faults per "
                   "call inside our callback (write / read). \"read faults' cost\" = those of the reads times "
                   f"the price of one ({fault['per_fault_s'] * 1e6:.2f} us: mapping, writing and unmapping a fresh "
                   f"1 MiB, {fault['fresh_s'] * 1e6:.0f} us, against writing a mapped one, {fault['warm_s'] * 1e6:.0f} us, "
                   "per page; `filter_bench faults`), over the codec's time: the part of the read overhead that comes "
                   "from the fresh output buffer HDF5's filter API makes a callback return.\n")
        out.append(table(["data", "codec", "shuffle", "codec write MB/s", "filter write MB/s", "ours overhead",
                          "peer overhead", "warm alloc", "codec read MB/s", "filter read MB/s", "ours overhead",
                          "peer overhead", "warm alloc", "read faults' cost", "faults/call"], rows) + "\n")
        verdicts.append(("Plugin overhead <= 10% of codec time (default glibc malloc)", not misses,
                         "all rows" if not misses else f"{len(misses)} of {2 * len(entries)} missed: " + "; ".join(misses)))
        verdicts.append(("Plugin overhead <= 10% with a warm allocator (field, byte shuffle, informational)",
                         not misses_warm, "all rows" if not misses_warm else "missed: " + "; ".join(misses_warm)))
        ends = []
        for ds in datasets:
            o, _, d = main_rows[(ds, "blosclz", "byte")]
            ends.append(f"`{ds}` blosclz/byte: H5Dwrite path {o['write_s']:.3f} s, of which callback "
                        f"{o['filter_write_s']:.3f} s and codec {d['compress_s']:.3f} s; H5Dread path {o['read_s']:.3f} s, "
                        f"callback {o['filter_read_s']:.3f} s, codec {d['decompress_s']:.3f} s")
        out.append("For scale, end to end: " + "; ".join(ends) + ".\n")

    # --- threads -----------------------------------------------------------------------------------
    if "threads" in sections:
        rows, misses = [], []
        ds = "field"
        for name, code in COMPLIBS:
            for sname, shuf in SHUFFLES[:1]:
                log(f"threads {name} {sname}")
                o2 = b.h5_blosc("ours", ds, code, shuf, threads=2, keep=b.h5_file("ours"))
                p2 = b.h5_blosc("peer", ds, code, shuf, threads=2, keep=b.h5_file("peer"))
                b.h5_blosc_fresh_reads(["ours", "peer"], ds, code, shuf, {"ours": o2, "peer": p2}, threads=2)
                o1, p1, _ = main_rows[(ds, name, sname)]
                n = o2["bytes"]
                sw, sr = p1["write_s"] / o2["write_s"], p1["read_s"] / o2["read_s"]
                rows.append([name, sname, f"{CHUNK_BYTES // p1['blocksize']} / {CHUNK_BYTES // o2['blocksize']}",
                             f"{n / p1['stored']:.3f} / {n / o2['stored']:.3f}",
                             f0(mbps(n, p1["write_s"])), f0(mbps(n, o2["write_s"])), f"{sw:.2f}",
                             f0(mbps(n, p1["read_s"])), f0(mbps(n, o2["read_s"])), f"{sr:.2f}",
                             f"{o1['write_s'] / o2['write_s']:.2f} / {o1['read_s'] / o2['read_s']:.2f}",
                             f"{p1['write_s'] / p2['write_s']:.2f} / {p1['read_s'] / p2['read_s']:.2f}"])
                for what, x in (("write", sw), ("read", sr)):
                    if x < TARGET_THREADS:
                        misses.append(f"{name}/{sname} {what} {x:.2f}x")
        out.append(f"#### Threads: ours with BLOSC_NTHREADS=2 vs the single-threaded peer (`{ds}`)\n")
        out.append("Blocks = c-blosc blocks per 1 MiB chunk (the unit its threads share), read from the stored "
                   "frames: the peer's with one thread / ours with two (both c-blosc's automatic block size); "
                   "CR likewise. Last two columns: each plugin's own 2-thread speedup (write / read).\n")
        out.append(table(["complib", "shuffle", "blocks 1T / 2T", "CR 1T / 2T", "peer 1T write MB/s",
                          "ours 2T write MB/s", "speedup", "peer 1T read MB/s", "ours 2T read MB/s", "speedup",
                          "ours 2T/1T", "peer 2T/1T"], rows) + "\n")
        verdicts.append((f"2 threads: ours >= {TARGET_THREADS}x the single-threaded peer", not misses,
                         "all rows" if not misses else "missed: " + "; ".join(misses)))
    out.append("#### Targets\n")
    out.append(table(["target", "met", "detail"], [[t, "yes" if ok else "**no**", d] for t, ok, d in verdicts]))
    return "\n".join(out)


if __name__ == "__main__":
    main()
