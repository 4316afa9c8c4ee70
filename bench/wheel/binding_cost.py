#!/usr/bin/env python3
"""What the run-time HDF5 binding costs, in instructions (issue 35's target: within 1.02x).

Run on the host from the repository root (it starts the toolchain root itself):

    bench/wheel/binding_cost.py                 # builds the two trees, measures, writes the section
    bench/wheel/binding_cost.py --wheel dist/wheels/hdf5_sparse-0.1.0-py3-none-manylinux_2_28_x86_64.whl
    bench/wheel/binding_cost.py --quick --results-md /dev/shm/RESULTS.md   # smaller cases

The comparison that isolates the binding: two Release builds in the HDF5 1.14 toolchain root
(Debian trixie, g++ 14, HDF5 1.14.5, h5py 3.13), the same sources and compiler, one linking
libhdf5 (build-release/: PLT calls) and one with -DH5SPARSE_HDF5_AT_RUN_TIME=ON (build-bound/:
every HDF5 function an entry point of ours jumping through a slot filled by dlsym, every data
global read through its address; docs/DESIGN.md, "Wheels"). Unless --no-build, the script
builds both trees first (scripts/dev build; a no-op when they are up to date). Both run under the
root's Python and h5py, which link the system libhdf5: the bound plugins bind to it.

Cases, each a fresh process under `valgrind --tool=callgrind --instr-atstart=no`, instrumented
only around the measured call (callgrind_control, as bench/coo/run.py --instructions does), one
thread (H5SPARSE_NTHREADS=1, BLOSC_NTHREADS=1), PYTHONHASHSEED=0:
  * coordinates: bench/coo/run.py's worker, h5sparse layout, Blosc lz4, case 4096/10%/256
    (the README's performance row): write all (h5py.File .. write_coo .. close) and read all
    (h5py.File .. read_coo .. close, checked against the input after the count), through
    the connector, with the plugins of the side's build.
  * Blosc filter alone: no connector, h5py writes a 2048 x 2048 float32 field (smooth, seeded)
    into a chunked dataset (512 x 512 chunks, Blosc lz4, byte shuffle, clevel 5) and reads it
    back; HDF5 loads the side's Blosc plugin from HDF5_PLUGIN_PATH (before the count).
  * loading the Blosc plugin (for information, once per process): h5py.h5z.filter_avail(32001)
    in a fresh process: HDF5 finds and dlopens the plugin; the bound build also binds there.
Every side reads the same inputs (made once, by the linked side).

With --wheel (default: the newest dist/wheels/hdf5_sparse-*.whl, if any; --no-wheel skips it)
the wheel as users get it is measured too, on the host: a fresh venv of the host's python3 with
PyPI's h5py (--h5py, default 3.14.0: HDF5 1.14.6 inside) and the wheel (Zig's clang; pip's
downloads cached as test/wheel/run caches them). The coordinate case imports h5sparse first
(its zero-configuration start: the connector and the plugins for h5py's HDF5); the filter cases
put the wheel's plugin directory on HDF5_PLUGIN_PATH. Its ratio against the linked build mixes
compilers, HDF5 builds, Python and NumPy versions, so it is information, not the target.

The table goes to stdout and to this script's section of bench/RESULTS.md (--results-md PATH:
another file; a --quick run writes a section only there). --keep DIR keeps the callgrind.out
files (for callgrind_annotate) and the files written.
"""
import argparse
import glob
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, BENCH)
import results  # noqa: E402

REPO = results.REPO
NAME = "bench/wheel/binding_cost.py"
TARGET = 1.02
CASE, QUICK_CASE = "4096/10%/256", "1024/10%/128"
FIELD, QUICK_FIELD = (2048, 2048), (1024, 1024)
FIELD_CHUNK = (512, 512)
BLOSC_LZ4 = (0, 0, 0, 0, 5, 1, 1)  # h5sparse.Blosc("lz4").cd_values(): clevel 5, byte shuffle, lz4
CONNECTOR = "h5sparse under_vol=0;under_info={}"
H5PY_FOR_WHEEL = "3.14.0"
SERIES_DIR = "_hdf5_1_14"  # the wheel's build for HDF5 1.14 (h5py 3.11-3.15)
# (key, case, operation) in the table's order; "load" is for information.
MEASUREMENTS = [("coo-write", "coordinates", "write all"), ("coo-read", "coordinates", "read all"),
                ("filter-write", "Blosc filter alone", "write"), ("filter-read", "Blosc filter alone", "read"),
                ("filter-load", "loading the Blosc plugin", "once per process")]
TARGETED = ("coo-write", "coo-read", "filter-write", "filter-read")


def log(msg):
    print(f"[binding-cost] {msg}", file=sys.stderr, flush=True)


# --- worker (runs in the side's Python, under callgrind when counted) -------------------------

def coo_module():
    """bench/coo/run.py as a module: its inputs and its worker are the coordinate case's."""
    spec = importlib.util.spec_from_file_location("coo_run", os.path.join(BENCH, "coo", "run.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def instrument(on):
    """Callgrind's instrumentation of this process on or off (as bench/coo/run.py's worker)."""
    subprocess.run(["callgrind_control", f"--instr={'on' if on else 'off'}", str(os.getpid())], check=True,
                   capture_output=True)


def field(shape):
    """A smooth float32 field with a little noise (as filter_bench's `field`, smaller)."""
    import numpy as np
    rng = np.random.default_rng(2026)
    y, x = np.meshgrid(np.linspace(0, 1, shape[0]), np.linspace(0, 1, shape[1]), indexing="ij")
    f = 280 + 20 * y + 5 * x
    for k in range(1, 6):
        f += np.sin(2 * np.pi * (k * x + (6 - k) * y) + k) * (3.0 / k)
    return (f + rng.normal(0, 0.02, shape)).astype(np.float32)


def filter_worker(job):
    import h5py
    import numpy as np
    op, path = job["op"], job["file"]
    if op != "load":
        if not h5py.h5z.filter_avail(32001):  # the plugin loads before the count
            raise SystemExit("the Blosc filter (32001) is not available: is its plugin on HDF5_PLUGIN_PATH?")
        data = np.load(job["field"])

    def write():
        with h5py.File(path, "w") as f:
            f.create_dataset("x", data=data, chunks=tuple(job["chunk"]), compression=32001,
                             compression_opts=tuple(job["cd"]))

    def read():
        with h5py.File(path, "r") as f:
            return f["x"][...]

    call = {"write": write, "read": read, "load": lambda: h5py.h5z.filter_avail(32001)}[op]
    if job["counted"]:
        instrument(True)
    got = call()
    if job["counted"]:
        instrument(False)
    out = {}
    if op == "read" and not np.array_equal(got, data):
        raise SystemExit("the field read back differs from the one written")
    if op == "load" and not got:
        raise SystemExit("the Blosc filter (32001) did not load")
    if op == "write":
        with h5py.File(path, "r") as f:
            out["stored"] = f["x"].id.get_storage_size()
    print(json.dumps(out))


def worker(job):
    kind = job["kind"]
    if kind == "prepare":
        import numpy as np
        coo = coo_module()
        coo.prepare(job["workdir"], coo.parse_case(job["case"]), 100)
        np.save(job["field"], field(tuple(job["shape"])))
        print(json.dumps({}))
    elif kind == "info":
        import platform
        import h5py
        import numpy
        print(json.dumps({"python": platform.python_version(), "numpy": numpy.__version__, "h5py": h5py.__version__,
                          "hdf5": h5py.version.hdf5_version}))
    elif kind == "coo":
        # h5sparse first: from a wheel that is the zero-configuration start (connector and plugins
        # for h5py's HDF5); in a build tree the environment has them already and it changes nothing.
        import h5sparse  # noqa: F401
        coo_module().worker(job)
    else:
        filter_worker(job)


# --- harness (on the host) ----------------------------------------------------------------------

class Side:
    """One build and where it runs: a tree in the toolchain root (`root_build`), or the wheel in
    a venv on the host; `command` wraps a command line for it."""

    def __init__(self, name, python, plugins, library=None, root_build=None):
        self.name, self.python, self.plugins, self.library, self.root_build = name, python, plugins, library, root_build
        self.wheel = root_build is None

    def command(self, argv, variables):
        if self.root_build:  # inside the HDF5 1.14 toolchain root, through scripts/dev
            words = [f"{k}={v}" for k, v in variables.items() if v is not None]
            unset = [w for k, v in variables.items() if v is None for w in ("-u", k)]
            return [os.path.join(REPO, "scripts", "dev"), "run", "env", *unset, *words, *argv], \
                dict(os.environ, H5SPARSE_HDF5="1.14", H5SPARSE_BUILD_DIR=self.root_build)
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "HDF5_PLUGIN_PATH", "HDF5_VOL_CONNECTOR", "H5SPARSE_LIBRARY")
               and not k.startswith("BLOSC_")}
        env.update({k: v for k, v in variables.items() if v is not None})
        return argv, env


class Harness:
    def __init__(self, workdir, case, shape):
        self.workdir, self.case, self.shape = workdir, case, shape
        self.field = os.path.join(workdir, "field.npy")
        self.counts = {}   # (side, key) -> instructions
        self.functions = {}  # (side, key) -> self_costs() of its callgrind.out
        self.stored = {}   # (side, key) -> bytes: the coordinate file, the filter's dataset
        self.info = {}     # side -> versions
        self.compilers = {}

    def run(self, side, job, counted=False):
        job = dict(job, counted=counted)
        argv = [side.python, os.path.abspath(__file__), "worker", json.dumps(job)]
        out = os.path.join(self.workdir, f"callgrind.{side.name}.{job.get('key', job['kind'])}.out")
        if counted:
            argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"] + argv
        # The builds get the plugins and (coordinates) the connector from the environment; the
        # wheel's coordinate case gets them from `import h5sparse`, its filter cases from the path.
        # None: unset.
        coo = job["kind"] == "coo"
        variables = {"HDF5_PLUGIN_PATH": None if coo and side.wheel else side.plugins,
                     "HDF5_VOL_CONNECTOR": CONNECTOR if coo and not side.wheel else None,
                     "H5SPARSE_LIBRARY": side.library, "H5SPARSE_NTHREADS": "1", "BLOSC_NTHREADS": "1",
                     "PYTHONHASHSEED": "0"}
        cmd, env = side.command(argv, variables)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"{side.name} {job['kind']} {job.get('op', '')} failed: {shlex.join(cmd)}\n"
                             f"{p.stderr[-3000:]}")
        result = json.loads(p.stdout.strip().splitlines()[-1])
        if counted:
            self.counts[(side.name, job["key"])] = totals(out)
            self.functions[(side.name, job["key"])] = self_costs(out)
        return result

    def info_line(self, side):
        i = self.info.get(side, {})
        return f"Python {i.get('python')}, NumPy {i.get('numpy')}, h5py {i.get('h5py')}, HDF5 {i.get('hdf5')}"

    def measure(self, side):
        tag = self.case.replace("/", "_").replace("%", "pct").replace(".", "p")
        c = coo_case(self.case)
        coo = {"kind": "coo", "workdir": self.workdir, "tag": tag, "case": self.case, "layout": "h5sparse",
               "codec": "blosc-lz4", "spec": {"shape": c["shape"], "chunk": c["chunk"]}, "region": None,
               "file": os.path.join(self.workdir, f"coo-{side.name}.h5")}
        flt = {"kind": "filter", "field": self.field, "chunk": FIELD_CHUNK, "cd": BLOSC_LZ4,
               "file": os.path.join(self.workdir, f"filter-{side.name}.h5")}
        self.info[side.name] = self.run(side, {"kind": "info"})
        for key, job in (("coo-write", dict(coo, op="write", verify=False)),
                         ("coo-read", dict(coo, op="read", verify=True)),
                         ("filter-write", dict(flt, op="write")), ("filter-read", dict(flt, op="read")),
                         ("filter-load", dict(flt, op="load"))):
            log(f"{side.name}: {key}")
            got = self.run(side, dict(job, key=key), counted=True)
            if key.endswith("write"):
                self.stored[(side.name, key)] = got.get("stored") or os.path.getsize(job["file"])


def coo_case(text):
    """bench/coo/run.py's parse_case, without importing numpy on the host."""
    side, elements, chunk = text.split("/")
    return {"shape": [int(side), int(side)], "chunk": int(chunk)}


def totals(path):
    with open(path) as f:
        return next(int(line.split()[1]) for line in f if line.startswith("totals:"))


def self_costs(path):
    """{(object, function): self instructions} of a callgrind.out file (Ir only), with the
    instructions of each function's calls, inclusive, under the key ("calls", (object, function))."""
    names = {"ob": {}, "fn": {}}
    ob = fn = None
    costs, call = {}, False

    def name(kind, text):
        text = text.strip()
        if text.startswith("("):
            ident, _, rest = text[1:].partition(")")
            if rest.strip():
                names[kind][ident] = rest.strip()
            return names[kind].get(ident, text)
        return text
    with open(path) as f:
        for line in f:
            if line.startswith("ob="):
                ob = name("ob", line[3:])
            elif line.startswith("fn="):
                fn = name("fn", line[3:])
            elif line.startswith(("cob=", "cfn=")):
                name("ob" if line.startswith("cob") else "fn", line[4:])
            elif line.startswith("calls="):
                call = True  # the next cost line is the callee's inclusive cost, not the caller's own
            elif line[:1].isdigit() or line[:1] in "+-*":
                words = line.split()
                if len(words) >= 2 and fn is not None:
                    key = ("calls", (ob, fn)) if call else (ob, fn)
                    costs[key] = costs.get(key, 0) + int(words[1])
                call = False
    return costs


def own(costs):
    """The self costs alone."""
    return {k: n for k, n in costs.items() if k[0] != "calls"}


def short(function):
    """A function's name without its namespace (anonymous), parameters and symbol version."""
    return function.replace("(anonymous namespace)::", "").split("(")[0].split("@")[0]


def inclusive(costs, function):
    """Instructions in a function (short name) and in what it calls: callgrind's inclusive cost,
    for a function that does not call itself."""
    return sum(n for k, n in costs.items() if short((k[1] if k[0] == "calls" else k)[1]) == function)


def binding_names():
    """The HDF5 functions of the binding's list for the 1.14 series (hdf5_binding/hdf5_names.txt)."""
    out = set()
    with open(os.path.join(REPO, "hdf5_binding", "hdf5_names.txt")) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if words and words[0] != "data" and (len(words) == 1 or words[1] == "1.14"):
                out.add(words[0])
    return out


def entry_point_instructions(costs):
    """Instructions spent in the binding's entry points (one jmp each: the HDF5 calls made)."""
    names = binding_names()
    return sum(n for (ob, fn), n in own(costs).items()
               if fn in names and ob and os.path.basename(ob).startswith("libh5sparse"))


# Where a difference lies: the objects of a process in groups, by file name.
GROUPS = (("h5sparse", ("libh5sparse",)), ("dynamic linker", ("ld-linux",)), ("libhdf5", ("libhdf5",)),
          ("Python, ctypes, libffi", ("python3", "_ctypes", "libffi")), ("libc", ("libc.so",)))


def by_group(costs):
    out = dict.fromkeys([g for g, _ in GROUPS] + ["other"], 0)
    for (ob, _), n in own(costs).items():
        base = os.path.basename(ob or "")
        out[next((g for g, prefixes in GROUPS if base.startswith(prefixes)), "other")] += n
    return out


def compiler_of(path):
    try:
        text = subprocess.run(["readelf", "-p", ".comment", path], capture_output=True, text=True).stdout
    except OSError:
        return "?"
    found = [line.split("]", 1)[1].strip() for line in text.splitlines() if "]" in line]
    return "; ".join(dict.fromkeys(f for f in found if f.startswith(("GCC", "clang")))) or "?"


# --- the wheel's venv -------------------------------------------------------------------------

def wheel_venv(wheel, h5py_version, where):
    """A fresh venv with PyPI's h5py and numpy and the wheel (as test/wheel/run makes them)."""
    cache = os.environ.get("H5SPARSE_WHEEL_CACHE", "/var/cache/h5sparse/wheel")
    env = dict(os.environ, PIP_CACHE_DIR=os.path.join(cache, "pip"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    subprocess.run([sys.executable, "-m", "venv", where], check=True)
    pip = os.path.join(where, "bin", "pip")
    subprocess.run([pip, "install", "-q", f"h5py=={h5py_version}", "numpy"], check=True, env=env)
    subprocess.run([pip, "install", "-q", "--no-deps", wheel], check=True, env=env)
    python = os.path.join(where, "bin", "python")
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    return python, os.path.join(site, "h5sparse", SERIES_DIR)


# --- report -------------------------------------------------------------------------------------

def millions(n):
    return f"{n / 1e6:,.2f}" if n is not None else "-"


def notes(h):
    """What the differences are, in figures from this run's callgrind files."""
    lin, bnd = h.functions.get(("linked", "coo-write")), h.functions.get(("bound", "coo-write"))
    if not lin or not bnd:
        return ""
    largest = (0, "", "")
    for key, case, op in MEASUREMENTS[:4]:
        a, b = own(h.functions.get(("linked", key), {})), own(h.functions.get(("bound", key), {}))
        diff = {}
        for (ob, fn), n in list(a.items()) + [(k, -n) for k, n in b.items()]:
            if os.path.basename(ob or "").startswith("libh5sparse"):
                diff[fn] = diff.get(fn, 0) - n
        fn, d = max(diff.items(), key=lambda kv: abs(kv[1]), default=("", 0))
        if abs(d) > abs(largest[0]):
            largest = (d, short(fn), f"{case} {op}")
    return ("In the coordinate cases the first Python call into libh5sparse (`h5sparse.library()`) falls inside "
            "the count, on both sides. There the linked side loads libh5sparse.so, which none of its plugins "
            f"holds (dlopen: {inclusive(lin, 'dlopen'):,} instructions in the write), where the bound side's "
            f"plugins are shims over it, loaded already ({inclusive(bnd, 'dlopen'):,}); and the bound side checks "
            f"its binding (`bind_locked`: {inclusive(bnd, 'h5sparse::hdf5_binding::bind_locked'):,}, nearly all of it "
            "dladdr) after ctypes has found h5py's libhdf5 (the Python, ctypes, libffi column). Lazy PLT "
            f"resolution inside the count: {inclusive(lin, '_dl_runtime_resolve_xsave'):,} linked, "
            f"{inclusive(bnd, '_dl_runtime_resolve_xsave'):,} bound (the bound side's HDF5 slots were filled by "
            "dlsym when the plugins loaded, before the count). All of these come once per process. The binding's "
            "steady cost is the entry-point jumps and the loads of data globals through their slots (single "
            "instructions inside our code, not separable here). The rest of the h5sparse column is code "
            "generation: the bound build compiles the core into libh5sparse.so with hidden visibility, the "
            "linked build into libh5sparse_core.so with default visibility (CMakeLists.txt, "
            "`h5sparse_runtime_library`), and the compiler inlines differently; the largest difference of one "
            f"function is `{largest[1]}` in the {largest[2]}, {largest[0]:+,} instructions.")


def report(h, sides, wheel_name, h5py_version):
    have = {s.name for s in sides}
    c = coo_case(h.case)
    rows, worst = [], 0.0
    for key, case, op in MEASUREMENTS:
        lin, bnd = h.counts.get(("linked", key)), h.counts.get(("bound", key))
        ratio = bnd / lin if lin and bnd else None
        if ratio and key in TARGETED:
            worst = max(worst, ratio)
        jumps = entry_point_instructions(h.functions.get(("bound", key), {}))
        rows.append([case, op, millions(lin), millions(bnd), f"{bnd - lin:+,}" if ratio else "-",
                     f"**{ratio:.4f}**" if ratio and key in TARGETED else (f"{ratio:.4f}" if ratio else "-"),
                     f"{jumps:,}"])
    L = [f"Cases: coordinates = bench/coo/run.py's worker, h5sparse layout, {h.case} "
         f"({c['shape'][0]}^2 float32, chunks {c['chunk']}^2), Blosc lz4, through the connector; Blosc filter "
         f"alone = h5py writing a {h.shape[0]} x {h.shape[1]} float32 field (chunks {FIELD_CHUNK[0]} x "
         f"{FIELD_CHUNK[1]}, Blosc lz4, byte shuffle, clevel 5, no connector) and reading it back, file creation "
         "(opening) and closing included; loading = `h5py.h5z.filter_avail(32001)` in a fresh process (HDF5 "
         "finds and dlopens the plugin; the bound build binds there), once per process, for information. "
         "Instructions: callgrind, instrumented only around the measured call (callgrind_control, as "
         "`bench/coo/run.py --instructions`), one thread (`H5SPARSE_NTHREADS=1`, `BLOSC_NTHREADS=1`), "
         "`PYTHONHASHSEED=0`, each measurement a fresh process; every side reads the same inputs.", "",
         "#### Linked against run-time bound: same sources, same compiler", "",
         "Both Release builds in the HDF5 1.14 toolchain root (" + h.info_line("linked") + "); `linked` = "
         "`build-release` (libhdf5 linked: PLT calls), `bound` = `build-bound` (`-DH5SPARSE_HDF5_AT_RUN_TIME=ON`: "
         "entry points jumping through slots, data globals read through their addresses); the bound plugins bind "
         "to the root's system libhdf5, which the root's h5py links. Compilers: linked " + h.compilers["linked"]
         + ", bound " + h.compilers["bound"] + ". Entry-point jumps = instructions the bound side spent in the "
         "binding's entry points (one `jmp` each, so the number of HDF5 calls our code made; the linked side "
         "pays a PLT jump for each of the same calls).", "",
         results.md_table(["case", "operation", "linked, M instr", "bound, M instr", "bound - linked",
                           "bound / linked", "entry-point jumps"], rows), ""]
    rows = []
    for key, case, op in MEASUREMENTS:
        lin, bnd = (h.functions.get((side, key)) for side in ("linked", "bound"))
        if lin and bnd:
            a, b = by_group(lin), by_group(bnd)
            rows.append([case, op, f"{sum(b.values()) - sum(a.values()):+,}"] + [f"{b[g] - a[g]:+,}" for g in a])
    L += ["Where bound - linked lies, instructions by object (callgrind's self cost per shared object; "
          "h5sparse = libh5sparse.so against the linked build's libh5sparse*.so and plugins):", "",
          results.md_table(["case", "operation", "all"] + [g for g, _ in GROUPS] + ["other"], rows), ""]
    L += notes(h), ""
    same = [k for k in ("coo-write", "filter-write")
            if ("linked", k) in h.stored and h.stored.get(("linked", k)) == h.stored.get(("bound", k))]
    L += [f"Stored sizes equal between the sides: {'yes' if len(same) == 2 else 'no'} (coordinate files "
          f"{h.stored.get(('linked', 'coo-write'), 0):,} / {h.stored.get(('bound', 'coo-write'), 0):,} bytes, the "
          f"filter's dataset {h.stored.get(('linked', 'filter-write'), 0):,} / "
          f"{h.stored.get(('bound', 'filter-write'), 0):,} bytes stored).", ""]
    met = worst <= TARGET
    L += [f"Issue 35's target (bound within {TARGET}x the linked build's instructions, coordinates write and read "
          f"all, Blosc filter alone): {'**met**' if met else '**missed**'}, largest ratio {worst:.4f}.", ""]
    if "wheel" in have:
        rows = []
        for key, case, op in MEASUREMENTS:
            lin, whl = h.counts.get(("linked", key)), h.counts.get(("wheel", key))
            rows.append([case, op, millions(lin), millions(whl),
                         f"{whl / lin:.3f}" if lin and whl else "-"])
        equal = all(h.stored.get(("wheel", k)) == h.stored.get(("linked", k)) for k in ("coo-write", "filter-write"))
        L += ["#### The wheel as users get it, against the Debian build (for information)", "",
              f"`{wheel_name}` ({h.compilers.get('wheel')}; c-blosc, lz4, zstd, zlib, xxHash and the other codec "
              "libraries linked in statically, built by the same compiler from the upstream tarballs) in a fresh "
              f"venv of the host's python3 with PyPI's h5py {h5py_version} (" + h.info_line("wheel") + "), against "
              "the linked build above (" + h.compilers.get("linked", "?") + ", Debian's shared codec libraries; "
              + h.info_line("linked") + "). The coordinate case imports h5sparse first (the wheel's "
              "zero-configuration start); the filter cases take the wheel's plugin directory from "
              "HDF5_PLUGIN_PATH. Stored sizes equal to the Debian build's: " + ("yes" if equal else "no") + ". "
              "This ratio mixes compilers (each with its own C++ library), builds of the codec libraries and of "
              "HDF5, the C library (the host's against the root's), and Python and NumPy versions, so it measures "
              "no binding alone: the table above does.", "",
              results.md_table(["case", "operation", "Debian build, M instr", "wheel, M instr", "wheel / Debian"],
                               rows), ""]
    return "\n".join(L) + "\n", met, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--linked", default=os.path.join(REPO, "build-release"), help="linked Release tree")
    ap.add_argument("--bound", default=os.path.join(REPO, "build-bound"), help="run-time bound Release tree")
    ap.add_argument("--no-build", action="store_true", help="measure the trees as they are")
    ap.add_argument("--wheel", help="the wheel (default: the newest dist/wheels/hdf5_sparse-*.whl)")
    ap.add_argument("--no-wheel", action="store_true", help="measure no wheel")
    ap.add_argument("--h5py", default=H5PY_FOR_WHEEL, help="PyPI h5py of the wheel's venv (default %(default)s)")
    ap.add_argument("--quick", action="store_true", help=f"case {QUICK_CASE}, a {QUICK_FIELD[0]}^2 field".replace(
        "%", "%%"))
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (callgrind.out files, inputs, files)")
    results.add_argument(ap)
    args = ap.parse_args()
    linked, bound = os.path.abspath(args.linked), os.path.abspath(args.bound)
    if not args.no_build:
        for tree, extra in ((linked, []), (bound, ["-DH5SPARSE_HDF5_AT_RUN_TIME=ON",
                                                   "-DH5SPARSE_HDF5_INCLUDE_DIR=/usr/include/hdf5/serial",
                                                   "-DH5SPARSE_TESTS=OFF"])):
            log(f"building {os.path.relpath(tree, REPO)}")
            subprocess.run([os.path.join(REPO, "scripts", "dev"), "build", "-DCMAKE_BUILD_TYPE=Release", *extra],
                           env=dict(os.environ, H5SPARSE_HDF5="1.14", H5SPARSE_BUILD_DIR=tree), check=True,
                           stdout=subprocess.DEVNULL)
    wheel = None
    if not args.no_wheel:
        found = sorted(glob.glob(os.path.join(REPO, "dist", "wheels", "hdf5_sparse-*.whl")), key=os.path.getmtime)
        wheel = args.wheel or (found[-1] if found else None)
        if wheel is None:
            log("no wheel in dist/wheels (scripts/dev wheel makes one): measuring the two builds only")
    partial = args.quick or args.no_wheel or wheel is None
    command = "bench/wheel/binding_cost.py" + "".join(" " + shlex.quote(a) for a in sys.argv[1:])
    head = results.preamble("The run-time HDF5 binding's cost", partial, command=command,
                            build=f"{os.path.relpath(linked, REPO)} and {os.path.relpath(bound, REPO)} (Release)")
    workdir = args.keep or tempfile.mkdtemp(prefix="h5sparse-binding-cost-", dir="/dev/shm")
    os.makedirs(workdir, exist_ok=True)
    venv = tempfile.mkdtemp(prefix="h5sparse-binding-cost-venv-", dir="/var/tmp") if wheel else None
    started = time.time()
    try:
        sides = [Side("linked", "python3", f"{linked}/plugins", f"{linked}/lib/libh5sparse.so", linked),
                 Side("bound", "python3", f"{bound}/plugins", f"{bound}/lib/libh5sparse.so", bound)]
        if wheel:
            log(f"venv with h5py {args.h5py} and {os.path.basename(wheel)}")
            python, series = wheel_venv(os.path.abspath(wheel), args.h5py, venv)
            sides.append(Side("wheel", python, f"{series}/plugins"))
        h = Harness(workdir, QUICK_CASE if args.quick else CASE, QUICK_FIELD if args.quick else FIELD)
        log(f"inputs: {h.case} and the field")
        h.run(sides[0], {"kind": "prepare", "workdir": workdir, "case": h.case, "field": h.field, "shape": h.shape})
        for side in sides:
            h.measure(side)
        h.compilers = {"linked": compiler_of(f"{linked}/lib/libh5sparse.so"),
                       "bound": compiler_of(f"{bound}/lib/libh5sparse.so")}
        if wheel:
            h.compilers["wheel"] = compiler_of(os.path.join(series, "lib", "libh5sparse.so"))
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        if venv:
            shutil.rmtree(venv, ignore_errors=True)
    md, met, worst = report(h, sides, os.path.basename(wheel) if wheel else None, args.h5py)
    md = "\n".join(head) + "\n" + md.rstrip("\n") + f"\n\nRun time: {time.time() - started:.0f} s.\n"
    print(md, flush=True)
    results.write(args, NAME, md, quick=args.quick)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "worker":
        worker(json.loads(sys.argv[2]))
    else:
        main()
