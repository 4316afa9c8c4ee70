"""Shared helpers of the connector tests.

* environments with and without the h5sparse connector (HDF5 reads HDF5_VOL_CONNECTOR once, at
  library initialisation, so every comparison runs two subprocesses);
* ctypes access to the HDF5 library that h5py already loaded: the connector name of an open
  object, the connector's own optional operation "h5sparse.connector_version", and counts of
  open identifiers (leak checks);
* a canonical, JSON-able description of an HDF5 file read with h5py: links, objects, types,
  storage properties, values and attributes, so two runs can be compared with ==.
"""
import ctypes
import hashlib
import json
import os
import re
import subprocess
import sys

import numpy as np

CONNECTOR = "h5sparse under_vol=0;under_info={}"
CONNECTOR_NAME = "h5sparse"
CONNECTOR_VERSION = "h5sparse 0.1.0"
HERE = os.path.dirname(os.path.abspath(__file__))


# --- environments ---------------------------------------------------------------------------

def plugin_dir():
    """The build's plugin directory (CTest sets HDF5_PLUGIN_PATH, scripts/dev run too)."""
    d = os.environ.get("H5SPARSE_PLUGIN_DIR") or os.environ.get("HDF5_PLUGIN_PATH")
    assert d, "HDF5_PLUGIN_PATH is not set: run through CTest or scripts/dev run"
    assert os.path.isfile(os.path.join(d, "libh5sparse_vol.so")), f"no libh5sparse_vol.so in {d}"
    return d


_native_plugins = None


def native_plugin_dir():
    """The build's plugin directory minus the VOL connector: the filter plugins stay available,
    but HDF5 cannot find libh5sparse_vol.so. Native runs use it, so that they show what HDF5
    does without our connector at all (HDF5 loads every VOL plugin on its plugin path when a
    file fails to open, so the connector's mere presence is not neutral)."""
    global _native_plugins
    if _native_plugins is None:
        import atexit
        import shutil
        import tempfile
        _native_plugins = tempfile.mkdtemp(prefix="h5sparse-native-plugins-")
        atexit.register(shutil.rmtree, _native_plugins, True)
        src = plugin_dir()
        for n in os.listdir(src):
            if n != "libh5sparse_vol.so":
                os.symlink(os.path.join(src, n), os.path.join(_native_plugins, n))
    return _native_plugins


def env(connector, plugins=None, **extra):
    """Environment of a child process with (True) or without (False) the connector.

    With the connector HDF5_PLUGIN_PATH is the build's plugin directory; without it, the same
    filter plugins but no VOL plugin (see native_plugin_dir), unless `plugins` says otherwise.
    `connector` may also be a string, used verbatim as HDF5_VOL_CONNECTOR."""
    e = dict(os.environ)
    e.pop("HDF5_VOL_CONNECTOR", None)
    for k in [k for k in e if k.startswith("LD_DEBUG")]:
        del e[k]
    if connector is True:
        e["HDF5_VOL_CONNECTOR"] = CONNECTOR
    elif isinstance(connector, str):
        e["HDF5_VOL_CONNECTOR"] = connector
    e["HDF5_PLUGIN_PATH"] = plugins or (plugin_dir() if connector else native_plugin_dir())
    e.update(extra)
    return e


def run_python(script_args, connector, cwd=None, timeout=120, plugins=None, frozen=False):
    """Runs `python3 <script_args>` and returns the JSON object it printed last on stdout (and
    the stderr text); with `frozen`, under the frozen clock of preload.c."""
    e = env(connector, plugins)
    if frozen:
        e["LD_PRELOAD"] = preload_lib()
        e["H5SPARSE_FROZEN_TIME"] = FROZEN_TIME
    proc = subprocess.run([sys.executable, *script_args], env=e, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)
    side = "with" if connector else "without"
    assert proc.returncode == 0, (
        f"{script_args} {side} the connector exited {proc.returncode}\n"
        f"stdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-6000:]}")
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    assert lines, f"no JSON output from {script_args}: {proc.stdout[-2000:]} {proc.stderr[-2000:]}"
    return json.loads(lines[-1]), proc.stderr


FROZEN_TIME = "1700000000"

# h5dump prints object and region references as "DATASET 94736643793168 "/x"": the number is a
# memory address of the dumping process (it changes from one native run to the next with address
# space randomisation), so it is the one thing normalised in tool output.
_REF_ADDRESS = re.compile(rb'\b(GROUP|DATASET|DATATYPE|UNKNOWN) \d{6,} "')


def normalise(output):
    return _REF_ADDRESS.sub(rb'\1 <address> "', output)


def preload_lib():
    """libh5sparse_test_preload.so (preload.c): call counters and frozen clock."""
    p = os.environ.get("H5SPARSE_TEST_PRELOAD")
    if not p and os.environ.get("H5SPARSE_BIN_DIR"):
        p = os.path.join(os.path.dirname(os.environ["H5SPARSE_BIN_DIR"]), "test", "connector",
                         "libh5sparse_test_preload.so")
    assert p and os.path.isfile(p), f"preload helper not built: {p}"
    return p


def run_tool(argv, connector, cwd=None, trace=None, frozen=True, timeout=120, direct_calls=True):
    """Runs a command-line tool with or without the connector (always under preload.c); returns
    (rc, stdout, stderr, counts) with reference addresses normalised in the output (see
    normalise), where counts are the calls preload.c counted, summed over the processes the tool
    ran, or None when no trace was asked for. rc is "timeout" when the tool ran out of time.
    direct_calls=False makes the connector forward every operation through the H5VL API
    (H5SPARSE_DIRECT_CALLS=0), so that preload.c sees attribute and group calls too."""
    e = env(connector)
    if not direct_calls:
        e["H5SPARSE_DIRECT_CALLS"] = "0"
    e["LD_PRELOAD"] = preload_lib()
    if frozen:
        e["H5SPARSE_FROZEN_TIME"] = FROZEN_TIME
    if trace:
        if os.path.exists(trace):
            os.remove(trace)
        e["H5SPARSE_VOL_TRACE"] = trace
    try:
        proc = subprocess.run(argv, env=e, cwd=cwd, capture_output=True, timeout=timeout)
        rc, out, err = proc.returncode, normalise(proc.stdout), normalise(proc.stderr)
    except subprocess.TimeoutExpired:
        rc, out, err = "timeout", b"", b""
    return rc, out, err, (read_trace(trace) if trace else None)


def read_trace(path):
    """Sums the lines preload.c appended to `path` (one per process); {} when none was written."""
    total = {}
    if not os.path.exists(path):
        return total
    with open(path) as f:
        for line in f:
            for item in line.split()[1:]:
                k, v = item.split("=")
                total[k] = total.get(k, 0) + int(v)
    return total


def first_difference(a, b, path="$"):
    """A readable pointer to the first place where two JSON values differ (None if equal)."""
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} {short(a)} != {type(b).__name__} {short(b)}"
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{path}.{k}: present on one side only ({short(a.get(k))} / {short(b.get(k))})"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        if list(a) != list(b):
            return f"{path}: key order {list(a)} != {list(b)}"
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        return None
    return None if a == b else f"{path}: {short(a)} != {short(b)}"


def differences(a, b, limit=12):
    """first_difference for every top-level key of two dicts that differ (at most `limit`)."""
    out = [first_difference(a.get(k), b.get(k), f"$.{k}") for k in list(a) + [k for k in b if k not in a]]
    out = [d for d in out if d]
    return out[:limit]


def short(v, n=300):
    s = json.dumps(v) if not isinstance(v, str) else repr(v)
    return s if len(s) <= n else s[:n] + "..."


# --- ctypes on the loaded HDF5 ----------------------------------------------------------------

H5F_OBJ_ALL = 0x1F
H5VL_SUBCLS_FILE = 6       # enum H5VL_subclass_t in H5VLpublic.h: NONE, INFO, WRAP, ATTR, DATASET, DATATYPE, FILE
H5ES_NONE = 0


class VersionArgs(ctypes.Structure):   # H5SparseVersionArgs of connector/include/h5sparse_vol.h
    _fields_ = [("buffer", ctypes.c_char_p), ("capacity", ctypes.c_size_t)]


class OptionalArgs(ctypes.Structure):  # H5VL_optional_args_t of H5VLconnector.h
    _fields_ = [("op_type", ctypes.c_int), ("args", ctypes.c_void_p)]


_lib = None


def hdf5_version():
    """(major, minor, release) of the HDF5 h5py uses: the toolchain's."""
    import h5py
    return tuple(h5py.version.hdf5_version_tuple)


def hdf5():
    """The HDF5 library h5py is linked to, as already mapped into this process."""
    global _lib
    if _lib is None:
        import h5py  # noqa: F401  (loads the library)
        path = None
        with open("/proc/self/maps") as maps:
            for line in maps:
                if "libhdf5" in line and ".so" in line and "hl" not in os.path.basename(line.split()[-1]):
                    path = line.split()[-1]
                    break
        assert path, "h5py did not map a libhdf5 into the process"
        lib = ctypes.CDLL(path)
        i64 = ctypes.c_int64
        lib.H5VLget_connector_name.argtypes = [i64, ctypes.c_char_p, ctypes.c_size_t]
        lib.H5VLget_connector_name.restype = ctypes.c_ssize_t
        lib.H5VLfind_opt_operation.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
        lib.H5VLfind_opt_operation.restype = ctypes.c_int
        # H5VLfile_optional_op is a macro adding (__FILE__, __func__, __LINE__); this is the symbol.
        lib.H5VLfile_optional_op.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint, i64,
                                             ctypes.POINTER(OptionalArgs), i64, i64]
        lib.H5VLfile_optional_op.restype = ctypes.c_int
        lib.H5Fget_obj_count.argtypes = [i64, ctypes.c_uint]
        lib.H5Fget_obj_count.restype = ctypes.c_ssize_t
        lib.H5VLget_connector_id_by_value.argtypes = [ctypes.c_int]
        lib.H5VLget_connector_id_by_value.restype = i64
        lib.H5VLget_connector_id_by_name.argtypes = [ctypes.c_char_p]
        lib.H5VLget_connector_id_by_name.restype = i64
        lib.H5Iget_ref.argtypes = [i64]
        lib.H5Iget_ref.restype = ctypes.c_int
        lib.H5Idec_ref.argtypes = [i64]
        lib.H5Idec_ref.restype = ctypes.c_int
        lib.H5Eclear2.argtypes = [i64]
        lib.H5Oget_comment.argtypes = [i64, ctypes.c_char_p, ctypes.c_size_t]
        lib.H5Oget_comment.restype = ctypes.c_ssize_t
        _lib = lib
    return _lib


def connector_name(hid):
    """Name of the (top) connector of an open object, via H5VLget_connector_name."""
    buf = ctypes.create_string_buffer(64)
    n = hdf5().H5VLget_connector_name(hid, buf, len(buf))
    assert n > 0, f"H5VLget_connector_name({hid}) failed"
    return buf.value.decode()


def connector_version(file_hid):
    """Result of the connector's own file operation "h5sparse.connector_version", or None when
    no connector registered it (native run) or the operation failed."""
    lib = hdf5()
    op = ctypes.c_int(-1)
    if lib.H5VLfind_opt_operation(H5VL_SUBCLS_FILE, b"h5sparse.connector_version", ctypes.byref(op)) < 0:
        lib.H5Eclear2(0)
        return None
    out = ctypes.create_string_buffer(64)
    vargs = VersionArgs(ctypes.cast(out, ctypes.c_char_p), len(out))
    oargs = OptionalArgs(op.value, ctypes.cast(ctypes.pointer(vargs), ctypes.c_void_p))
    rc = lib.H5VLfile_optional_op(b"connector_support.py", b"connector_version", 1, file_hid,
                                  ctypes.byref(oargs), 0, H5ES_NONE)
    if rc < 0:
        lib.H5Eclear2(0)
        return f"<failed rc={rc}>"
    return out.value.decode()


def object_comment(hid):
    """H5Oget_comment through ctypes (h5py's h5o.get_comment wrapper returns garbage)."""
    buf = ctypes.create_string_buffer(4096)
    n = hdf5().H5Oget_comment(hid, buf, len(buf))
    assert n >= 0, "H5Oget_comment failed"
    return buf.value.decode() if n > 0 else None


def open_object_count(types=0x17):
    """H5Fget_obj_count(H5F_OBJ_ALL, types): by default the files, datasets, groups and
    attributes still open anywhere in the process. (Datatypes are left out by default: across
    all files HDF5 counts every datatype ID, and h5py keeps some for its own use.)"""
    return hdf5().H5Fget_obj_count(H5F_OBJ_ALL, types)


def id_counts():
    """Open IDs per kind, as H5Fget_obj_count reports them for all files."""
    return {name: open_object_count(bit) for name, bit in
            (("file", 0x1), ("dataset", 0x2), ("group", 0x4), ("datatype", 0x8), ("attr", 0x10))}


def vol_refcounts():
    """Reference counts of the registered connector IDs (native, and h5sparse when loaded). The
    connector holds one reference to the connector below per live wrapper, so after everything
    is closed the counts must be back at their starting values. HDF5 2.x hands out a new ID on
    every lookup, so there a connector's references cannot be read: it counts as "registered"."""
    lib = hdf5()
    out = {}
    for name in (b"native", b"h5sparse"):
        hid = lib.H5VLget_connector_id_by_name(name)  # only finds registered connectors
        if hid < 0:
            lib.H5Eclear2(0)
            continue
        again = lib.H5VLget_connector_id_by_name(name)
        out[name.decode()] = lib.H5Iget_ref(hid) - 2 if again == hid else "registered"
        lib.H5Idec_ref(hid)
        lib.H5Idec_ref(again)
    return out


# --- canonical description ---------------------------------------------------------------------

def _h5py():
    import h5py
    return h5py


def type_desc(tid):
    """HDF5-level description of a datatype ID (what is stored in the file)."""
    h5t = _h5py().h5t
    cls = tid.get_class()
    d = {"class": int(cls), "size": int(tid.get_size())}
    if cls in (h5t.INTEGER, h5t.FLOAT, h5t.BITFIELD):
        d["order"] = int(tid.get_order())
        d["precision"] = int(tid.get_precision())
        if cls == h5t.INTEGER:
            d["sign"] = int(tid.get_sign())
    elif cls == h5t.STRING:
        d["cset"] = int(tid.get_cset())
        d["strpad"] = int(tid.get_strpad())
        d["vlen"] = bool(tid.is_variable_str())
    elif cls == h5t.COMPOUND:
        d["members"] = [[tid.get_member_name(i).decode(), int(tid.get_member_offset(i)),
                         type_desc(tid.get_member_type(i))] for i in range(tid.get_nmembers())]
    elif cls == h5t.ENUM:
        d["base"] = type_desc(tid.get_super())
        d["members"] = [[tid.get_member_name(i).decode(), int(tid.get_member_value(i))]
                        for i in range(tid.get_nmembers())]
    elif cls == h5t.ARRAY:
        d["dims"] = list(tid.get_array_dims())
        d["base"] = type_desc(tid.get_super())
    elif cls == h5t.VLEN:
        d["base"] = type_desc(tid.get_super())
    elif cls == h5t.OPAQUE:
        d["tag"] = tid.get_tag().decode()
    elif cls == h5t.REFERENCE:
        d["ref"] = "region" if tid.equal(h5t.STD_REF_DSETREG) else "object"
    d["committed"] = bool(tid.committed())
    return d


def dtype_desc(dt):
    """numpy-level description including h5py's special-type metadata."""
    h5py = _h5py()
    d = {"str": dt.str, "descr": str(dt)}
    if dt.names:
        d["fields"] = [[n, dtype_desc(dt.fields[n][0]), dt.fields[n][1]] for n in dt.names]
    if dt.subdtype:
        d["sub"] = [dtype_desc(dt.subdtype[0]), list(dt.subdtype[1])]
    s = h5py.check_string_dtype(dt)
    if s:
        d["string"] = [s.encoding, s.length]
    v = h5py.check_vlen_dtype(dt)
    if v is not None and not s:
        d["vlen"] = dtype_desc(v)
    e = h5py.check_enum_dtype(dt)
    if e:
        d["enum"] = sorted([k, int(x)] for k, x in e.items())
    r = h5py.check_ref_dtype(dt)
    if r:
        d["ref"] = r.__name__
    return d


class Canon:
    """Turns values read with h5py into JSON; references are resolved against `file`."""

    def __init__(self, file):
        self.file = file

    def __call__(self, v):
        h5py = _h5py()
        if isinstance(v, h5py.Empty):
            return {"empty": dtype_desc(v.dtype)}
        if isinstance(v, h5py.RegionReference):
            return self.regref(v)
        if isinstance(v, h5py.Reference):
            if not v:
                return {"ref": None}
            obj = self.file[v]
            return {"ref": obj.name, "type": type(obj).__name__,
                    "objtype": int(h5py.h5r.get_obj_type(v, self.file.id))}
        if isinstance(v, np.ndarray):
            return self.array(v)
        if isinstance(v, np.void) and v.dtype.names:
            return [self(v[n]) for n in v.dtype.names]
        if isinstance(v, np.generic):
            return self.array(np.asarray(v))
        if isinstance(v, bytes):
            return {"bytes": v.hex()}
        if isinstance(v, (list, tuple)):
            return [self(x) for x in v]
        if isinstance(v, (str, int, bool)) or v is None:
            return v
        if isinstance(v, float):
            return {"float": v.hex()}
        return {"repr": repr(v)}

    def regref(self, v):
        h5py = _h5py()
        if not v:
            return {"regref": None}
        dset = self.file[v]
        space = h5py.h5r.get_region(v, dset.id)
        d = {"regref": dset.name, "sel_type": int(space.get_select_type()),
             "npoints": int(space.get_select_npoints())}
        if space.get_select_type() == h5py.h5s.SEL_HYPERSLABS:
            d["blocks"] = space.get_select_hyper_blocklist().tolist()
        elif space.get_select_type() == h5py.h5s.SEL_POINTS:
            d["points"] = space.get_select_elem_pointlist().tolist()
        d["values"] = self(dset[v])
        return d

    def array(self, a):
        out = {"dtype": dtype_desc(a.dtype), "shape": list(a.shape)}
        if a.dtype.hasobject:
            if a.dtype.names:
                out["items"] = [[self(x[n]) for n in a.dtype.names] for x in a.reshape(-1)]
            else:
                out["items"] = [self(x) for x in a.reshape(-1)]
            return out
        raw = np.ascontiguousarray(a).tobytes()
        out["hex"] = raw.hex() if len(raw) <= 4096 else "sha256:" + hashlib.sha256(raw).hexdigest()
        return out


def attrs_desc(obj, canon):
    h5py = _h5py()
    out = []
    for name in obj.attrs:
        aid = obj.attrs.get_id(name)
        space = aid.get_space()
        info = h5py.h5a.get_info(obj.id, name=name.encode())
        out.append({"name": name, "type": type_desc(aid.get_type()), "dtype": dtype_desc(aid.dtype),
                    "shape": list(aid.shape) if space.get_simple_extent_type() != h5py.h5s.NULL else None,
                    "data_size": int(info.data_size), "cset": int(info.cset),
                    "value": canon(obj.attrs[name])})
    return out


def dataset_desc(d, canon):
    h5py = _h5py()
    dcpl = d.id.get_create_plist()
    layout = dcpl.get_layout()
    out = {
        "type": type_desc(d.id.get_type()), "dtype": dtype_desc(d.dtype),
        "shape": list(d.shape) if d.shape is not None else None,
        "maxshape": [m if m is not None else -1 for m in d.maxshape] if d.maxshape is not None else None,
        "layout": int(layout), "chunks": list(d.chunks) if d.chunks else None,
        "filters": [[int(dcpl.get_filter(i)[0]), int(dcpl.get_filter(i)[1]), list(dcpl.get_filter(i)[2])]
                    for i in range(dcpl.get_nfilters())],
        "compression": d.compression, "shuffle": d.shuffle, "fletcher32": d.fletcher32,
        "scaleoffset": d.scaleoffset,
        "fill_defined": int(dcpl.fill_value_defined()), "fill_time": int(dcpl.get_fill_time()),
        "alloc_time": int(dcpl.get_alloc_time()),
        "fillvalue": canon(d.fillvalue),
        "storage_size": int(d.id.get_storage_size()),
        "space_status": int(d.id.get_space_status()),
        "external": [[os.path.basename(e[0]), e[1], e[2]] for e in d.external] if d.external else None,
        "is_virtual": d.is_virtual,
    }
    if layout == h5py.h5d.CONTIGUOUS:
        out["offset"] = d.id.get_offset()
    if layout == h5py.h5d.CHUNKED and d.shape:
        n = d.id.get_num_chunks()
        out["num_chunks"] = int(n)
        out["chunk_info"] = [[list(c.chunk_offset), c.filter_mask, c.byte_offset, c.size]
                             for c in (d.id.get_chunk_info(i) for i in range(n))]
    if d.is_virtual:
        out["virtual_sources"] = [[list(map(int, vs.vspace.get_select_bounds()[0])), os.path.basename(vs.file_name),
                                   vs.dset_name] for vs in d.virtual_sources()]
    if d.shape is None:
        out["value"] = canon(d[()])
    else:
        out["value"] = canon(d[()])
    return out


def object_desc(obj, canon):
    h5py = _h5py()
    info = h5py.h5o.get_info(obj.id)
    out = {"kind": type(obj).__name__, "rc": int(info.rc), "num_attrs": int(info.num_attrs),
           "addr": int(info.addr), "attrs": attrs_desc(obj, canon),
           "comment": object_comment(obj.id.id)}
    if isinstance(obj, h5py.Dataset):
        out.update(dataset_desc(obj, canon))
    elif isinstance(obj, h5py.Datatype):
        out["type"] = type_desc(obj.id)
        out["dtype"] = dtype_desc(obj.dtype)
    elif isinstance(obj, h5py.Group):
        gcpl = obj.id.get_create_plist()
        out["track_order"] = int(gcpl.get_link_creation_order())
        out["links"] = group_links(obj)
    return out


def group_links(g):
    h5py = _h5py()
    out = []
    for name in g:
        link = g.get(name, getlink=True)
        info = g.id.links.get_info(name.encode())
        rec = {"name": name, "class": type(link).__name__, "cset": int(info.cset)}
        if isinstance(link, h5py.SoftLink):
            rec["path"] = link.path
        elif isinstance(link, h5py.ExternalLink):
            rec["file"] = link.filename
            rec["path"] = link.path
        out.append(rec)
    return out


def describe_file(f):
    """Every object reachable from the root of an open h5py.File, once per address, in visit
    order, plus file-level properties; soft and external links are followed where they resolve."""
    h5py = _h5py()
    canon = Canon(f)
    fcpl = f.id.get_create_plist()
    fapl = f.id.get_access_plist()
    out = {"userblock": f.userblock_size, "libver": list(f.libver), "mode": f.mode,
           "driver": f.driver, "sizes": list(fcpl.get_sizes()), "version": list(fcpl.get_version()),
           "fclose_degree": int(fapl.get_fclose_degree()),
           "filesize": int(f.id.get_filesize()), "freespace": int(f.id.get_freespace()),
           "intent": int(f.id.get_intent()), "objects": {}}
    seen = {}

    def add(name, obj):
        addr = (h5py.h5o.get_info(obj.id).fileno, h5py.h5o.get_info(obj.id).addr)
        if addr in seen:
            out["objects"][name] = {"same_as": seen[addr]}
        else:
            seen[addr] = name
            out["objects"][name] = object_desc(obj, canon)

    add("/", f)
    f.visititems(add)
    # what the links that visititems does not follow resolve to
    resolved = {}

    def links(name, link):
        if isinstance(link, (h5py.SoftLink, h5py.ExternalLink)):
            obj = f.get(name)
            if obj is None:
                resolved[name] = None
            else:
                rec = {"kind": type(obj).__name__, "name": obj.name,
                       "file": os.path.basename(obj.file.filename)}
                if isinstance(obj, h5py.Dataset):
                    rec["value"] = Canon(obj.file)(obj[()])
                elif isinstance(obj, h5py.Group):
                    rec["keys"] = list(obj.keys())
                resolved[name] = rec
    f.visititems_links(links)
    out["resolved_links"] = resolved
    return out


def describe_path(path, **kwargs):
    import h5py
    with h5py.File(path, "r", **kwargs) as f:
        return describe_file(f)
