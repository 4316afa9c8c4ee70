"""h5py scenarios for the connector tests, run in a child process (HDF5 reads HDF5_VOL_CONNECTOR
only when the library initialises, so with and without the connector are two processes).

    python3 scenarios.py run NAME WORKDIR     one scenario; prints one JSON line
    python3 scenarios.py corpus WORKDIR       every scenario, each in WORKDIR/NAME (files kept)
    python3 scenarios.py describe DIR         canonical description of every *.h5 under DIR

Each scenario uses plain, unmodified h5py; it returns what it observed (values, dtypes, link
and attribute information, exception types and messages) as JSON, and calls ctx.probe() on
open objects so the run records which connector served them: H5VLget_connector_name and the
connector's own file operation "h5sparse.connector_version". After the scenario the runner
describes every file the scenario left behind and counts what is still open.
"""
import gc
import io
import json
import os
import sys
import zlib

import h5py
import numpy as np

import connector_support as cs

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


class Ctx:
    def __init__(self, work):
        self.work = os.path.abspath(work)
        self.probes = []

    def path(self, name):
        return os.path.join(self.work, name)

    def norm(self, text):
        return str(text).replace(self.work, "<work>")

    def probe(self, obj, what):
        """Which connector serves `obj` (an h5py object or a low-level ID)."""
        oid = obj.id if hasattr(obj, "id") and not isinstance(obj, h5py.h5f.FileID) and \
            hasattr(obj.id, "id") else obj
        fid = h5py.h5i.get_file_id(oid)  # a new file ID, closed below
        try:
            self.probes.append({"what": what, "object": cs.connector_name(oid.id),
                                "file": cs.connector_name(fid.id), "version": cs.connector_version(fid.id)})
        finally:
            fid.close()

    def attempt(self, fn):
        """Outcome of fn(): its canonical value, or the exception's type and message."""
        try:
            v = fn()
        except Exception as e:  # the result we compare, not an error of the test
            return {"error": type(e).__name__, "message": self.norm(e)}
        if isinstance(v, h5py.File):
            v.close()
            return {"ok": "opened"}
        if isinstance(v, (h5py.Group, h5py.Dataset, h5py.Datatype)):
            return {"ok": type(v).__name__, "name": v.name}
        try:
            return {"ok": cs.Canon(None)(v)}
        except Exception:
            return {"ok": repr(type(v))}


def canon(f, v):
    return cs.Canon(f)(v)


def superblock_version(path, offset=0):
    with open(path, "rb") as raw:
        raw.seek(offset)
        head = raw.read(9)
    assert head[:8] == b"\x89HDF\r\n\x1a\n", head
    return head[8]


# --- files ----------------------------------------------------------------------------------

@scenario
def files(ctx):
    r = {}
    p = ctx.path("modes.h5")
    with h5py.File(p, "w") as f:
        ctx.probe(f, "mode w")
        f["x"] = np.arange(6)
        r["w"] = [f.mode, f.id.get_intent(), f.name, os.path.basename(f.filename), f.driver]
    r["x_existing"] = ctx.attempt(lambda: h5py.File(p, "x"))
    r["w-_existing"] = ctx.attempt(lambda: h5py.File(p, "w-"))
    r["r_missing"] = ctx.attempt(lambda: h5py.File(ctx.path("missing.h5"), "r"))
    r["r+_missing"] = ctx.attempt(lambda: h5py.File(ctx.path("missing.h5"), "r+"))
    r["bad_mode"] = ctx.attempt(lambda: h5py.File(p, "q"))
    with open(ctx.path("not_hdf5.h5"), "wb") as junk:
        junk.write(b"this is not an HDF5 file" * 100)
    r["not_hdf5"] = ctx.attempt(lambda: h5py.File(ctx.path("not_hdf5.h5"), "r"))
    r["is_hdf5"] = [h5py.is_hdf5(p), h5py.is_hdf5(ctx.path("not_hdf5.h5")), h5py.is_hdf5(ctx.path("missing.h5"))]
    os.remove(ctx.path("not_hdf5.h5"))
    with h5py.File(p, "r") as f:
        ctx.probe(f, "mode r")
        r["r"] = [f.mode, f.id.get_intent(), canon(f, f["x"][()])]
        r["r_create_group"] = ctx.attempt(lambda: f.create_group("no"))
        r["r_write_data"] = ctx.attempt(lambda: f["x"].__setitem__(0, 5))
        r["r_attr"] = ctx.attempt(lambda: f.attrs.__setitem__("a", 1))
    with h5py.File(p, "r+") as f:
        ctx.probe(f, "mode r+")
        f["x"][0] = 42
        f.create_group("g")
        r["r+"] = [f.mode, f.id.get_intent(), list(f)]
    def append(i):
        with h5py.File(ctx.path("append.h5"), "a") as f:
            ctx.probe(f, "mode a")
            f[f"d{i}"] = np.arange(i + 1)
            return [f.mode, list(f)]
    r["a_creates"] = ctx.attempt(lambda: append(0))  # h5py: open r+, on FileNotFoundError create
    with h5py.File(ctx.path("append.h5"), "w"):
        pass
    r["a_opens"] = ctx.attempt(lambda: append(1))
    with h5py.File(ctx.path("exclusive.h5"), "x") as f:
        f["x"] = 1
    with h5py.File(ctx.path("exclusive.h5"), "w") as f:  # truncates
        r["w_truncates"] = list(f)
    for drv in ("sec2", "stdio"):
        with h5py.File(ctx.path(f"driver_{drv}.h5"), "w", driver=drv) as f:
            ctx.probe(f, f"driver {drv}")
            f["d"] = np.arange(5.0)
            r[f"driver_{drv}"] = f.driver
        with h5py.File(ctx.path(f"driver_{drv}.h5"), "r", driver=drv) as f:
            r[f"driver_{drv}_read"] = canon(f, f["d"][()])

    # libver bounds: superblock version and object header format follow them
    bounds = ["earliest", "v108", "v110", "v112", "v114", "latest", ("earliest", "v110"), ("v110", "latest")]
    r["libver"] = {}
    for lv in bounds:
        key = lv if isinstance(lv, str) else "-".join(lv)
        path = ctx.path(f"libver_{key}.h5")
        try:
            f = h5py.File(path, "w", libver=lv)
        except Exception as e:
            r["libver"][key] = {"error": type(e).__name__, "message": ctx.norm(e)}
            continue
        with f:
            ctx.probe(f, f"libver {key}")
            g = f.create_group("g", track_order=True)
            for n in range(10):
                g.attrs[f"a{n}"] = n
            f["d"] = np.arange(4)
            rec = {"libver": list(f.libver), "fapl": [int(x) for x in f.id.get_access_plist().get_libver_bounds()]}
        rec["superblock"] = superblock_version(path)
        with h5py.File(path, "r", libver=lv) as f:
            rec["read"] = [list(f), list(f["g"].attrs), canon(f, f["d"][()])]
        r["libver"][key] = rec
    r["libver_bad"] = ctx.attempt(lambda: h5py.File(ctx.path("libver_bad.h5"), "w", libver=("latest", "earliest")))

    # user block
    p = ctx.path("userblock.h5")
    with h5py.File(p, "w", userblock_size=512) as f:
        ctx.probe(f, "userblock create")
        f["d"] = np.arange(3)
        r["ub_create"] = [f.userblock_size, f.id.get_create_plist().get_userblock()]
    with open(p, "r+b") as raw:
        raw.write(b"USERBLOCK!" * 10)
    with h5py.File(p, "r") as f:
        ctx.probe(f, "userblock open")
        r["ub_open"] = [f.userblock_size, canon(f, f["d"][()])]
    with h5py.File(p, "a") as f:
        f["e"] = np.arange(2)
    with open(p, "rb") as raw:
        r["ub_bytes"] = raw.read(100).hex()
    r["ub_superblock"] = superblock_version(p, 512)
    r["ub_bad"] = ctx.attempt(lambda: h5py.File(ctx.path("ub_bad.h5"), "w", userblock_size=100))

    # core driver, with and without backing store, and file images
    p = ctx.path("core_backed.h5")
    with h5py.File(p, "w", driver="core", backing_store=True) as f:
        ctx.probe(f, "core backed")
        f["d"] = np.linspace(0, 1, 11)
        f.attrs["where"] = "memory then disk"
    r["core_backed_exists"] = os.path.exists(p)
    with h5py.File(p, "r", driver="core") as f:
        ctx.probe(f, "core open")
        r["core_open"] = [f.driver, canon(f, f["d"][()]), f.attrs["where"]]
    p = ctx.path("core_mem.h5")
    with h5py.File(p, "w", driver="core", backing_store=False) as f:
        ctx.probe(f, "core memory")
        f["d"] = np.arange(100).reshape(10, 10)
        f.create_group("g").attrs["x"] = 1.5
        f.flush()
        image = f.id.get_file_image()
        r["core_mem"] = [f.driver, canon(f, f["d"][3]), len(image)]
    r["core_mem_exists"] = os.path.exists(p)
    with h5py.File(io.BytesIO(image), "r") as f:
        ctx.probe(f, "file object (image)")
        r["image"] = [f.driver, canon(f, f["d"][()]), float(f["g"].attrs["x"])]
    bio = io.BytesIO()
    with h5py.File(bio, "w") as f:
        ctx.probe(f, "file object write")
        f["s"] = "in a BytesIO"
        f["v"] = np.arange(7, dtype="u2")
    with h5py.File(bio, "r") as f:
        r["bytesio"] = [f.driver, f["s"][()].decode(), canon(f, f["v"][()])]
    r["bytesio_len"] = len(bio.getvalue())

    # SWMR: writer switches on, reader refreshes
    p = ctx.path("swmr.h5")
    with h5py.File(p, "w", libver="latest") as f:
        d = f.create_dataset("d", shape=(0,), maxshape=(None,), dtype="i4", chunks=(4,))
        f.swmr_mode = True
        ctx.probe(f, "swmr writer")
        r["swmr_writer"] = f.swmr_mode
        for i in range(3):
            d.resize((d.shape[0] + 3,))
            d[-3:] = np.arange(3) + 10 * i
            d.flush()
    with h5py.File(p, "r", libver="latest", swmr=True) as f:
        ctx.probe(f, "swmr reader")
        f["d"].refresh()
        r["swmr_reader"] = [f.swmr_mode, canon(f, f["d"][()])]
    return r


# --- groups -----------------------------------------------------------------------------------

@scenario
def groups(ctx):
    r = {}
    p = ctx.path("groups.h5")
    with h5py.File(p, "w") as f:
        ctx.probe(f, "file")
        a = f.create_group("a")
        b = a.create_group("b")
        f.create_group("x/y/z")  # intermediate groups
        ctx.probe(f["x/y/z"], "nested group")
        r["require_same"] = f.require_group("a") == a
        f.create_dataset("ds", data=1)
        r["require_conflict"] = ctx.attempt(lambda: f.require_group("ds"))
        r["create_existing"] = ctx.attempt(lambda: f.create_group("a"))
        r["missing"] = ctx.attempt(lambda: f["nope/deeper"])
        t = f.create_group("ordered", track_order=True)
        u = f.create_group("unordered")
        for n in ("zeta", "alpha", "mid", "Beta", "10", "9"):
            t.create_group(n)
            u.create_group(n)
        r["order"] = [list(t), list(u), list(t.keys()), list(reversed(list(u)))]
        r["contains"] = ["a/b" in f, "/a/b" in f, "nope" in f, "a/nope/c" in f, "x/y" in f, "." in f]
        r["len"] = [len(f), len(a), len(f["x/y"]), len(t)]
        r["names"] = [a.name, b.name, f["x/y/z"].parent.name, b.parent.parent.name, f["/x"].name]
        r["eq"] = [f["a"] == a, f["a/b"] == b, f["a"] == f["x"], hash(f["a"]) == hash(a)]
        f.move("a/b", "moved_b")
        r["after_move"] = ["a/b" in f, "moved_b" in f, f["moved_b"].name]
        r["move_onto_existing"] = ctx.attempt(lambda: f.move("x", "a"))
        f.copy("a", "a_copy")
        f.copy(f["x"], f["a"], name="xcopy")
        del f["unordered/mid"]
        r["after_del"] = list(f["unordered"])
        r["del_missing"] = ctx.attempt(lambda: f.__delitem__("unordered/mid"))
        a.attrs["title"] = "group attribute"
        gid = f["ordered"].id
        r["ginfo"] = [gid.get_num_objs(), [gid.get_objname_by_idx(i).decode() for i in range(gid.get_num_objs())]]
        with h5py.File(ctx.path("groups_dst.h5"), "w") as g2:
            f.copy("ordered", g2)
            f.copy(f["a"], g2, name="a_shallow", shallow=True)
            f.copy(f["a"], g2, name="a_noattrs", without_attrs=True)
            r["dst"] = [list(g2), list(g2["a_shallow"]), list(g2["a_shallow"].attrs), list(g2["a_noattrs"].attrs)]
    with h5py.File(p, "r") as f:
        r["reopened"] = sorted(f)
    return r


# --- links -------------------------------------------------------------------------------------

@scenario
def links(ctx):
    r = {}
    with h5py.File(ctx.path("links_target.h5"), "w") as t:
        t["data"] = np.arange(5) * 3
        t.create_group("grp").attrs["t"] = "target"
        t["grp/inner"] = 7.5
    p = ctx.path("links.h5")
    with h5py.File(p, "w", track_order=True) as f:
        ctx.probe(f, "file")
        f["x"] = np.arange(3)
        f.create_group("g")
        f["g/inner"] = np.arange(4.0)
        f["hard"] = f["x"]
        f["g/hard_to_g"] = f["g"]  # a cycle
        f["soft"] = h5py.SoftLink("/x")
        f["soft_rel"] = h5py.SoftLink("g/inner")
        f["soft_grp"] = h5py.SoftLink("/g")
        f["soft_chain"] = h5py.SoftLink("/soft")
        f["dangling"] = h5py.SoftLink("/nope")
        f["ext"] = h5py.ExternalLink("links_target.h5", "/data")
        f["ext_grp"] = h5py.ExternalLink("links_target.h5", "/grp")
        f["ext_dangling_file"] = h5py.ExternalLink("nofile.h5", "/x")
        f["ext_dangling_path"] = h5py.ExternalLink("links_target.h5", "/nothing")
        f["ext_self"] = h5py.ExternalLink("links.h5", "/x")
        r["assign_existing"] = ctx.attempt(lambda: f.__setitem__("soft", h5py.SoftLink("/g")))
    names = ["x", "hard", "g", "g/inner", "g/hard_to_g", "soft", "soft_rel", "soft_grp", "soft_chain",
             "dangling", "ext", "ext_grp", "ext_dangling_file", "ext_dangling_path", "ext_self"]
    with h5py.File(p, "r") as f:
        ctx.probe(f, "file reopened")
        r["links"] = {}
        for n in names:
            link = f.get(n, getlink=True)
            rec = {"class": type(link).__name__, "in": n in f}
            if isinstance(link, h5py.SoftLink):
                rec["path"] = link.path
            if isinstance(link, h5py.ExternalLink):
                rec["file"], rec["path"] = link.filename, link.path
            rec["getclass"] = ctx.attempt(lambda: repr(f.get(n, getclass=True)))
            rec["getclass_link"] = repr(f.get(n, getclass=True, getlink=True))
            rec["get"] = ctx.attempt(lambda: f[n])
            info = f.id.links.get_info(n.encode())
            rec["info"] = [int(info.type), int(info.cset)]
            if info.type != h5py.h5l.TYPE_HARD:
                val = f.id.links.get_val(n.encode())
                rec["val"] = [v.decode() for v in val] if isinstance(val, tuple) else val.decode()
            rec["exists"] = f.id.links.exists(n.encode())
            r["links"][n] = rec
        r["soft_grp_child"] = canon(f, f["soft_grp/inner"][()])
        r["cycle"] = f["g/hard_to_g/hard_to_g/inner"].name
        e = f["ext"]
        ctx.probe(e, "object reached through an external link")
        r["ext"] = [os.path.basename(e.file.filename), e.name, canon(f, e[()])]
        eg = f["ext_grp"]
        ctx.probe(eg, "group reached through an external link")
        r["ext_grp"] = [list(eg), eg.attrs["t"], float(eg["inner"][()]), os.path.basename(eg.file.filename)]
        del e, eg
        r["rc"] = [h5py.h5o.get_info(f["x"].id).rc, h5py.h5o.get_info(f["g"].id).rc]
        r["same_object"] = [f["x"] == f["hard"], f["x"] == f["soft"], f["x"] == f["ext_self"]]
    with h5py.File(p, "r+") as f:
        del f["hard"]
        f.move("soft", "soft_moved")
        f.id.links.create_soft(b"ll_soft", b"/g/inner")
        f.id.links.create_external(b"ll_ext", b"links_target.h5", b"/grp/inner")
        f.id.links.create_hard(b"ll_hard", f.id, b"g")
        r["after_edit"] = [h5py.h5o.get_info(f["x"].id).rc, list(f), f["soft_moved"].name,
                           canon(f, f["ll_soft"][()]), canon(f, f["ll_ext"][()]), list(f["ll_hard"])]
        r["unlink_missing"] = ctx.attempt(lambda: f.id.unlink(b"not_there"))
    return r


# --- iteration ---------------------------------------------------------------------------------

@scenario
def iteration(ctx):
    r = {}
    with h5py.File(ctx.path("iter_ext.h5"), "w") as t:
        t.create_group("eg").create_dataset("ed", data=[1, 2])
    p = ctx.path("iteration.h5")
    for order in (True, False):
        with h5py.File(p, "w", track_order=order) as f:
            ctx.probe(f, f"file track_order={order}")
            for n in ("c", "a", "b"):
                g = f.create_group(n, track_order=order)
                for m in ("z", "y"):
                    g.create_dataset(m, data=np.arange(2))
                g.create_group("sub").create_group("leaf")
            f["a/b/deep"] = 1
            f["top_ds"] = np.arange(3)
            f["a/link_to_c"] = h5py.SoftLink("/c")
            f["ext"] = h5py.ExternalLink("iter_ext.h5", "/eg")
            f["c/hard_b"] = f["b"]
            f["dt"] = np.dtype("i2")
            for n in ("k", "j", "i"):
                f["a"].attrs[n] = n
        with h5py.File(p, "r") as f:
            ctx.probe(f, "reopened")
            rec = {}
            names = []
            f.visit(names.append)
            rec["visit"] = names
            items = []
            f.visititems(lambda n, o: items.append([n, type(o).__name__, o.name]))
            rec["visititems"] = items
            rec["visit_stop"] = f.visit(lambda n: n if n.endswith("leaf") else None)
            links = []
            f.visit_links(links.append)
            rec["visit_links"] = links
            litems = []
            f.visititems_links(lambda n, l: litems.append([n, type(l).__name__]))
            rec["visititems_links"] = litems
            rec["items"] = [[k, type(v).__name__] for k, v in f.items()]
            rec["values"] = [v.name for v in f.values()]
            rec["keys"] = [list(f.keys()), list(f["a"].keys()), list(f["c"]), list(iter(f["b"]))]
            sub = []
            f["a"].visititems(lambda n, o: sub.append([n, o.name]))
            rec["sub_visit"] = sub
            for idx, io_ in (("name_inc", (h5py.h5.INDEX_NAME, h5py.h5.ITER_INC)),
                             ("name_dec", (h5py.h5.INDEX_NAME, h5py.h5.ITER_DEC)),
                             ("crt_dec", (h5py.h5.INDEX_CRT_ORDER, h5py.h5.ITER_DEC))):
                out = []
                try:
                    f.id.links.iterate(lambda n: out.append(n.decode()), idx_type=io_[0], order=io_[1])
                    rec["links_iterate_" + idx] = out
                except Exception as e:
                    rec["links_iterate_" + idx] = {"error": type(e).__name__, "message": ctx.norm(e)}
            ovisit = []
            h5py.h5o.visit(f.id, lambda n, info: ovisit.append([n.decode(), int(info.type), int(info.rc)]),
                           info=True)
            rec["h5o_visit"] = ovisit
            lvisit = []
            f.id.links.visit(lambda n: lvisit.append(n.decode()))
            rec["h5l_visit"] = lvisit
            anames = []
            h5py.h5a.iterate(f["a"].id, lambda n: anames.append(n.decode()))
            rec["h5a_iterate"] = anames
            rec["attrs_items"] = [[k, str(v)] for k, v in f["a"].attrs.items()]
            r[f"track_order={order}"] = rec
    return r


# --- attributes ----------------------------------------------------------------------------

def attribute_values(f):
    cmp_t = np.dtype([("a", "i4"), ("b", "f8"), ("c", "S3"), ("d", "u1", (2,))])
    return {
        "i1": np.int8(-5), "u1": np.uint8(250), "i2": np.int16(-30000), "u2": np.uint16(65000),
        "i4": np.int32(-2 ** 31), "u4": np.uint32(2 ** 32 - 1), "i8": np.int64(-2 ** 62), "u8": np.uint64(2 ** 63 + 5),
        "f2": np.float16(1.5), "f4": np.float32(3.25), "f8": np.float64(np.pi), "nan": np.nan, "inf": -np.inf,
        "c8": np.complex64(1 + 2j), "c16": np.complex128(-0.5 + 1e300j), "bool": np.bool_(True),
        "bool_arr": np.array([True, False, True]), "be_i4": np.array([1, -2, 3], dtype=">i4"),
        "be_f8": np.array([1.5, 2.5], dtype=">f8"), "arr2d": np.arange(12.0).reshape(3, 4),
        "int_list": [1, 2, 3], "pyint": 7, "pyfloat": 2.75,
        "pystr": "hello", "unicode": "h\u00e9llo \u2603", "str_list": ["a", "bb", "ccc"],
        "unicode_list": ["\u03b1", "\u03b2\u03b3"], "bytes": np.bytes_(b"fixed\x01"),
        "fixed_arr": np.array([b"ab", b"cde"], dtype="S4"),
        "empty": h5py.Empty("f4"), "empty_str": h5py.Empty(np.dtype("S1")),
        "compound": np.array((1, 2.5, b"xy", [3, 4]), dtype=cmp_t),
        "compound_arr": np.array([(i, i / 2, b"r%d" % i, [i, i + 1]) for i in range(3)], dtype=cmp_t),
        "opaque": np.void(b"\x01\x02\x03\x04"),
        "zero_len": np.zeros((0,), dtype="i4"),
    }


@scenario
def attributes(ctx):
    r = {}
    p = ctx.path("attributes.h5")
    with h5py.File(p, "w", track_order=True) as f:
        ctx.probe(f, "file")
        d = f.create_dataset("d", data=np.arange(10))
        g = f.create_group("g", track_order=True)
        f["named_t"] = np.dtype("f4")
        holders = {"root": f, "dataset": d, "group": g, "datatype": f["named_t"]}
        for key, obj in holders.items():
            for name, value in attribute_values(f).items():
                try:
                    obj.attrs[name] = value
                except Exception as e:
                    r[f"{key}:{name}"] = {"error": type(e).__name__, "message": ctx.norm(e)}
        g.attrs.create("enum", 1, dtype=h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 7}, basetype="u1"))
        g.attrs.create("enum_arr", np.array([0, 7, 1], dtype="i2"),
                       dtype=h5py.enum_dtype({"A": 0, "B": 1, "C": 7}, basetype="i2"))
        vl = np.empty(3, dtype=object)
        vl[:] = [np.array([1, 2], "i4"), np.array([], "i4"), np.array([3, 4, 5], "i4")]
        g.attrs.create("vlen_int", vl, dtype=h5py.vlen_dtype("i4"))
        g.attrs.create("vlen_str_ascii", ["one", "three"], dtype=h5py.string_dtype("ascii"))
        g.attrs.create("fixed_utf8", np.array(["\u00e9t\u00e9".encode()], dtype=h5py.string_dtype("utf-8", 8)))
        g.attrs.create("shaped", data=np.arange(6), shape=(2, 3), dtype="i2")
        g.attrs.create("array_t", data=np.arange(6, dtype="i2").reshape(2, 3), dtype=np.dtype(("i2", (3,))))
        g.attrs["ref"] = d.ref
        g.attrs["ref_arr"] = np.array([f.ref, g.ref, h5py.Reference()], dtype=h5py.ref_dtype)
        g.attrs["regref"] = d.regionref[2:5]
        d.attrs.modify("i4", 99)
        d.attrs.modify("new_by_modify", [1.5, 2.5])
        d.attrs["f8"] = "now a string"
        del d.attrs["u2"]
        h5py.h5a.rename(d.id, b"i1", b"i1_renamed")
        r["modify_shape"] = ctx.attempt(lambda: d.attrs.modify("str_list", ["x"]))
        r["del_missing"] = ctx.attempt(lambda: d.attrs.__delitem__("nope"))
        r["get_missing"] = ctx.attempt(lambda: d.attrs["nope"])
        r["get_default"] = d.attrs.get("nope", "default")
        r["contains"] = ["i4" in d.attrs, "u2" in d.attrs, "i1_renamed" in d.attrs]
        r["len"] = [len(f.attrs), len(d.attrs), len(g.attrs)]
        r["order"] = [list(g.attrs), list(d.attrs)]
    with h5py.File(p, "r") as f:
        ctx.probe(f["g"], "group")
        g = f["g"]
        r["values"] = {n: canon(f, g.attrs[n]) for n in g.attrs}
        r["ref_deref"] = f[g.attrs["ref"]].name
        r["regref_values"] = canon(f, f["d"][g.attrs["regref"]])
        r["attr_ids"] = [[n, g.attrs.get_id(n).shape, ctx.attempt(g.attrs.get_id(n).get_storage_size)] for n in g.attrs]
        r["str_read"] = [f.attrs["pystr"], f.attrs["unicode"], list(f.attrs["str_list"])]
        ainfo = h5py.h5a.get_info(f.id, index=0, index_type=h5py.h5.INDEX_CRT_ORDER)
        r["ainfo"] = [ainfo.corder_valid, ainfo.corder, ainfo.cset, ainfo.data_size]
        r["by_idx"] = [h5py.h5a.open(f.id, index=i, index_type=h5py.h5.INDEX_CRT_ORDER,
                                     order=h5py.h5.ITER_DEC).name.decode() for i in range(3)]

    # dense attribute storage: many attributes and one larger than 64 KiB need the latest format
    p = ctx.path("attributes_dense.h5")
    with h5py.File(p, "w", libver="latest") as f:
        ctx.probe(f, "dense")
        g = f.create_group("g", track_order=True)
        for i in range(40):
            g.attrs[f"attr{i:02d}"] = np.arange(i)
        g.attrs["big"] = np.arange(20000, dtype="f8")
        del g.attrs["attr05"]
        r["dense"] = [len(g.attrs), list(g.attrs)[:8]]
    r["big_in_old_format"] = ctx.attempt(
        lambda: h5py.File(ctx.path("attributes_big_old.h5"), "w", libver="earliest").attrs.__setitem__(
            "big", np.arange(20000, dtype="f8")))
    gc.collect()
    return r


# --- datasets: numeric -------------------------------------------------------------------

@scenario
def numeric(ctx):
    r = {}
    p = ctx.path("numeric.h5")
    types = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8", "c16", "?",
             ">i2", ">u4", ">i8", ">f4", ">f8", ">c16"]
    with h5py.File(p, "w") as f:
        ctx.probe(f, "file")
        for t in types:
            data = np.arange(-12, 12).reshape(2, 3, 4)
            data = (data % 2 == 0) if t == "?" else data.astype(t) * (1 if t[-2] in "iu?" else 1.25) \
                if t.lstrip("<>")[0] != "u" else np.arange(24).reshape(2, 3, 4).astype(t)
            d = f.create_dataset("t_" + t.replace(">", "be_").replace("?", "bool"), data=data.astype(t))
            ctx.probe(d, "dataset " + t) if t == "i4" else None
        f.create_dataset("scalar", data=np.float64(2.5))
        f.create_dataset("scalar_int", data=7)
        f.create_dataset("zero_len", shape=(0,), dtype="i4")
        f.create_dataset("zero_2d", shape=(3, 0), dtype="f4")
        f.create_dataset("null", data=h5py.Empty("i4"))
        f.create_dataset("big1d", data=np.sin(np.arange(100000)))
        f.create_dataset("extremes", data=np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, np.finfo("f8").max]))
        f.create_dataset("ints", data=np.array([np.iinfo("i8").min, np.iinfo("i8").max], dtype="i8"))
        d = f.create_dataset("part", data=np.arange(100).reshape(10, 10))
        d[0:2, 0:2] = -1
        d[5] = np.arange(10) * 2
        d[..., 9] = 0
        d[7, [1, 3, 5]] = [71, 73, 75]
        d.write_direct(np.full((2, 2), 77, dtype="i8"), None, np.s_[8:10, 8:10])
        conv = f.create_dataset("conv", shape=(4,), dtype="i2")
        conv[...] = np.array([1.7, -2.2, 300.9, 4.0])
        r["overflow_write"] = ctx.attempt(lambda: conv.__setitem__(0, np.array(2 ** 40)))
        r["shape_mismatch"] = ctx.attempt(lambda: d.__setitem__(np.s_[0:2], np.arange(3)))
    with h5py.File(p, "r") as f:
        ctx.probe(f["part"], "dataset part")
        d = f["part"]
        r["slice"] = canon(f, d[2:5, ::3])
        r["fancy"] = canon(f, d[[1, 3, 7], :2])
        r["mask"] = canon(f, d[np.arange(100).reshape(10, 10) % 7 == 0])
        r["neg_step"] = ctx.attempt(lambda: d[::-1])
        r["out_of_range"] = ctx.attempt(lambda: d[10, 0])
        r["ellipsis"] = canon(f, d[..., 0])
        r["point"] = canon(f, d[4, 5])
        r["row_iter"] = [int(row.sum()) for row in d]
        out = np.zeros((3, 3), dtype="i8")
        d.read_direct(out, np.s_[0:3, 0:3], np.s_[0:3, 0:3])
        r["read_direct"] = canon(f, out)
        out2 = np.zeros((4,), dtype="f4")
        d.read_direct(out2, np.s_[5, 0:4])
        r["read_direct_conv"] = canon(f, out2)
        r["astype"] = canon(f, d.astype("f4")[0:2])
        r["props"] = [len(d), d.size, d.nbytes, d.ndim, d.shape, d.dtype.str]
        r["scalar"] = [canon(f, f["scalar"][()]), canon(f, f["scalar"][...]), f["scalar"].shape]
        r["scalar_index_error"] = ctx.attempt(lambda: f["scalar"][0])
        r["null"] = [f["null"].shape, canon(f, f["null"][()])]
        r["zero"] = [canon(f, f["zero_len"][()]), canon(f, f["zero_2d"][()])]
        r["conv"] = canon(f, f["conv"][()])
        r["types"] = {k: [canon(f, v[()]), cs.type_desc(v.id.get_type())] for k, v in f.items() if k.startswith("t_")}
        r["read_as_other"] = canon(f, f["t_be_f8"].astype("<f4")[()])
    return r


# --- datasets: compound, enum, array, strings, vlen ---------------------------------------

@scenario
def types(ctx):
    r = {}
    p = ctx.path("types.h5")
    cmp_t = np.dtype([("id", "i4"), ("pos", "f8", (3,)), ("name", "S8"), ("flag", "?"),
                      ("nested", [("x", "i2"), ("y", "u8")])])
    with h5py.File(p, "w") as f:
        ctx.probe(f, "file")
        data = np.zeros(5, dtype=cmp_t)
        data["id"] = np.arange(5)
        data["pos"] = np.arange(15).reshape(5, 3) / 4
        data["name"] = [b"n%d" % i for i in range(5)]
        data["flag"] = [True, False, True, False, True]
        data["nested"]["x"] = -np.arange(5)
        data["nested"]["y"] = 2 ** 40 + np.arange(5)
        f["compound"] = data
        f["compound"][2] = (20, [1, 2, 3], b"changed", False, (7, 8))
        vstr_cmp = np.dtype([("n", "i4"), ("s", h5py.string_dtype())])
        f["compound_vstr"] = np.array([(1, "one"), (2, "tw\u00f6")], dtype=vstr_cmp)
        e8 = h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 42}, basetype="i1")
        f.create_dataset("enum", data=np.array([0, 1, 42, 1], dtype="i1"), dtype=e8)
        e16 = h5py.enum_dtype({"OFF": 0, "ON": 65535}, basetype="u2")
        f.create_dataset("enum_u2", data=np.array([[0, 65535], [65535, 0]], dtype="u2"), dtype=e16)
        a = f.create_dataset("array", shape=(4,), dtype=np.dtype(("f4", (2, 3))))
        a[...] = np.arange(24, dtype="f4").reshape(4, 2, 3)
        f.create_dataset("array_of_cmp", shape=(2,), dtype=np.dtype(([("a", "i2"), ("b", "f4")], (2,))))
        f["fixed_S"] = np.array([b"abc", b"", b"0123456789"], dtype="S10")
        f.create_dataset("fixed_ascii", data=np.array([b"hi", b"there"], dtype="S6"),
                         dtype=h5py.string_dtype("ascii", 6))
        f.create_dataset("fixed_utf8", data=np.array(["\u00e9t\u00e9".encode(), b"ok"],
                                                     dtype=h5py.string_dtype("utf-8", 8)))
        f.create_dataset("vlen_utf8", data=["", "ascii", "\u2603 snow", "x" * 300], dtype=h5py.string_dtype())
        f.create_dataset("vlen_ascii", data=[b"a", b"bc"], dtype=h5py.string_dtype("ascii"))
        f.create_dataset("vlen_2d", data=np.array([["a", "b"], ["cc", "ddd"]], dtype=object),
                         dtype=h5py.string_dtype())
        f["vlen_scalar"] = "just one string"
        f["fixed_scalar"] = np.bytes_(b"fixed one")
        vi = f.create_dataset("vlen_int", (4,), dtype=h5py.vlen_dtype("i4"))
        vi[0] = [1]
        vi[1] = [2, 3]
        vi[3] = np.arange(10)
        vf = f.create_dataset("vlen_f8", (2,), dtype=h5py.vlen_dtype("f8"))
        vf[0] = [0.5, 1.5]
        vf[1] = []
        def vlen_cmp():
            vt = np.dtype([("a", "i4"), ("b", "f4")])
            v = f.create_dataset("vlen_cmp", (2,), dtype=h5py.vlen_dtype(vt))
            v[0] = np.array([(1, 0.5), (2, 1.5)], dtype=vt)
            v[1] = np.array([(3, 2.5)], dtype=vt)
            return [[x.tolist() for x in v[()]]]
        r["vlen_cmp"] = ctx.attempt(vlen_cmp)
        f["opaque"] = np.array([b"\x00\x01\x02", b"\xff\xfe\xfd"], dtype="V3")
        f["named_cmp"] = np.dtype([("u", "u4"), ("v", "f2")])
        nd = f.create_dataset("uses_named", (3,), dtype=f["named_cmp"])
        nd[...] = np.array([(1, 0.5), (2, 1.5), (3, 2.5)], dtype=nd.dtype)
        f["named_vlen"] = h5py.vlen_dtype("i8")
        f["named_str"] = h5py.string_dtype()
    with h5py.File(p, "r") as f:
        ctx.probe(f["compound"], "compound")
        c = f["compound"]
        r["fields"] = [canon(f, c["pos"]), canon(f, c.fields(["name", "id"])[()]), canon(f, c.fields(["id", "flag"])[1:3]),
                       canon(f, c.fields("nested")[()])]
        r["field_missing"] = ctx.attempt(lambda: c["nope"])
        r["compound_vstr"] = canon(f, f["compound_vstr"][()])
        r["enum"] = [canon(f, f["enum"][()]), sorted(h5py.check_enum_dtype(f["enum"].dtype).items())]
        r["asstr"] = [list(f["vlen_utf8"].asstr()[()]), list(f["fixed_utf8"].asstr()[()]),
                      list(f["vlen_ascii"].asstr()[()]), f["vlen_scalar"].asstr()[()]]
        r["asstr_errors"] = ctx.attempt(lambda: f["fixed_utf8"].asstr("ascii")[()])
        r["vlen"] = [[list(map(int, x)) for x in f["vlen_int"][()]], [list(x) for x in f["vlen_f8"][()]]]
        r["named"] = [f["uses_named"].id.get_type().committed(), f["named_cmp"].dtype.str,
                      cs.type_desc(f["named_str"].id)]
        r["array_slice"] = canon(f, f["array"][1:3])
    return r


# --- references ------------------------------------------------------------------------------

@scenario
def references(ctx):
    r = {}
    p = ctx.path("references.h5")
    with h5py.File(p, "w") as f:
        ctx.probe(f, "file")
        g = f.create_group("g")
        d = f.create_dataset("d", data=np.arange(20).reshape(4, 5))
        refs = f.create_dataset("refs", (4,), dtype=h5py.ref_dtype)
        refs[0] = f.ref
        refs[1] = g.ref
        refs[2] = d.ref
        regs = f.create_dataset("regrefs", (4,), dtype=h5py.regionref_dtype)
        regs[0] = d.regionref[1:3, 2:4]
        regs[1] = d.regionref[0, :]
        regs[2] = d.regionref[::2, 1]
        d.attrs["self"] = d.ref
        g.attrs["to_d_region"] = d.regionref[3, 1:4]
        f["refs_2d"] = np.array([[d.ref, g.ref], [f.ref, h5py.Reference()]], dtype=h5py.ref_dtype)
        cmp_t = np.dtype([("label", "S4"), ("target", h5py.ref_dtype)])
        f["cmp_refs"] = np.array([(b"grp", g.ref), (b"dat", d.ref)], dtype=cmp_t)
    with h5py.File(p, "r") as f:
        ctx.probe(f["refs"], "refs")
        refs = f["refs"][()]
        r["deref"] = [f[x].name if x else None for x in refs]
        r["types"] = [type(f[x]).__name__ for x in refs if x]
        r["null_deref"] = ctx.attempt(lambda: f[refs[3]])
        r["bool"] = [bool(x) for x in refs]
        r["get_name"] = [h5py.h5r.get_name(x, f.id).decode() for x in refs if x]
        r["obj_type"] = [int(h5py.h5r.get_obj_type(x, f.id)) for x in refs if x]
        regs = f["regrefs"][()]
        r["regions"] = [canon(f, x) for x in regs]
        r["region_read"] = [canon(f, f["d"][x]) for x in regs if x]
        r["region_shape"] = [list(f["d"].regionref.shape(regs[0])), list(f["d"].regionref.selection(regs[0]))]
        r["attr_ref"] = f[f["d"].attrs["self"]].name
        r["attr_regref"] = canon(f, f["d"][f["g"].attrs["to_d_region"]])
        r["refs_2d"] = canon(f, f["refs_2d"][()])
        r["cmp_refs"] = [[x["label"].decode(), f[x["target"]].name] for x in f["cmp_refs"][()]]
        r["dtype_check"] = [h5py.check_ref_dtype(f["refs"].dtype).__name__,
                            h5py.check_ref_dtype(f["regrefs"].dtype).__name__]
    return r


# --- resize -----------------------------------------------------------------------------------

@scenario
def resize(ctx):
    r = {}
    p = ctx.path("resize.h5")
    with h5py.File(p, "w") as f:
        ctx.probe(f, "file")
        d = f.create_dataset("grow", (2, 3), maxshape=(None, 6), chunks=(2, 2), dtype="i4", fillvalue=-1)
        d[...] = np.arange(6).reshape(2, 3)
        d.resize((5, 3))
        r["grown"] = canon(f, d[()])
        d.resize(6, axis=1)
        d[4, 5] = 9
        r["grown2"] = [d.shape, canon(f, d[()]), d.id.get_num_chunks()]
        d.resize((3, 4))
        r["shrunk"] = [canon(f, d[()]), d.id.get_num_chunks(), d.id.get_storage_size()]
        d.resize((6, 6))
        r["regrown"] = canon(f, d[()])
        r["beyond_max"] = ctx.attempt(lambda: d.resize((3, 7)))
        r["bad_axis"] = ctx.attempt(lambda: d.resize(3, axis=2))
        f.create_dataset("contig", data=np.arange(4))
        r["contig_resize"] = ctx.attempt(lambda: f["contig"].resize((5,)))
        a = f.create_dataset("append", (0,), maxshape=(None,), dtype="f8", chunks=(3,))
        for i in range(10):
            a.resize((a.shape[0] + i,))
            a[a.shape[0] - i:] = np.arange(i) + i / 10
        r["append"] = [a.shape, canon(f, a[()])]
        e = f.create_dataset("empty_then_grow", (0, 0), maxshape=(None, None), dtype="u1")
        e.id.set_extent((2, 2))
        e[...] = 5
        r["set_extent"] = canon(f, e[()])
    with h5py.File(p, "r") as f:
        ctx.probe(f["grow"], "grow")
        r["maxshape"] = [f["grow"].maxshape, f["append"].maxshape, f["empty_then_grow"].maxshape]
        r["read_only_resize"] = ctx.attempt(lambda: f["grow"].resize((1, 1)))
    return r


# --- layouts ---------------------------------------------------------------------------------

@scenario
def layouts(ctx):
    r = {}
    p = ctx.path("layouts.h5")
    data = np.arange(2000, dtype="i4").reshape(40, 50)
    for i in range(2):
        with h5py.File(ctx.path(f"vds_src{i}.h5"), "w") as s:
            s["data"] = np.arange(10) + 100 * i
    with open(ctx.path("external_raw.bin"), "wb") as raw:
        raw.write(np.arange(8, dtype="<i4").tobytes())
    with h5py.File(p, "w") as f:
        ctx.probe(f, "file")
        f.create_dataset("contiguous", data=data)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        dsid = h5py.h5d.create(f.id, b"compact", h5py.h5t.STD_I32LE, h5py.h5s.create_simple((10,)), dcpl=dcpl)
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(10, dtype="i4"))
        dcpl_big = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl_big.set_layout(h5py.h5d.COMPACT)
        r["compact_too_big"] = ctx.attempt(lambda: h5py.h5d.create(
            f.id, b"compact_big", h5py.h5t.STD_I32LE, h5py.h5s.create_simple((70000,)), dcpl=dcpl_big))
        f.create_dataset("chunked", data=data, chunks=(8, 10))
        f.create_dataset("chunked_auto", data=data, chunks=True)
        f.create_dataset("gzip", data=data, chunks=(10, 10), compression="gzip", compression_opts=4)
        f.create_dataset("shuffle_gzip", data=data, chunks=(10, 10), compression="gzip", shuffle=True)
        f.create_dataset("fletcher32", data=data, chunks=(10, 10), fletcher32=True)
        f.create_dataset("lzf", data=data, chunks=(10, 10), compression="lzf")
        f.create_dataset("scaleoffset", data=data, chunks=(10, 10), scaleoffset=0)
        f.create_dataset("partial_chunks", data=np.arange(17), chunks=(5,))
        f.create_dataset("external", shape=(8,), dtype="<i4",
                         external=[("external_raw.bin", 0, h5py.h5f.UNLIMITED)])
        layout = h5py.VirtualLayout(shape=(2, 10), dtype="i8")
        for i in range(2):
            layout[i] = h5py.VirtualSource(f"vds_src{i}.h5", "data", shape=(10,))
        f.create_virtual_dataset("virtual", layout, fillvalue=-1)
        lay2 = h5py.VirtualLayout(shape=(15,), dtype="i8")
        lay2[0:5] = h5py.VirtualSource(".", "/contiguous", shape=(40, 50))[0, 0:5]
        f.create_virtual_dataset("virtual_self", lay2, fillvalue=-2)
        f["chunked"][3:5, 3:5] = 0
    with h5py.File(p, "r") as f:
        ctx.probe(f["virtual"], "virtual")
        r["layouts"] = {k: [int(v.id.get_create_plist().get_layout()), v.chunks, v.compression,
                            int(v.id.get_storage_size())] for k, v in f.items()}
        r["values"] = {k: canon(f, v[()]) for k, v in f.items()}
        r["sub"] = {k: canon(f, v[3:7, 4:9]) for k, v in f.items() if v.ndim == 2}
        r["iter_chunks"] = [[[s.start, s.stop] for s in sl] for sl in f["chunked"].iter_chunks()][:12]
        r["vsources"] = [[vs.file_name, vs.dset_name] for vs in f["virtual"].virtual_sources()]
    return r


# --- fill values -------------------------------------------------------------------------------

@scenario
def fillvalues(ctx):
    r = {}
    p = ctx.path("fillvalues.h5")
    cmp_t = np.dtype([("a", "i4"), ("b", "f8")])
    with h5py.File(p, "w") as f:
        ctx.probe(f, "file")
        d = f.create_dataset("int_fill", (10,), dtype="i4", fillvalue=-7)
        d[2:4] = [1, 2]
        c = f.create_dataset("nan_chunked", (20, 20), dtype="f4", chunks=(5, 5), fillvalue=np.nan)
        c[0:5, 0:5] = 1
        f.create_dataset("cmp_fill", (3,), dtype=cmp_t, fillvalue=np.array((3, 1.5), dtype=cmp_t))
        f.create_dataset("str_fill", (3,), dtype="S5", fillvalue=b"abc")
        f.create_dataset("default_fill", (4,), dtype="f8")
        f.create_dataset("default_chunked", (4, 4), dtype="u2", chunks=(2, 2))
        for name, ftime, atime in (("never_early", h5py.h5d.FILL_TIME_NEVER, h5py.h5d.ALLOC_TIME_EARLY),
                                   ("alloc_incr", h5py.h5d.FILL_TIME_ALLOC, h5py.h5d.ALLOC_TIME_INCR),
                                   ("ifset_late", h5py.h5d.FILL_TIME_IFSET, h5py.h5d.ALLOC_TIME_LATE)):
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_fill_time(ftime)
            dcpl.set_alloc_time(atime)
            if atime == h5py.h5d.ALLOC_TIME_INCR:
                dcpl.set_chunk((4,))
            dcpl.set_fill_value(np.array(11, dtype="i2"))
            h5py.h5d.create(f.id, name.encode(), h5py.h5t.STD_I16LE, h5py.h5s.create_simple((8,)), dcpl=dcpl)
        f["alloc_incr"][0] = 5
        f.create_dataset("resize_fill", (2,), maxshape=(None,), dtype="i8", fillvalue=99, data=[1, 2])
        f["resize_fill"].resize((5,))
        r["storage_before_write"] = [f["ifset_late"].id.get_storage_size(), f["never_early"].id.get_storage_size()]
    with h5py.File(p, "r") as f:
        ctx.probe(f["int_fill"], "int_fill")
        r["fill"] = {k: [canon(f, v.fillvalue), int(v.id.get_create_plist().fill_value_defined()),
                         int(v.id.get_create_plist().get_fill_time()), int(v.id.get_create_plist().get_alloc_time()),
                         int(v.id.get_space_status())] for k, v in f.items()}
        r["values"] = {k: canon(f, v[()]) for k, v in f.items() if k != "never_early"}
        r["nan_chunks"] = f["nan_chunked"].id.get_num_chunks()
    return r


# --- direct chunk I/O --------------------------------------------------------------------------

@scenario
def direct_chunk(ctx):
    r = {}
    p = ctx.path("direct_chunk.h5")
    with h5py.File(p, "w") as f:
        ctx.probe(f, "file")
        d = f.create_dataset("gz", (8, 8), dtype="i4", chunks=(4, 4), compression="gzip")
        chunk = np.arange(16, dtype="i4").reshape(4, 4)
        d.id.write_direct_chunk((0, 0), zlib.compress(chunk.tobytes()))
        d.id.write_direct_chunk((4, 4), (chunk * 10).tobytes(), filter_mask=1)  # gzip skipped
        d[0:4, 4:8] = -chunk  # through the filter pipeline
        raw = f.create_dataset("raw", (6,), dtype="u2", chunks=(3,))
        raw.id.write_direct_chunk((3,), np.array([7, 8, 9], "u2").tobytes())
        ctx.probe(d, "dataset")
        r["bad_offset"] = ctx.attempt(lambda: d.id.write_direct_chunk((1, 0), b"\0" * 64))
    with h5py.File(p, "r") as f:
        d = f["gz"]
        ctx.probe(d, "dataset reopened")
        r["values"] = canon(f, d[()])
        out = []
        for off in ((0, 0), (0, 4), (4, 4)):
            mask, data = d.id.read_direct_chunk(off)
            out.append([mask, len(data), (zlib.decompress(data) if mask == 0 else data).hex()])
        r["read_direct_chunk"] = out
        r["missing_chunk"] = ctx.attempt(lambda: d.id.read_direct_chunk((4, 0)))
        r["num_chunks"] = d.id.get_num_chunks()
        r["chunk_info"] = [[list(i.chunk_offset), i.filter_mask, i.byte_offset, i.size]
                           for i in (d.id.get_chunk_info(k) for k in range(d.id.get_num_chunks()))]
        ci = d.id.get_chunk_info_by_coord((4, 4))
        r["by_coord"] = [list(ci.chunk_offset), ci.filter_mask, ci.byte_offset, ci.size]
        it = []
        d.id.chunk_iter(lambda s: it.append([list(s.chunk_offset), s.filter_mask, s.byte_offset, s.size]))
        r["chunk_iter"] = it
        r["raw"] = [canon(f, f["raw"][()]), f["raw"].id.read_direct_chunk((3,))[1].hex()]
        buf = bytearray(64)
        mask, got = d.id.read_direct_chunk((4, 4), out=buf), None
        r["into_buffer"] = [mask[0], bytes(buf[:64]).hex()]
    return r


# --- closing with open handles -------------------------------------------------------------

@scenario
def close_handles(ctx):
    r = {}
    p = ctx.path("close.h5")
    with h5py.File(p, "w") as f:
        f["x"] = np.arange(5)
        f.create_group("g").attrs["a"] = 3
        f["t"] = np.dtype("i8")
    gc.collect()
    r["count_start"] = cs.open_object_count()

    f = h5py.File(p, "r")
    ctx.probe(f, "file")
    d, g, t = f["x"], f["g"], f["t"]
    aid = g.attrs.get_id("a")
    r["count_open"] = cs.open_object_count()
    f.close()
    r["after_close"] = [bool(f), bool(d), bool(g), bool(t), aid.valid, cs.open_object_count()]
    r["use_after_close"] = ctx.attempt(lambda: d[()])
    r["attr_after_close"] = ctx.attempt(lambda: g.attrs["a"])
    del d, g, t, aid

    # default (weak) close degree: objects keep the file open
    fid = h5py.h5f.open(p.encode(), h5py.h5f.ACC_RDONLY)
    ctx.probe(fid, "low-level file")
    dsid = h5py.h5d.open(fid, b"x")
    gid = h5py.h5g.open(fid, b"g")
    r["weak_degree"] = int(fid.get_access_plist().get_fclose_degree())
    fid.close()
    arr = np.empty(dsid.shape, dsid.dtype)
    dsid.read(h5py.h5s.ALL, h5py.h5s.ALL, arr)
    r["weak"] = [fid.valid, dsid.valid, gid.valid, cs.open_object_count(), canon(None, arr)]
    f2 = h5py.File(p, "r")  # the file is still open underneath: reopening shares it
    r["weak_reopen"] = [canon(f2, f2["x"][()]), cs.open_object_count()]
    f2.close()
    gid.close()
    dsid.close()
    r["weak_after"] = cs.open_object_count()

    # strong: closing the file closes everything in it
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_fclose_degree(h5py.h5f.CLOSE_STRONG)
    fid = h5py.h5f.open(p.encode(), h5py.h5f.ACC_RDONLY, fapl=fapl)
    dsid = h5py.h5d.open(fid, b"x")
    fid.close()
    r["strong"] = [dsid.valid, cs.open_object_count()]

    # semi: closing a file with open objects fails
    fapl.set_fclose_degree(h5py.h5f.CLOSE_SEMI)
    fid = h5py.h5f.open(p.encode(), h5py.h5f.ACC_RDONLY, fapl=fapl)
    dsid = h5py.h5d.open(fid, b"x")
    r["semi_close"] = ctx.attempt(fid.close)
    r["semi_state"] = [fid.valid, dsid.valid, cs.open_object_count()]
    dsid.close()
    if fid.valid:
        fid.close()
    r["semi_after"] = cs.open_object_count()

    # two File objects on one file: closing one leaves the other working
    f1 = h5py.File(p, "r")
    f2 = h5py.File(p, "r")
    d2 = f2["x"]
    f1.close()
    r["shared"] = [bool(f1), bool(f2), canon(f2, d2[()]), cs.open_object_count()]
    f2.close()
    r["shared_after"] = [bool(d2), cs.open_object_count()]
    del d2

    # writes through an open dataset are flushed by closing the file
    f = h5py.File(p, "r+")
    d = f["x"]
    d[0] = 100
    g = f.create_group("new")
    g.attrs["k"] = "v"
    f.close()
    with h5py.File(p, "r") as f:
        r["flushed"] = [canon(f, f["x"][()]), f["new"].attrs["k"]]
    del d, g
    gc.collect()
    r["count_end"] = cs.open_object_count()
    return r


# --- reopening ---------------------------------------------------------------------------------

@scenario
def reopen(ctx):
    r = {}
    p = ctx.path("reopen.h5")
    with h5py.File(p, "w") as f:
        f["x"] = np.arange(4)
    for i in range(20):  # many open/close cycles
        with h5py.File(p, "r+") as f:
            f["x"][i % 4] += 1
            f.attrs[f"cycle{i}"] = i
    r["cycles"] = cs.open_object_count()
    with h5py.File(p, "r") as f:
        ctx.probe(f, "file")
        r["after_cycles"] = [canon(f, f["x"][()]), len(f.attrs)]
        fid2 = f.id.reopen()  # H5Freopen: a new file ID on the same file
        ctx.probe(fid2, "H5Freopen")
        f2 = h5py.File(fid2)
        r["reopened"] = [canon(f2, f2["x"][()]), f2.id.fileno == f.id.fileno, f2.id.id != f.id.id, f2.mode]
        f2.close()
        fa = h5py.File(p, "r")
        ctx.probe(fa, "second open")
        r["double_open"] = [fa.id.fileno == f.id.fileno, canon(fa, fa["x"][()])]
        r["open_rw_while_ro"] = ctx.attempt(lambda: h5py.File(p, "r+"))
        r["truncate_while_open"] = ctx.attempt(lambda: h5py.File(p, "w"))
        fa.close()
    with h5py.File(p, "a") as f:
        f["y"] = "added"
    with h5py.File(p, "r") as f:
        r["final"] = [sorted(f), f["y"][()].decode()]
    return r


# --- object operations: copy, move, named types, dimension scales, comments ---------------

@scenario
def objects(ctx):
    r = {}
    p = ctx.path("objects.h5")
    with h5py.File(p, "w") as f:
        ctx.probe(f, "file")
        f["t"] = np.dtype([("a", "i4"), ("b", "f4")])
        typed = f.create_dataset("typed", (3,), dtype=f["t"])
        typed[...] = np.array([(1, 1.5), (2, 2.5), (3, 3.5)], dtype=typed.dtype)
        anon = f.create_dataset(None, data=np.arange(4))
        r["anon_name"] = anon.name
        f["named_anon"] = anon
        g = f.create_group("g")
        g.attrs["attr"] = 1
        g["child"] = np.arange(3)
        g["soft"] = h5py.SoftLink("/typed")
        f.copy("typed", "typed_copy")
        f.copy("g", "g_shallow", shallow=True)
        f.copy("g", "g_noattrs", without_attrs=True)
        f.copy("g", "g_expand", expand_soft=True)
        f.move("g_noattrs", "moved/deeper/g") if "moved" in f else (f.create_group("moved/deeper"),
                                                                     f.move("g_noattrs", "moved/deeper/g"))
        x = f.create_dataset("x_scale", data=np.arange(5.0))
        y = f.create_dataset("y_scale", data=np.arange(3.0) * 10)
        x.make_scale("X axis")
        y.make_scale()
        d2 = f.create_dataset("data2d", data=np.ones((5, 3)))
        d2.dims[0].attach_scale(x)
        d2.dims[1].attach_scale(y)
        d2.dims[0].label = "x"
        d2.dims[1].label = "y"
        h5py.h5o.set_comment(g.id, b"a comment on g")
        with h5py.File(ctx.path("objects_dst.h5"), "w") as o:
            f.copy("typed", o, name="typed_elsewhere")
            f.copy(f["g"], o["/"], name="g_elsewhere", expand_refs=True)
            o["typed_elsewhere"].attrs["src"] = "copied"
            r["copied"] = [list(o), o["typed_elsewhere"].id.get_type().committed(), o["g_elsewhere/child"][()].tolist()]
        r["copy_onto_existing"] = ctx.attempt(lambda: f.copy("typed", "typed_copy"))
    with h5py.File(p, "r") as f:
        ctx.probe(f["data2d"], "data2d")
        d2 = f["data2d"]
        r["dims"] = [[dim.label for dim in d2.dims], [len(dim) for dim in d2.dims],
                     [[s.name for s in dim.values()] for dim in d2.dims], [k for k in d2.dims[0].keys()],
                     f["x_scale"].is_scale, d2.is_scale]
        g = f["g"]
        r["comment"] = cs.object_comment(g.id.id)
        r["copies"] = [sorted(f["g_shallow"]), list(f["g_shallow"].attrs), list(f["moved/deeper/g"].attrs),
                       type(f["g_expand"].get("soft", getlink=True)).__name__]
        r["typed"] = [canon(f, f["typed_copy"][()]), f["typed_copy"].id.get_type().committed()]
        r["anon"] = [f["named_anon"].name, h5py.h5o.get_info(f["named_anon"].id).rc]
        r["exists"] = [h5py.h5o.exists_by_name(f.id, n) if hasattr(h5py.h5o, "exists_by_name") else n in f
                       for n in (b"typed", b"g/child")]
        info = h5py.h5o.get_info(f["g"].id)
        r["oinfo"] = [info.type, info.rc, info.num_attrs]
    return r


def describe_dir(directory):
    out = {}
    for root, _, names in sorted(os.walk(directory)):
        for n in sorted(names):
            if not n.endswith(".h5"):
                continue
            path = os.path.join(root, n)
            rel = os.path.relpath(path, directory)
            os.chdir(root)  # external raw data and virtual sources are named relative to it
            try:
                out[rel] = cs.describe_path(path)
            except Exception as e:
                out[rel] = {"error": type(e).__name__, "message": str(e).replace(directory, "<dir>")}
    return out


def main():
    cmd = sys.argv[1]
    if cmd == "run":
        name, work = sys.argv[2], sys.argv[3]
        os.makedirs(work, exist_ok=True)
        os.chdir(work)
        ctx = Ctx(work)
        refs_before = cs.vol_refcounts()
        result = SCENARIOS[name](ctx)
        gc.collect()
        report = {"result": result, "probes": ctx.probes,
                  "open_objects": cs.open_object_count(), "ids": cs.id_counts(),
                  "vol_refs_before": refs_before, "vol_refs_after": cs.vol_refcounts()}
        report["files"] = describe_dir(work)
        gc.collect()
        report["open_objects_final"] = cs.open_object_count()
        print(json.dumps(report))
    elif cmd == "corpus":
        work = os.path.abspath(sys.argv[2])
        written, probes = {}, set()
        for name, fn in SCENARIOS.items():
            sub = os.path.join(work, name)
            os.makedirs(sub, exist_ok=True)
            os.chdir(sub)
            ctx = Ctx(sub)
            fn(ctx)
            gc.collect()
            written[name] = sorted(os.listdir(sub))
            probes.update((p["object"], p["file"], p["version"]) for p in ctx.probes)
        print(json.dumps({"written": written, "probes": sorted(map(list, probes), key=str),
                          "open_objects": cs.open_object_count()}))
    elif cmd == "describe":
        d = os.path.abspath(sys.argv[2])
        os.chdir(d)
        print(json.dumps({"files": describe_dir(d), "open_objects": cs.open_object_count()}))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
