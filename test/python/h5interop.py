"""Shared helpers of the filter interop suites: environment, deterministic data, writers and
readers for h5py and PyTables, h5dump and the C reader.

HDF5 reads HDF5_PLUGIN_PATH once per process and keeps the plugins it loaded, so every check of
*which* plugin handles a file runs in its own process (h5worker.py, h5dump, read_dataset) whose
HDF5_PLUGIN_PATH names exactly one side: our plugin directory, the peer's directory, or an
empty directory (only built-in filters: h5py's LZF, PyTables' Blosc). The processes report
which plugin libraries they had mapped (/proc/self/maps), and the tests assert on that.

Nothing here imports h5py or tables at module level: the worker imports them only after its
environment is settled, and the test processes decide for themselves.
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "h5worker.py")

FILTER_LZF = 32000
FILTER_BLOSC = 32001
COMPRESSORS = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "snappy": 3, "zlib": 4, "zstd": 5}
SHUFFLES = {"none": 0, "byte": 1, "bit": 2}

OUR_LIBS = ("libh5sparse_blosc.so", "libh5sparse_lzf.so")
PEER_LIBS = ("libH5Zblosc.so", "libblosc_filter.so")


def env_dir(name):
    value = os.environ.get(name)
    assert value, f"{name} is not set: run the suite through CTest (scripts/dev)"
    return value


def plugin_dir():
    return env_dir("H5SPARSE_PLUGIN_DIR")


def peer_dir():
    return env_dir("H5SPARSE_PEER_PLUGIN_DIR")


def bin_dir():
    return env_dir("H5SPARSE_BIN_DIR")


def clean_env(plugin_path, extra_env=None):
    """The environment of a child process whose HDF5 sees exactly `plugin_path`: every other
    HDF5_* variable (a VOL connector, a second plugin path...) is dropped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HDF5_", "BLOSC_"))}
    env["HDF5_PLUGIN_PATH"] = str(plugin_path)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra_env or {})
    return env


def mapped_plugins():
    """Paths of the filter plugin libraries mapped into this process."""
    names = OUR_LIBS + PEER_LIBS
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if line.rstrip().endswith(".so")}
    return sorted(p for p in paths if os.path.basename(p) in names)


def classify(paths):
    """'ours', 'peer', 'none' or 'both' for a list of mapped plugin paths."""
    ours = any(os.path.basename(p) in OUR_LIBS for p in paths)
    peer = any(os.path.basename(p) in PEER_LIBS for p in paths)
    return {(True, False): "ours", (False, True): "peer", (False, False): "none"}.get((ours, peer), "both")


# --- deterministic data ------------------------------------------------------------------------

COMPOUND = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "u1")])  # 13 bytes, packed
BIG_COMPOUND = np.dtype([("x", "<f8", (40,))])                   # 320 bytes: over blosc's 255


def numpy_dtype(name):
    if name == "compound":
        return COMPOUND
    if name == "bigcompound":
        return BIG_COMPOUND
    if name == "array3":  # HDF5 ARRAY of 3 float32; numpy shows it as a trailing axis
        return np.dtype("<f4")
    return np.dtype(name).newbyteorder("<")


def _fill(dtype, n, kind, rng):
    """n values of a scalar dtype. 'smooth' compresses well with and without shuffle, even at
    clevel 1 (runs of equal values repeating in cycles) while neighbouring runs differ, so
    misplaced bytes show; 'random' does not compress at all."""
    if kind == "random":
        raw = rng.integers(0, 256, size=n * dtype.itemsize, dtype=np.uint8)
        values = raw.view(dtype)
        if dtype.kind == "f":  # keep NaNs out, so equality is plain
            values = np.where(np.isfinite(values), values, 0).astype(dtype)
        return values
    i = np.arange(n)
    steps = (i // 8) % 61 + (i // 488) % 3  # runs of 8, a cycle of 61 runs, slowly shifting
    if dtype.kind == "f":
        return (np.sin(steps / 37.0) * 1000.0 + steps * 0.25).astype(dtype)
    info = np.iinfo(dtype)
    span = min(int(info.max) - int(info.min) + 1, 1 << 20)
    return ((steps * 7919) % span + int(info.min)).astype(dtype)


def make_array(spec):
    """The values of the dataset described by `spec` (deterministic in the spec alone)."""
    shape = tuple(spec["shape"])
    kind = spec.get("kind", "smooth")
    rng = np.random.default_rng(spec.get("seed", 1234))
    n = int(np.prod(shape)) if shape else 1
    name = spec["dtype"]
    if name == "compound":
        out = np.zeros(n, COMPOUND)
        out["a"] = _fill(np.dtype("<i4"), n, kind, rng)
        out["b"] = _fill(np.dtype("<f8"), n, kind, rng)
        out["c"] = _fill(np.dtype("u1"), n, kind, rng)
        return out.reshape(shape)
    if name == "bigcompound":
        out = np.zeros(n, BIG_COMPOUND)
        out["x"] = _fill(np.dtype("<f8"), n * 40, kind, rng).reshape(n, 40)
        return out.reshape(shape)
    if name == "array3":
        return _fill(np.dtype("<f4"), n * 3, kind, rng).reshape(shape + (3,))
    return _fill(numpy_dtype(name), n, kind, rng).reshape(shape)


def packed_bytes(values):
    """Bytes as the C reader and `h5dump -b` produce them: native (little-endian) values,
    compound members packed in file order."""
    return np.ascontiguousarray(values).tobytes()


def blosc_opts(compressor="blosclz", clevel=5, shuffle="byte"):
    return (0, 0, 0, 0, clevel, SHUFFLES[shuffle], COMPRESSORS[compressor])


def chunk_bytes(spec):
    itemsize = numpy_dtype(spec["dtype"]).itemsize * (3 if spec["dtype"] == "array3" else 1)
    return itemsize * int(np.prod(spec["chunks"]))


def blosc_typesize(spec):
    if spec["dtype"] == "array3":
        return 4
    size = numpy_dtype(spec["dtype"]).itemsize
    return 1 if size > 255 else size


def expected_cd_values(spec):
    """cd_values hdf5-blosc and h5py's LZF store for `spec` after set_local."""
    if spec["filter"] == "blosc":
        opts = tuple(spec["opts"])
        return (2, 2, blosc_typesize(spec), chunk_bytes(spec)) + opts[4:]
    return (4, 0x0105, chunk_bytes(spec))


# --- writers and readers (used inside the worker) ---------------------------------------------


def h5py_write(f, spec):
    """Creates one dataset of `spec` in the open h5py File `f`."""
    import h5py

    data = make_array(spec)
    kwargs = {"chunks": tuple(spec["chunks"])}
    if spec["filter"] == "blosc":
        kwargs.update(compression=FILTER_BLOSC, compression_opts=tuple(spec["opts"]))
    elif spec["filter"] == "lzf":
        kwargs.update(compression="lzf")
    elif spec["filter"] is not None:
        raise ValueError(spec["filter"])
    if spec.get("hdf5_shuffle"):
        kwargs["shuffle"] = True
    if spec["dtype"] != "array3":
        f.create_dataset(spec["name"], data=data, **kwargs)
        return
    # An HDF5 ARRAY type needs the low-level API (h5py turns subarray dtypes into an axis).
    tid = h5py.h5t.array_create(h5py.h5t.IEEE_F32LE, (3,))
    space = h5py.h5s.create_simple(tuple(spec["shape"]))
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(tuple(spec["chunks"]))
    if spec["filter"] == "blosc":
        dcpl.set_filter(FILTER_BLOSC, h5py.h5z.FLAG_OPTIONAL, tuple(spec["opts"]))
    elif spec["filter"] == "lzf":
        dcpl.set_filter(FILTER_LZF, h5py.h5z.FLAG_OPTIONAL, ())
    dsid = h5py.h5d.create(f.id, spec["name"].encode(), tid, space, dcpl=dcpl)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data), mtype=tid)


def h5py_direct_write(f, spec):
    """A dataset whose pipeline is exactly spec["pipeline"] ([filter id, flags, cd_values]...,
    stored verbatim: run it where those filters are unavailable, so no set_local rewrites
    them) and whose chunks are the raw bytes of spec["stored"] ([offset, mask, file]...)."""
    import h5py

    dtype = numpy_dtype(spec["dtype"])
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk(tuple(spec["chunks"]))
    for fid, flags, cd in spec["pipeline"]:
        dcpl.set_filter(fid, flags, tuple(cd))
    dset = f.create_dataset(spec["name"], shape=tuple(spec["shape"]), dtype=dtype, dcpl=dcpl)
    for offset, mask, path in spec["stored"]:
        with open(path, "rb") as chunk:
            dset.id.write_direct_chunk(tuple(offset), chunk.read(), mask)
    return dset


def h5py_metadata(dset):
    """Filter pipeline and per-chunk storage of an h5py dataset (no data decoded)."""
    plist = dset.id.get_create_plist()
    filters = []
    for i in range(plist.get_nfilters()):
        fid, flags, cd, name = plist.get_filter(i)
        filters.append({"id": fid, "flags": flags, "cd_values": list(cd), "name": name.decode()})
    chunks = []
    for i in range(dset.id.get_num_chunks()):
        info = dset.id.get_chunk_info(i)
        chunks.append({"offset": list(info.chunk_offset), "mask": info.filter_mask, "size": info.size})
    return {"filters": filters, "chunks": chunks}


def pytables_write(path, specs):
    """PyTables writes `specs` with its own (built-in) Blosc: CArray, EArray or Table nodes."""
    import tables

    with tables.open_file(path, "w") as f:
        for spec in specs:
            filters = tables.Filters(complevel=spec["complevel"], complib=spec["complib"],
                                     shuffle=spec.get("shuffle", False),
                                     bitshuffle=spec.get("bitshuffle", False))
            data = make_array(spec)
            node = spec.get("node", "carray")
            if node == "table":
                table = f.create_table("/", spec["name"], description=data.dtype, filters=filters,
                                       chunkshape=tuple(spec["chunks"]), expectedrows=len(data))
                table.append(data)
            elif node == "earray":
                arr = f.create_earray("/", spec["name"], atom=tables.Atom.from_dtype(data.dtype),
                                      shape=(0,) + data.shape[1:], filters=filters,
                                      chunkshape=tuple(spec["chunks"]))
                half = len(data) // 2
                arr.append(data[:half])
                arr.append(data[half:])
            else:
                f.create_carray("/", spec["name"], obj=data, filters=filters,
                                chunkshape=tuple(spec["chunks"]))


# --- running the other side ---------------------------------------------------------------------


def run_worker(plugin_path, *args, check=True, extra_env=None):
    """Runs h5worker.py with HDF5_PLUGIN_PATH=plugin_path; returns its JSON report."""
    proc = subprocess.run([sys.executable, WORKER, *map(str, args)], env=clean_env(plugin_path, extra_env),
                          capture_output=True, text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"worker {args} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    lines = proc.stdout.strip().splitlines()
    report = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
    report["returncode"] = proc.returncode
    report["stderr"] = proc.stderr
    return report


def run_tool(plugin_path, cmd, check=True, extra_env=None):
    proc = subprocess.run([str(c) for c in cmd], env=clean_env(plugin_path, extra_env), capture_output=True,
                          timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} failed ({proc.returncode}):\n{proc.stdout[-4000:]!r}\n"
                             f"{proc.stderr.decode(errors='replace')[-4000:]}")
    return proc


def h5dump_binary(plugin_path, path, name, out):
    """`h5dump -b NATIVE` of one dataset into `out`; returns (completed process, bytes or None)."""
    if os.path.exists(out):
        os.remove(out)
    proc = run_tool(plugin_path, ["h5dump", "-d", "/" + name, "-b", "NATIVE", "-o", out, path], check=False)
    data = open(out, "rb").read() if proc.returncode == 0 and os.path.exists(out) else None
    return proc, data


def c_read(plugin_path, path, name, check=True):
    """Runs read_dataset; returns (bytes, report dict with 'plugins', 'filters', ...)."""
    proc = run_tool(plugin_path, [os.path.join(bin_dir(), "read_dataset"), path, "/" + name], check=check)
    report = {"plugins": [], "filters": [], "returncode": proc.returncode,
              "stderr": proc.stderr.decode(errors="replace")}
    for line in report["stderr"].splitlines():
        word, _, rest = line.partition(" ")
        if word == "plugin":
            report["plugins"].append(rest)
        elif word == "filter":
            fid, fname, *cd = rest.split()
            report["filters"].append((int(fid), fname, tuple(int(v) for v in cd)))
        elif word in ("elements", "element_size"):
            report[word] = int(rest)
    return proc.stdout, report
