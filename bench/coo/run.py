#!/usr/bin/env python3
"""Coordinate I/O side by side: h5sparse against COO and CSR triplets, TileDB and dense HDF5.

    scripts/dev run python3 bench/coo/run.py            # full run (long: run it on a quiet machine)
    scripts/dev run python3 bench/coo/run.py --quick --results-md /dev/shm/RESULTS.md   # smoke run
    scripts/dev run python3 bench/coo/run.py --case 4096/1%/256 --reps 5   # some cases only
    scripts/dev run python3 bench/coo/run.py --case 4096/10%/256 --instructions   # + callgrind counts

Cases are SIDE/ELEMENTS/CHUNK: a SIDE x SIDE float32 array, ELEMENTS defined (a percentage of
the array or a count), CHUNK x CHUNK chunks (TileDB: the tile extent); --chunk overrides every
case's chunk. Default: 4096^2 at 0.01%, 0.1%, 1% and 10% (chunks 256), 65536^2 at 0.01%, 0.1%
and 1% (chunks 1024; 10% would need 429 M elements in memory), 2^20 x 2^20 with 2e5 and 2e6
elements (chunks 1024, and 16384: 0.2 and 1.9 elements a chunk against 49 and 477, the per-chunk
cost of HDF5's index against chunks sized for the density). The layouts (bench/coo/layouts.py):
h5sparse, COO, CSR, TileDB with the HDF5 chunk as tile, TileDB with its defaults, and dense HDF5
where the array fits in --dense-max-mib. Codecs: none and blosc-lz4 (Blosc lz4, clevel 5, byte shuffle, one thread;
TileDB: byte shuffle + LZ4).

Operations: write all (from coordinates in random order); read all; a 1% box (a tenth of each
side); a row band and a column band (one chunk wide); --points look-ups, one call each (half at
defined elements); update 10% of the values; erase the 1% box. Update and erase work on a copy
of the written file, made before the clock. Every measurement is a fresh process (wall time from
opening the file to closing it, imports and input loading before the clock; peak RSS = VmHWM of
that process), best of --reps, the repetitions in rounds; before each the harness waits for
quiet (bench/machine.py) and hands back free memory. The first round checks what each read
returned against the input. Files in /dev/shm.

h5sparse needs the connector's COO calls (h5sparse.write_coo, read_coo): without them its
column says "not built". TileDB needs TileDB-Py: bench/coo/install-tiledb puts it in
build/bench-site/, which this script adds to sys.path; without it the TileDB columns say "not
installed". The tables go to stdout and bench/coo/results/coo.{md,json}.

The full matrix takes hours, so it may be measured a few cases at a time: every run with the
full settings (no --quick, --chunk, --points, and at least 3 repetitions) records its cases in
bench/coo/measured.json (committed: each case's latest such run, with its command, commit,
date and load) and rewrites this script's section of bench/RESULTS.md from all the cases
recorded there, each table row of a case measured in one run (--results-md PATH: of another
file; a run with other settings writes a section only there, from its own cases). --report
rewrites that section from measured.json alone.
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from machine import Quiet, back_free_memory, busy_sentence, peak_rss  # noqa: E402
import layouts  # noqa: E402
import results  # noqa: E402

layouts.use_bench_site()

MiB = 1 << 20
FULL_CASES = ["4096/0.01%/256", "4096/0.1%/256", "4096/1%/256", "4096/10%/256",
              "65536/0.01%/1024", "65536/0.1%/1024", "65536/1%/1024",
              "1048576/2e5/1024", "1048576/2e6/1024", "1048576/2e5/16384", "1048576/2e6/16384"]
QUICK_CASES = ["1024/0.1%/128", "1024/1%/128", "1048576/2e4/1024"]
CODECS = ("none", "blosc-lz4")
COUNTED_LAYOUTS = ("h5sparse", "coo", "csr")  # --instructions
LAYOUT_ORDER = ("h5sparse", "coo", "csr", "tiledb", "tiledb-default", "dense")
TITLES = {"h5sparse": "h5sparse", "coo": "COO", "csr": "CSR", "tiledb": "TileDB", "tiledb-default": "TileDB defaults",
          "dense": "dense"}
OPS = ("write", "read", "box", "rows", "cols", "points", "update", "erase")
OP_TITLES = {"write": "Write all", "read": "Read all", "box": "Read a 1% box", "rows": "Read a row band",
             "cols": "Read a column band", "points": "Point look-ups", "update": "Update 10% of the values",
             "erase": "Erase the 1% box"}


def log(msg):
    print(f"[bench-coo] {msg}", file=sys.stderr, flush=True)


# --- cases and inputs -----------------------------------------------------------------------

def parse_case(text, chunk=None):
    side, elements, c = text.split("/")
    side = int(side)
    nnz = round(float(elements[:-1]) / 100 * side * side) if elements.endswith("%") else int(float(elements))
    return {"name": text if chunk is None else f"{side}/{elements}/{chunk}", "side": side, "shape": [side, side],
            "nnz": nnz, "chunk": int(chunk or c), "label": f"{side}^2, {elements}, chunks {int(chunk or c)}^2"}


def regions(case):
    """(r0, r1, c0, c1) of the box, row band and column band."""
    n, c = case["side"], min(case["chunk"], case["side"])
    b = max(1, n // 10)
    r0, c0 = int(n * 0.37), int(n * 0.53)
    band = c * ((n // c) // 3)
    return {"box": [r0, r0 + b, c0, c0 + b], "rows": [band, band + c, 0, n], "cols": [0, n, band, band + c]}


def prepare(workdir, case, npoints, seed=2026):
    """Writes the case's inputs as .npy files: coords (random order), values, the 10% to update,
    the look-up points and what they should find."""
    rng = np.random.default_rng(seed)
    n, k = case["side"], case["nnz"]
    keys = np.unique(rng.integers(0, n * n, size=k + k // 8 + 16, dtype=np.int64))
    while len(keys) < k:
        keys = np.unique(np.concatenate([keys, rng.integers(0, n * n, size=k, dtype=np.int64)]))
    keys = rng.permutation(keys)[:k]
    coords = np.stack([keys // n, keys % n], axis=1)
    values = (1 + rng.random(k)).astype(np.float32)
    upd = rng.choice(k, size=k // 10, replace=False)
    hits = coords[rng.choice(k, size=min(k, npoints // 2), replace=False)]
    pts = np.concatenate([hits, rng.integers(0, n, size=(npoints - len(hits), 2))])
    order = np.argsort(keys)
    found = np.searchsorted(keys, pts[:, 0] * n + pts[:, 1], sorter=order)
    found = order[np.minimum(found, k - 1)]
    expected = np.where(keys[found] == pts[:, 0] * n + pts[:, 1], values[found], 0).astype(np.float32)
    base = os.path.join(workdir, case_tag(case))
    for name, a in (("coords", coords), ("values", values), ("upd_coords", coords[upd]),
                    ("upd_values", values[upd] + 1), ("points", pts), ("expected", expected)):
        np.save(f"{base}_{name}.npy", a)


def case_tag(case):
    return case["name"].replace("/", "_").replace("%", "pct").replace(".", "p")


# --- worker ---------------------------------------------------------------------------------

def check(job, got, base):
    """Compares what a read returned with the input (count and sum of the values in its region)."""
    coords, values = np.load(base + "_coords.npy"), np.load(base + "_values.npy")
    if job["op"] == "points":
        if not np.array_equal(got, np.load(base + "_expected.npy")):
            raise SystemExit(f"{job['layout']}/{job['codec']}/{job['case']}: points differ from the input")
        return
    if job["op"] != "read":
        r0, r1, c0, c1 = job["region"]
        inside = (coords[:, 0] >= r0) & (coords[:, 0] < r1) & (coords[:, 1] >= c0) & (coords[:, 1] < c1)
        values = values[inside]
    got = np.asarray(got).ravel()
    if job["layout"] == "dense":
        got = got[got != 0]
    if len(got) != len(values) or not np.isclose(got.sum(dtype=np.float64), values.sum(dtype=np.float64), rtol=1e-9):
        raise SystemExit(f"{job['layout']}/{job['codec']}/{job['case']} {job['op']}: read {len(got)} values, "
                         f"expected {len(values)} (or their sum differs)")


def worker(job):
    base = os.path.join(job["workdir"], job["tag"])
    out = {"rss_base": peak_rss()}
    layout = layouts.LAYOUTS[job["layout"]](job["spec"], job["codec"])
    op, path = job["op"], job["file"]
    layouts.preload(job["layout"], op)
    args = ()
    if op == "write":
        args = (np.load(base + "_coords.npy"), np.load(base + "_values.npy"))
    elif op == "update":
        args = (np.load(base + "_upd_coords.npy"), np.load(base + "_upd_values.npy"))
    elif op == "points":
        args = (np.load(base + "_points.npy"),)
    elif op in ("box", "rows", "cols", "erase"):
        args = (job["region"],)
    call = {"write": layout.write, "update": layout.update, "points": layout.points, "erase": layout.erase}.get(
        op, layout.read)
    counting = job.get("counted")  # under callgrind, instrumented only around the measured call
    if counting:
        subprocess.run(["callgrind_control", "--instr=on", str(os.getpid())], check=True, capture_output=True)
    t0 = time.perf_counter()
    got = call(path, *args)
    out["time"] = time.perf_counter() - t0
    if counting:
        subprocess.run(["callgrind_control", "--instr=off", str(os.getpid())], check=True, capture_output=True)
    out["rss_peak"] = peak_rss()
    if op in ("write", "update", "erase"):
        out["file_size"] = layouts.size_on_disk(path)
    elif job["verify"]:
        check(job, got, base)
    print(json.dumps(out))


# --- harness --------------------------------------------------------------------------------

def available_layouts(dense_max, case):
    """Layout -> None (measured) or why not."""
    import importlib.util
    import h5sparse
    why = {name: None for name in LAYOUT_ORDER}
    if not hasattr(h5sparse, "write_coo"):
        why["h5sparse"] = "not built"
    if importlib.util.find_spec("tiledb") is None:
        why["tiledb"] = why["tiledb-default"] = "not installed"
    if case["side"] ** 2 * 4 > dense_max:
        why["dense"] = "too large"
    return why


class Harness:
    def __init__(self, workdir, cases, cfg, quiet):
        self.workdir, self.cases, self.cfg, self.quiet = workdir, cases, cfg, quiet
        self.results = {}   # (case, layout, codec, op) -> {"times": [...], "rss_peak": [...], "file_size": ...}
        self.missing = {}   # (case, layout) -> reason
        self.failed = {}    # (case, layout, codec, op) -> the end of the worker's stderr
        self.memory_limit = int(available_memory() * 0.75)

    def env(self, layout):
        env = {k: v for k, v in os.environ.items() if not k.startswith("BLOSC_")}
        env["BLOSC_NTHREADS"] = "1"
        if layout != "h5sparse":
            env.pop("HDF5_VOL_CONNECTOR", None)   # stock HDF5 (+ our Blosc plugin)
        return env

    def run_one(self, job, counted=False):
        """Output of one measurement, or None when the worker failed (recorded, the run goes on).
        counted: the worker runs under callgrind, instrumented only during the measured call
        (it turns instrumentation on and off itself), and the output has its "instructions"."""
        self.quiet.wait()
        back_free_memory()

        def limit():   # a runaway worker fails alone instead of pushing the shared machine into OOM
            if not counted:  # valgrind reserves more address space than it uses
                resource.setrlimit(resource.RLIMIT_AS, (self.memory_limit, self.memory_limit))
        cmd = [sys.executable, os.path.abspath(__file__), "worker", json.dumps(dict(job, counted=counted))]
        counts = os.path.join(self.workdir, "callgrind.out")
        if counted:
            cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={counts}"] + cmd
        p = subprocess.run(cmd, env=self.env(job["layout"]), capture_output=True, text=True, preexec_fn=limit)
        if p.returncode == 0:
            result = json.loads(p.stdout.strip().splitlines()[-1])
            if counted:
                with open(counts) as f:
                    result["instructions"] = next(int(line.split()[1]) for line in f if line.startswith("totals:"))
            return result
        key = (job["case"], job["layout"], job["codec"], job["op"])
        self.failed[key] = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1][:200]
        log(f"failed: {' '.join(key)}: {self.failed[key]}")
        return None

    def cells(self, case):
        why = available_layouts(self.cfg["dense_max"], case)
        for layout in LAYOUT_ORDER:
            if why[layout]:
                self.missing[(case["name"], layout)] = why[layout]
                continue
            for codec in (("default",) if layout == "tiledb-default" else CODECS):
                yield layout, codec

    def measure(self, case, layout, codec, verify, counted=False):
        tag = case_tag(case)
        ext = "tdb" if layout.startswith("tiledb") else "h5"
        written = os.path.join(self.workdir, f"{tag}_{layout}_{codec}.{ext}")
        spec = {"shape": case["shape"], "chunk": case["chunk"]}
        job = {"workdir": self.workdir, "tag": tag, "case": case["name"], "layout": layout, "codec": codec,
               "spec": spec, "verify": verify}
        remove(written)
        for op in OPS:
            path = written
            if op in ("update", "erase"):   # on a copy of the written file, made before the clock
                path = os.path.join(self.workdir, f"{tag}_{layout}_{codec}_{op}.{ext}")
                remove(path)
                (shutil.copytree if os.path.isdir(written) else shutil.copyfile)(written, path)
            out = self.run_one(dict(job, op=op, file=path, region=regions(case).get(op if op != "erase" else "box")),
                               counted)
            if out is None:
                if op == "write":
                    break
                continue
            r = self.results.setdefault((case["name"], layout, codec, op), {"times": [], "rss_peak": []})
            if counted:
                r["instructions"] = out["instructions"]
            else:
                r["times"].append(out["time"])
                r["rss_peak"].append(out["rss_peak"])
                if "file_size" in out:
                    r["file_size"] = out["file_size"]
            if path != written:
                remove(path)

    def run(self):
        t0 = time.time()
        for case in self.cases:
            log(f"inputs of {case['name']}: {case['nnz']:,} elements")
            prepare(self.workdir, case, self.cfg["points"])
        for rep in range(self.cfg["reps"]):
            for case in self.cases:
                for layout, codec in self.cells(case):
                    self.measure(case, layout, codec, verify=rep == 0)
                log(f"round {rep + 1}/{self.cfg['reps']}: {case['name']} done after {time.time() - t0:.0f} s")
        if self.cfg.get("instructions"):  # the layouts of the targets against triplets (TileDB by wall time)
            for case in self.cases:
                for layout, codec in self.cells(case):
                    if layout in COUNTED_LAYOUTS:
                        self.measure(case, layout, codec, verify=False, counted=True)
                log(f"instructions: {case['name']} done after {time.time() - t0:.0f} s")
        self.elapsed = time.time() - t0

    def get(self, case, layout, codec, op, what="time"):
        r = self.results.get((case, layout, "default" if layout == "tiledb-default" else codec, op))
        if r is None:
            return None
        if what in ("time", "rss"):
            samples = r["times"] if what == "time" else r["rss_peak"]
            return (min if what == "time" else max)(samples) if samples else None
        return r.get(what)

    def why(self, case, layout, codec, op):
        """What an empty cell says: not built / not installed / too large / failed."""
        codec = "default" if layout == "tiledb-default" else codec
        if (case, layout, codec, op) in self.failed or (case, layout, codec, "write") in self.failed:
            return "failed"
        return self.missing.get((case, layout), "-")

    def to_json(self):
        return {"config": self.cfg, "cases": self.cases, "elapsed_s": self.elapsed, "busy": self.quiet.busy,
                "missing": [[c, lay, why] for (c, lay), why in self.missing.items()],
                "failed": [[*k, why] for k, why in self.failed.items()],
                "results": [{"case": k[0], "layout": k[1], "codec": k[2], "op": k[3], **v}
                            for k, v in self.results.items()]}


def available_memory():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 1 << 34


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


# --- cases measured over several runs ------------------------------------------------------

MEASURED = os.path.join(HERE, "measured.json")


class Measured:
    """The cases of bench/coo/measured.json (each from its latest full-settings run), read the
    way report() reads a Harness."""

    def __init__(self, runs):
        order = {name: i for i, name in enumerate(FULL_CASES)}
        self.runs = dict(sorted(runs.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
        first = next(iter(self.runs.values()))
        self.cfg = first["config"]
        self.cases = [parse_case(name) for name in self.runs]  # labels as this script makes them
        self.results, self.missing, self.failed = {}, {}, {}
        for r in self.runs.values():
            self.results.update({(x["case"], x["layout"], x["codec"], x["op"]): x for x in r["results"]})
            self.missing.update({(c, lay): why for c, lay, why in r["missing"]})
            self.failed.update({tuple(x[:4]): x[4] for x in r["failed"]})
        self.elapsed = sum(r["elapsed_s"] for r in self.runs.values())
        self.quiet = Quiet()
        for key in ("measurements", "started_busy", "waited_s"):
            self.quiet.busy[key] = sum(r["busy"].get(key, 0) for r in self.runs.values())
        self.quiet.busy["quiet_wait"] = first["busy"].get("quiet_wait", 0)

    get = Harness.get
    why = Harness.why

    def provenance(self):
        """Which run measured which case."""
        lines = ["Cases and the runs that measured them (bench/coo/measured.json):", ""]
        for name, r in self.runs.items():
            command, machine = r["preamble"][3], r["preamble"][6]  # as results.preamble lays them out
            lines.append(f"- {name}: `{command}`; {machine}")
        return lines + [""]


def record_measured(h, head, path=MEASURED):
    """Puts this run's cases into bench/coo/measured.json; returns every recorded case."""
    try:
        with open(path) as f:
            runs = json.load(f)
    except FileNotFoundError:
        runs = {}
    run = h.to_json()
    for case in h.cases:
        name = case["name"]
        runs[name] = {"preamble": head, "config": run["config"], "case": case, "elapsed_s": run["elapsed_s"] / len(h.cases),
                      "busy": run["busy"], "missing": [m for m in run["missing"] if m[0] == name],
                      "failed": [x for x in run["failed"] if x[0] == name],
                      "results": [x for x in run["results"] if x["case"] == name]}
    with open(path, "w") as f:
        json.dump(runs, f, indent=1)
    return runs


def measured_section(every):
    """The section of bench/RESULTS.md: every recorded case, each from its own run."""
    return "\n".join(["### Coordinate I/O", ""] + every.provenance() + [report(every)])


# --- report ---------------------------------------------------------------------------------

def ratio(a, b):
    return "-" if a is None or not b else f"{a / b:.2f}"


def report(h):
    cfg = h.cfg
    L = ["Coordinates in random order and float32 values in; h5sparse = sparse dataset (`Sparse(values=codec)`) "
         "through the connector, `write_coo` / `read_coo` / `erase`; COO = rows, cols, values (int64, int64, "
         "float32; sorted row-major at write); CSR = anndata's data / indices / indptr (scipy builds it); TileDB = "
         "sparse array with the HDF5 chunk as tile extent and the same codec (blosc-lz4: byte shuffle + LZ4; "
         "TileDB has no Blosc); TileDB defaults = its own tiles and filters, measured once; dense = chunked "
         f"float32 where the array fits in {cfg['dense_max'] // MiB:,} MiB. Box = a tenth of each side (1% of "
         f"the array); bands one chunk wide; {cfg['points']:,} point look-ups, one call each, half of them at "
         "defined elements. COO and CSR have no holes to fill: their update rewrites the values dataset and their "
         "erase rewrites all three; dense updates by read-modify-write of the whole array; TileDB updates and "
         "erases by a new fragment and a delete query; h5sparse in place. Times in ms, best of "
         f"{cfg['reps']}, one process per measurement, files in /dev/shm; \"vs triplets\" = h5sparse over the "
         "faster of COO and CSR, \"vs TileDB\" = h5sparse over TileDB with the same tiles and codec (< 1: h5sparse "
         "faster or smaller).", ""]
    if h.missing:
        notes = {}
        for (case, layout), why in h.missing.items():
            notes.setdefault((TITLES[layout], why), []).append(case)
        L += ["Not measured: " + "; ".join(f"{lay}, {why} ({', '.join(cs)})" for (lay, why), cs in notes.items())
              + ".", ""]
    cols = [TITLES[x] for x in LAYOUT_ORDER]

    def rows_of(op, what, fmt):
        rows = []
        for case in h.cases:
            for codec in CODECS:
                v = {lay: h.get(case["name"], lay, codec, op, what) for lay in LAYOUT_ORDER}
                triplet = min((x for x in (v["coo"], v["csr"]) if x is not None), default=None)
                cells = [fmt(v[lay]) if v[lay] is not None else h.why(case["name"], lay, codec, op)
                         for lay in LAYOUT_ORDER]
                rows.append([case["label"], codec] + cells + [ratio(v["h5sparse"], triplet),
                                                             ratio(v["h5sparse"], v["tiledb"])])
        return rows

    def ms(s):
        return f"{s * 1000:,.1f}" if s < 10 else f"{s * 1000:,.0f}"

    def mib(b):
        return f"{b / MiB:,.2f}"
    header = ["case", "codec"] + cols + ["vs triplets", "vs TileDB"]
    L += ["#### File size after writing, MiB", "", results.md_table(header, rows_of("write", "file_size", mib)), ""]
    for op in OPS:
        L += [f"#### {OP_TITLES[op]}, ms", "", results.md_table(header, rows_of(op, "time", ms)), ""]
    if cfg.get("instructions"):
        L += ["#### Instructions, millions (callgrind, instrumented during the measured call only; they do "
              "not move with the machine's load)", "",
              results.md_table(["case", "codec", "operation"] + cols + ["vs triplets", "vs TileDB"],
                               [r[:2] + [OP_TITLES[op]] + r[2:] for op in OPS
                                for r in rows_of(op, "instructions", lambda n: f"{n / 1e6:,.1f}")
                                if r[2] != "-"]), ""]  # cases measured without --instructions
    L += ["#### File size after the update and after the erase, MiB", ""]
    upd, era = rows_of("update", "file_size", mib), rows_of("erase", "file_size", mib)
    L += [results.md_table(["case", "codec", "after"] + cols + ["vs triplets", "vs TileDB"],
                   [r[:2] + ["update"] + r[2:] for r in upd] + [r[:2] + ["erase"] + r[2:] for r in era]), ""]
    L += ["#### Peak RSS of the write and of the full read, MiB (VmHWM of the measuring process)", ""]
    rows = []
    for case in h.cases:
        for codec in CODECS:
            row = [case["label"], codec]
            for lay in LAYOUT_ORDER:
                w, r = (h.get(case["name"], lay, codec, op, "rss") for op in ("write", "read"))
                read = f"{r / MiB:,.0f}" if r is not None else h.why(case["name"], lay, codec, "read")
                row.append(f"{w / MiB:,.0f} / {read}" if w is not None else h.why(case["name"], lay, codec, "write"))
            rows.append(row)
    L += [results.md_table(["case", "codec"] + cols, rows), ""]
    if h.failed:
        L += ["Failed measurements (the worker's last line): " + "; ".join(
            f"{TITLES[k[1]]} {k[2]} {k[0]} {k[3]}: `{why}`" for k, why in h.failed.items()) + ".", ""]
    L.append(f"Run time: {h.elapsed:.0f} s. {busy_sentence(h.quiet.busy)}".rstrip())
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",  # argparse formats help with %: doubled
                    help=f"cases {', '.join(QUICK_CASES)}; 100 points; 1 repetition".replace("%", "%%"))
    ap.add_argument("--case", action="append", help="SIDE/ELEMENTS/CHUNK (repeatable; default: the full list)")
    ap.add_argument("--chunk", type=int, help="chunk side (and TileDB tile extent) of every case")
    ap.add_argument("--reps", type=int, help="repetitions (best of N; default 3, --quick 1)")
    ap.add_argument("--points", type=int, help="point look-ups (default 1000, --quick 100)")
    ap.add_argument("--instructions", action="store_true",
                    help="also count the instructions of h5sparse, COO and CSR (callgrind; about 15 s a measurement)")
    ap.add_argument("--dense-max-mib", type=int, default=1024, help="largest dense array measured (default 1024)")
    ap.add_argument("--quiet-wait", type=float, default=1.0, help="seconds to wait for quiet before each measurement")
    ap.add_argument("--quiet-budget", type=float, default=120.0, help="seconds of such waiting in all")
    ap.add_argument("--dir", help="scratch directory (default: a new one in /dev/shm)")
    ap.add_argument("--results", default=os.path.join(HERE, "results"), help="output directory")
    ap.add_argument("--measured", default=MEASURED, help="the record of full-settings cases (default %(default)s)")
    ap.add_argument("--report", action="store_true",
                    help="measure nothing: rewrite the section of bench/RESULTS.md from --measured")
    results.add_argument(ap)
    args = ap.parse_args()
    if args.report:
        with open(args.measured) as f:
            results.write(args, "bench/coo/run.py", measured_section(Measured(json.load(f))), quick=False)
        return
    cases = [parse_case(c, args.chunk) for c in (args.case or (QUICK_CASES if args.quick else FULL_CASES))]
    cfg = {"reps": args.reps or (1 if args.quick else 3), "points": args.points or (100 if args.quick else 1000),
           "dense_max": args.dense_max_mib * MiB, "instructions": args.instructions}
    partial = bool(args.quick or args.chunk or (args.reps and args.reps < 3) or args.points
                   or any(c not in FULL_CASES for c in args.case or []))
    head = results.preamble("Coordinate I/O", partial)
    workdir = args.dir or tempfile.mkdtemp(prefix="h5sparse-bench-coo-", dir="/dev/shm")
    os.makedirs(workdir, exist_ok=True)
    try:
        h = Harness(workdir, cases, cfg, Quiet(args.quiet_wait, args.quiet_budget))
        h.run()
    finally:
        if not args.dir:
            shutil.rmtree(workdir, ignore_errors=True)
    md = "\n".join(head + [report(h)])
    print(md, flush=True)
    os.makedirs(args.results, exist_ok=True)
    with open(os.path.join(args.results, "coo.md"), "w") as f:
        f.write(md)
    with open(os.path.join(args.results, "coo.json"), "w") as f:
        json.dump({"preamble": head, **h.to_json()}, f, indent=1)
    if not partial:  # the section shows every case recorded so far, each from its own run
        md = measured_section(Measured(record_measured(h, head, args.measured)))
    results.write(args, "bench/coo/run.py", md, quick=partial)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
    else:
        main()
