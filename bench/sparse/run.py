#!/usr/bin/env python3
"""Sparse-dataset benchmarks: the Lifeboat selection patterns and a density sweep.

    scripts/dev run python3 bench/sparse/run.py            # full run (3-5 minutes on 2 cores)
    scripts/dev run python3 bench/sparse/run.py --quick    # 1024 x 1024 sweep, one repetition
    scripts/dev run python3 bench/sparse/run.py --only density --densities 0.1 --codecs none --reps 5 \
        --results build/bench-sparse-10   # only some cells (results elsewhere: the full run's stay)
    scripts/dev run python3 bench/sparse/run.py --from-json bench/sparse/results/sparse.json
                                                           # re-render tables and plot, no measuring

It needs the built plugins and the VOL connector in the environment (`scripts/dev run` sets
HDF5_PLUGIN_PATH, HDF5_VOL_CONNECTOR and PYTHONPATH; build first with `scripts/dev build`).

1. Lifeboat patterns (lifeboat.py): section 0 of one 1024x1024 uint8 chunk, 10% defined, as
   random points per row, one rectangle and one run per row, without and with section-0
   filters, against Lifeboat's published sizes and the entropy bound.
2. Density sweep (density.py): 0.1% to 100% defined on a 4096x4096 float32 dataset with
   256x256 chunks, sparse against dense-chunked and CSR triplets, without compression and with
   blosc-lz4 + byte shuffle: file size, write time, full read time, 1,000 random point reads,
   peak RSS (VmHWM). Every measurement runs in its own process; times are the best of --reps
   repetitions (run in rounds, so a burst of load from elsewhere hits one round, not all of
   one case; before each, up to --quiet-wait seconds of waiting for other processes to go
   quiet); peak RSS is the largest over the repetitions.

Markdown goes to stdout, to bench/sparse/results/{lifeboat,density}.md and, for a full run, to
its section of bench/RESULTS.md (a --quick or partial run writes a section only into the file
--results-md names); the raw numbers to bench/sparse/results/sparse.json, the plot to
bench/sparse/results/density.png (when matplotlib is installed).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from machine import Quiet, back_free_memory, busy_sentence  # noqa: E402
import results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import density  # noqa: E402
import lifeboat  # noqa: E402

MiB = 1 << 20
FULL = {"n": 4096, "chunk": 256, "densities": [0.001, 0.01, 0.1, 0.5, 1.0], "points": 1000, "reps": 3}
QUICK = {"n": 1024, "chunk": 256, "densities": [0.001, 0.01, 0.1, 0.5, 1.0], "points": 200, "reps": 1}
RSS_MARGIN = 64 * MiB
FAST_DENSITY = 0.10   # write and full read at least 2x faster than dense up to here
SMALLER_THAN_DENSE_DENSITY = 0.50


def codecs_of(cfg):
    """The codecs a sweep measures (--codecs; all of density.CODECS by default)."""
    return cfg.get("codecs", density.CODECS)


def log(msg):
    print(f"[bench-sparse] {msg}", file=sys.stderr, flush=True)


def check_environment():
    plugins = [p for p in os.environ.get("HDF5_PLUGIN_PATH", "").split(":") if p]
    if not any(os.path.exists(os.path.join(p, "libh5sparse_structured.so")) for p in plugins):
        raise SystemExit("HDF5_PLUGIN_PATH has no libh5sparse_structured.so: build with scripts/dev build and "
                         "run through scripts/dev run python3 bench/sparse/run.py")
    if "h5sparse" not in os.environ.get("HDF5_VOL_CONNECTOR", ""):
        raise SystemExit("HDF5_VOL_CONNECTOR does not name h5sparse: run through scripts/dev run")
    return plugins


def preamble(quick):
    """Heading, command and machine line of the section (kept in sparse.json for --from-json)."""
    return results.preamble("Sparse storage", quick)


# --- density sweep ---------------------------------------------------------------------------



class Sweep:
    def __init__(self, workdir, cfg, quiet_wait=0.0, quiet_budget=0.0):
        self.workdir = workdir
        self.cfg = cfg
        self.results = {}   # (op, layout, codec, tag) -> {"times": [...], "rss_peak": [...], ...}
        self.meta = {}
        self.quiet = Quiet(quiet_wait, quiet_budget)  # seconds per measurement, for the whole sweep
        self.busy = self.quiet.busy

    def env(self, layout):
        env = {k: v for k, v in os.environ.items() if not k.startswith("BLOSC_")}
        env["BLOSC_NTHREADS"] = "1"
        if layout in ("dense", "csr"):
            env.pop("HDF5_VOL_CONNECTOR", None)   # stock HDF5 (+ our Blosc plugin)
        return env

    def job(self, op, layout, codec, tag, verify):
        return {"workdir": self.workdir, "tag": tag, "n": self.cfg["n"], "chunk": self.cfg["chunk"],
                "nnz": self.meta[tag]["nnz"],
                "layout": layout, "codec": codec, "op": op, "verify": verify,
                "file": os.path.join(self.workdir, f"{layout}_{codec}_{tag}.h5")}

    def run_one(self, job):
        cmd = [sys.executable, os.path.join(HERE, "density.py"), "worker", json.dumps(job)]
        if job.get("timed", True):
            self.quiet.wait()
            back_free_memory()
        p = subprocess.run(cmd, env=self.env(job["layout"]), capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"failed: {job['op']} {job['layout']} {job['codec']} {job['tag']}\n{p.stderr[-3000:]}")
        return json.loads(p.stdout.strip().splitlines()[-1])

    def cases(self):
        for d in self.cfg["densities"]:
            tag = density.density_tag(d)
            for codec in codecs_of(self.cfg):
                for layout in density.LAYOUTS:
                    yield d, tag, codec, layout, ("write", "read", "readbuf", "points")
                if d <= density.POINTS_MAX_DENSITY:
                    yield d, tag, codec, "sparse-pts", ("write",)

    def run(self):
        t0 = time.time()
        log(f"preparing inputs: {self.cfg['n']}x{self.cfg['n']} float32, densities {self.cfg['densities']}")
        self.meta = density.prepare(self.workdir, self.cfg["n"], self.cfg["densities"], self.cfg["points"])
        for rep in range(self.cfg["reps"]):
            for d, tag, codec, layout, ops in self.cases():
                for op in ops:
                    out = self.run_one(self.job(op, layout, codec, tag, verify=rep == 0))
                    r = self.results.setdefault((op, layout, codec, tag), {"times": [], "rss_peak": [],
                                                                           "rss_base": []})
                    r["times"].append(out["time"])
                    r["rss_peak"].append(out["rss_peak"])
                    r["rss_base"].append(out["rss_base"])
                    if "file_size" in out:
                        r["file_size"] = out["file_size"]
                if layout == "sparse-pts" and rep == 0:
                    # Same content as the sparse layout's file: check it once (not timed).
                    self.run_one(self.job("read", "sparse", codec, tag, verify=True) |
                                 {"file": os.path.join(self.workdir, f"sparse-pts_{codec}_{tag}.h5"),
                                  "timed": False})
            log(f"round {rep + 1}/{self.cfg['reps']} done after {time.time() - t0:.0f} s")
        self.elapsed = time.time() - t0

    # --- access -------------------------------------------------------------------------------
    def get(self, op, layout, codec, tag, what="time"):
        r = self.results.get((op, layout, codec, tag))
        if r is None:
            return None
        if what == "time":
            return min(r["times"])
        if what == "rss":
            return max(r["rss_peak"])
        if what == "base":
            return min(r["rss_base"])
        return r.get(what)

    @classmethod
    def from_json(cls, raw, workdir=None):
        sw = cls(workdir, raw["config"])
        sw.meta = raw["meta"]
        sw.elapsed = raw["elapsed_s"]
        sw.busy = raw.get("busy", {})
        for r in raw["results"]:
            r = dict(r)
            key = (r.pop("op"), r.pop("layout"), r.pop("codec"), r.pop("tag"))
            sw.results[key] = r
        return sw

    def to_json(self):
        return {"config": self.cfg, "meta": self.meta, "elapsed_s": self.elapsed, "busy": self.busy,
                "results": [{"op": k[0], "layout": k[1], "codec": k[2], "tag": k[3], **v}
                            for k, v in self.results.items()]}


def fmt_size(b):
    if b is None:
        return "-"
    if b < MiB:
        return f"{b / 1024:,.1f} KiB"
    return f"{b / MiB:,.2f} MiB"


def fmt_ms(s):
    if s is None:
        return "-"
    return f"{s * 1000:,.1f}" if s < 10 else f"{s * 1000:,.0f}"


def fmt_ratio(a, b, ok=None):
    if a is None or b is None or b == 0:
        return "-"
    text = f"{a / b:.2f}"
    return f"**{text}**" if ok is False else text


def density_report(sw):
    cfg = sw.cfg
    n = cfg["n"]
    data_size = n * n * 4
    rss_limit = data_size + RSS_MARGIN
    dens = cfg["densities"]
    tags = [density.density_tag(d) for d in dens]
    L = []
    verdicts = []   # (target, met, detail)
    L.append(f"Density sweep: {n}x{n} float32 ({fmt_size(data_size)}), chunks {cfg['chunk']}x{cfg['chunk']}. "
             "sparse = h5sparse sparse dataset written with `dset[...] = dense_array` "
             "(`Sparse(fill_is_undefined=True)`: the zeros stay undefined); dense = native chunked dataset, same "
             "chunks and codec; CSR = anndata's data/indices/indptr datasets with the codec. Codecs: none, and "
             "blosc-lz4 (clevel 5, byte shuffle, 1 thread) on every dataset (sparse: both sections). Files in "
             "/dev/shm; times in ms, best of "
             f"{cfg['reps']}; ratios < 1 favour sparse; **bold** = target missed.\n")

    # File size
    rows = []
    for codec in codecs_of(cfg):
        for d, tag in zip(dens, tags):
            s, dn, c = (sw.get("write", lay, codec, tag, "file_size") for lay in ("sparse", "dense", "csr"))
            ok_csr = s < c
            ok_dense = s < dn if d <= SMALLER_THAN_DENSE_DENSITY else None
            verdicts.append((f"file size < CSR ({codec}, {d:.1%})", ok_csr, f"{s / c:.3f}x"))
            if ok_dense is not None:
                verdicts.append((f"file size < dense ({codec}, {d:.1%})", ok_dense, f"{s / dn:.3f}x"))
            rows.append([codec, f"{d:.1%}", f"{sw.meta[tag]['nnz']:,}", fmt_size(s), fmt_size(dn), fmt_size(c),
                         fmt_ratio(s, dn, ok_dense), fmt_ratio(s, c, ok_csr)])
    L.append("#### File size\n")
    L.append(results.md_table(["codec", "density", "defined", "sparse", "dense", "CSR", "sparse/dense", "sparse/CSR"], rows))
    L.append("")

    # Write / full read / full read into a reused buffer
    titles = {"write": "Write (create, write all, close)",
              "read": "Full read (open, read all into a new array, close)",
              "readbuf": "Full read into a reused buffer (open, `read_direct` into an array written beforehand, close)"}
    target_names = {"write": "write", "read": "read into a new array", "readbuf": "read into a reused buffer"}
    for op, title in titles.items():
        if not any(sw.get(op, "sparse", codec, tag) is not None for codec in codecs_of(cfg) for tag in tags):
            continue  # a sweep recorded before this operation existed
        name = target_names[op]
        rows = []
        for codec in codecs_of(cfg):
            for d, tag in zip(dens, tags):
                s, dn, c = (sw.get(op, lay, codec, tag) for lay in ("sparse", "dense", "csr"))
                ok = None
                if d <= FAST_DENSITY:
                    ok = s <= 0.5 * dn
                    verdicts.append((f"{name} >= 2x faster than dense ({codec}, {d:.1%})", ok, f"{s / dn:.2f}x"))
                elif d >= 1.0:
                    ok = s <= 1.25 * dn
                    verdicts.append((f"{name} <= 1.25x dense at 100% ({codec})", ok, f"{s / dn:.2f}x"))
                row = [codec, f"{d:.1%}", fmt_ms(s)]
                if op == "write":
                    row.append(fmt_ms(sw.get(op, "sparse-pts", codec, tag)))
                row += [fmt_ms(dn), fmt_ms(c), fmt_ratio(s, dn, ok), fmt_ratio(s, c)]
                rows.append(row)
        header = ["codec", "density", "sparse"] + (["sparse, points"] if op == "write" else []) + \
                 ["dense", "CSR", "sparse/dense", "sparse/CSR"]
        L.append(f"#### {title}, ms\n")
        L.append(results.md_table(header, rows))
        if op == "write":
            L.append("\n\"sparse, points\": the same sparse dataset written from coordinates instead (one H5Dwrite of "
                     "an element selection of the defined elements), measured up to "
                     f"{density.POINTS_MAX_DENSITY:.0%}. The sparse column is the dense-array write.")
        elif op == "read":
            L.append("\nsparse and dense return the dense array; CSR returns its three arrays. h5py allocates the "
                     "result (numpy.zeros: calloc), so the first write of each of its pages faults inside the clock, "
                     "whatever the layout.")
        else:
            L.append("\nThe same reads into arrays allocated and written before the clock starts "
                     "(`dset.read_direct(out)`; CSR: its three arrays): the storage layer without the page faults of "
                     "a new result array.")
        L.append("")

    # Point reads
    rows = []
    for codec in codecs_of(cfg):
        for d, tag in zip(dens, tags):
            s, dn, c = (sw.get("points", lay, codec, tag) for lay in ("sparse", "dense", "csr"))
            rows.append([codec, f"{d:.1%}", fmt_ms(s), fmt_ms(dn), fmt_ms(c), fmt_ratio(s, dn), fmt_ratio(s, c)])
    L.append(f"#### {cfg['points']:,} random point reads `dset[i, j]`, ms in total\n")
    L.append(results.md_table(["codec", "density", "sparse", "dense", "CSR", "sparse/dense", "sparse/CSR"], rows))
    L.append("\nCSR: indptr[i:i+2], indices[a:b], data[a+k] from the file per point. Default chunk cache "
             "(1 MiB) for every layout.\n")

    # Peak RSS
    rows = []
    base = min(sw.get(op, lay, codec, tag, "base") for op in ("write", "read") for lay in ("sparse", "dense", "csr")
               for codec in codecs_of(cfg) for tag in tags)
    for codec in codecs_of(cfg):
        for d, tag in zip(dens, tags):
            row = [codec, f"{d:.1%}"]
            for lay in ("sparse", "dense", "csr"):
                for op in ("write", "read"):
                    v = sw.get(op, lay, codec, tag, "rss")
                    if lay == "sparse":
                        ok = v <= rss_limit
                        verdicts.append((f"peak RSS {op} <= data + 64 MiB ({codec}, {d:.1%})", ok,
                                         f"{v / MiB:.0f} MiB"))
                        row.append(f"{v / MiB:.0f}" if ok else f"**{v / MiB:.0f}**")
                    else:
                        row.append(f"{v / MiB:.0f}")
            rows.append(row)
    L.append("#### Peak RSS, MiB (VmHWM of the measuring process)\n")
    L.append(results.md_table(["codec", "density", "sparse write", "sparse read", "dense write", "dense read",
                       "CSR write", "CSR read"], rows))
    L.append(f"\nLimit: data ({fmt_size(data_size)}) + 64 MiB = {rss_limit / MiB:.0f} MiB, Python + numpy + h5py "
             f"included ({base / MiB:.0f} MiB after imports, before any data). The write processes hold their "
             "input (the dense array; CSR: its arrays) in memory.\n")

    # Verdicts
    L.append("#### Targets\n")
    groups = {}
    for text, ok, detail in verdicts:
        key = text.split(" (")[0]
        groups.setdefault(key, []).append((text[len(key):].strip(" ()"), ok, detail))
    rows = []
    for key, items in groups.items():
        missed = [f"{case}: {detail}" for case, ok, detail in items if not ok]
        rows.append([key, "yes" if not missed else f"**no** ({len(missed)} of {len(items)})",
                     "; ".join(missed) if missed else "all " + str(len(items)) + " cases"])
    L.append(results.md_table(["target", "met", "missed cases (sparse/reference)"], rows, right_from=3))
    L.append(f"\nSweep time: {sw.elapsed:.0f} s. {busy_sentence(sw.busy)}".rstrip())
    return "\n".join(L) + "\n", verdicts


def plot(sw, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        log("matplotlib is not installed: no plot (add python3-matplotlib to scripts/dev's toolchain_packages)")
        return False
    dens = sw.cfg["densities"]
    tags = [density.density_tag(d) for d in dens]
    x = [100 * d for d in dens]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    colors = {"sparse": "tab:blue", "dense": "tab:orange", "csr": "tab:green"}
    styles = {"none": "-", "blosc-lz4": "--"}
    for ax, (op, what, ylabel) in zip(axes, (("write", "file_size", "file size, MiB"),
                                             ("write", "time", "write time, ms"),
                                             ("read", "time", "full read time, ms"))):
        for codec in codecs_of(sw.cfg):
            for lay in ("sparse", "dense", "csr"):
                ys = [sw.get(op, lay, codec, t, what) for t in tags]
                ys = [y / MiB if what == "file_size" else y * 1000 for y in ys]
                ax.plot(x, ys, styles[codec], color=colors[lay], marker="o", ms=3,
                        label=f"{'CSR' if lay == 'csr' else lay}, {codec}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(x)
        ax.set_xticklabels([f"{v:g}" for v in x])
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("density, % defined")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    n = sw.cfg["n"]
    fig.suptitle(f"h5sparse density sweep: {n}x{n} float32, chunks {sw.cfg['chunk']}x{sw.cfg['chunk']}, "
                 f"best of {sw.cfg['reps']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_md(results_dir, name, head, md):
    text = "\n".join(head + [md])
    with open(os.path.join(results_dir, name), "w") as f:
        f.write(text)
    print(text, flush=True)
    return md


def render_density(sw, results_dir, head):
    md, verdicts = density_report(sw)
    png = os.path.join(results_dir, "density.png")
    if plot(sw, png):
        md += f"\nPlot: `{os.path.relpath(png, REPO)}`.\n"
    else:
        md += "\nNo plot: matplotlib is not installed in the toolchain (python3-matplotlib).\n"
    return write_md(results_dir, "density.md", head, md), verdicts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1024x1024 sweep, 200 point reads, 1 repetition")
    ap.add_argument("--reps", type=int, help="repetitions per measurement (best of N; default 3, quick 1)")
    ap.add_argument("--only", default="lifeboat,density", help="comma-separated subset of lifeboat,density")
    ap.add_argument("--densities", help="comma-separated densities of the sweep (e.g. 0.1 for the 10%% cells only; "
                    "default 0.001,0.01,0.1,0.5,1)")
    ap.add_argument("--codecs", help="comma-separated subset of " + ",".join(density.CODECS) + " (default all)")
    ap.add_argument("--dir", help="scratch directory for inputs and files (default: a new one in /dev/shm)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--results", default=os.path.join(HERE, "results"), help="output directory")
    ap.add_argument("--quiet-wait", type=float, default=1.0,
                    help="seconds to wait before each measurement for other processes to go quiet (default 1)")
    ap.add_argument("--quiet-budget", type=float, default=60.0,
                    help="total seconds the sweep may spend waiting for quiet (default 60)")
    ap.add_argument("--from-json", metavar="FILE",
                    help="measure nothing: re-render the Markdown and the plot from a sparse.json")
    results.add_argument(ap)
    args = ap.parse_args()
    os.makedirs(args.results, exist_ok=True)
    summary = []
    section = []   # Markdown of the RESULTS.md section, after its preamble

    if args.from_json:
        with open(args.from_json) as f:
            raw = json.load(f)
        head = raw["preamble"]
        partial = raw.get("partial", raw.get("quick", True))
        if "lifeboat" in raw:
            md, verdicts = lifeboat.report(raw["lifeboat"])
            section.append(write_md(args.results, "lifeboat.md", head, md))
            summary += verdicts
        if "density" in raw:
            md, verdicts = render_density(Sweep.from_json(raw["density"]), args.results, head)
            section.append(md)
            summary += verdicts
    else:
        check_environment()
        cfg = dict(QUICK if args.quick else FULL)
        if args.reps:
            cfg["reps"] = args.reps
        if args.densities:
            cfg["densities"] = [float(d) for d in args.densities.split(",")]
        if args.codecs:
            cfg["codecs"] = args.codecs.split(",")
            if not set(cfg["codecs"]) <= set(density.CODECS):
                raise SystemExit(f"--codecs takes a subset of {','.join(density.CODECS)}, got {args.codecs}")
        only = set(args.only.split(","))
        if not only <= {"lifeboat", "density"}:
            raise SystemExit(f"--only takes lifeboat and/or density, got {args.only}")
        workdir = args.dir or tempfile.mkdtemp(prefix="h5sparse-bench-sparse-",
                                               dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        os.makedirs(workdir, exist_ok=True)
        head = preamble(args.quick)
        # Anything short of the full run writes no RESULTS.md section unless given --results-md.
        partial = bool(args.quick or args.reps or args.densities or args.codecs or only != {"lifeboat", "density"})
        raw = {"preamble": head, "quick": args.quick, "partial": partial}
        try:
            if "lifeboat" in only:
                log("Lifeboat patterns")
                raw["lifeboat"] = lifeboat.run(workdir, log)
                md, verdicts = lifeboat.report(raw["lifeboat"])
                section.append(write_md(args.results, "lifeboat.md", head, md))
                summary += verdicts
            if "density" in only:
                sw = Sweep(workdir, cfg, args.quiet_wait, args.quiet_budget)
                sw.run()
                raw["density"] = sw.to_json()
                md, verdicts = render_density(sw, args.results, head)
                section.append(md)
                summary += verdicts
            with open(os.path.join(args.results, "sparse.json"), "w") as f:
                json.dump(raw, f, indent=1)
        finally:
            if not args.keep and not args.dir:
                shutil.rmtree(workdir, ignore_errors=True)
    results.write(args, "bench/sparse/run.py", "\n".join(head + section), quick=partial)
    missed = [v for v in summary if not v[1]]
    log(f"{len(summary) - len(missed)} of {len(summary)} target checks met; results in "
        f"{os.path.relpath(args.results, REPO)}/")


if __name__ == "__main__":
    main()
