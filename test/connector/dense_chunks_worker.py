"""Child process of test_dense_chunks.py: writes and reads dense Blosc datasets through h5py
with whatever HDF5_VOL_CONNECTOR, HDF5_PLUGIN_PATH and H5SPARSE_NTHREADS the parent chose, and
prints one JSON object (digests of what it read, or what it was asked to report).

  make FILE            datasets of every kind the fast path must reproduce (natively written)
  read FILE            every selection of every dataset: {"name/selection": digest}
  create FILE          empty datasets for `write` (needs the Blosc plugin: set_local)
  write FILE           writes them (whole chunks, partial chunks, other memory shapes)
  roundtrip FILE       writes then reads in one open file (H5Dread_chunk coherence)
"""
import hashlib
import json
import sys

import h5py
import numpy as np

COMPLIBS = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
SHUFFLES = {"noshuf": 0, "byte": 1, "bit": 2}
SHAPE, CHUNKS = (300, 260), (64, 50)  # 5 x 6 chunks, edge chunks in both dimensions
COMPOUND = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "u1")])


def blosc(complib="lz4", shuffle="byte", clevel=5):
    return dict(compression=32001, compression_opts=(0, 0, 0, 0, clevel, SHUFFLES[shuffle], COMPLIBS[complib]))


def field(dtype, seed=0, shape=SHAPE):
    """Smooth, compressible values of `dtype` (a ramp plus noise)."""
    rng = np.random.default_rng(seed)
    base = np.cumsum(rng.normal(size=shape), axis=-1) + np.arange(shape[-1])
    if dtype == COMPOUND:
        out = np.zeros(shape, COMPOUND)
        out["a"], out["b"], out["c"] = base.astype("i4"), base, (base % 7).astype("u1")
        return out
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return (base % np.iinfo(dt).max).astype(dt)
    return base.astype(dt)


def dense_specs():
    """name -> (dtype, create kwargs, data or None, chunks written: "all" or a list of slices)."""
    specs = {}
    for lib in COMPLIBS:
        for shuf in SHUFFLES:
            specs[f"{lib}_{shuf}"] = ("f4", blosc(lib, shuf), field("f4", 1), "all")
    for dt in ("u1", "i2", "f8"):
        specs[f"type_{dt}"] = (dt, blosc("zstd", "bit"), field(dt, 2), "all")
    specs["type_compound"] = (COMPOUND, blosc("lz4", "byte"), field(COMPOUND, 3), "all")
    # Incompressible: every chunk stored raw with filter-mask bit 0 set.
    specs["raw"] = ("u1", blosc("blosclz", "noshuf"),
                    np.random.default_rng(4).integers(0, 256, SHAPE, dtype="u1"), "all")
    # Unallocated chunks (only some written) with the default and a user fill value.
    part = [np.s_[0:64, 0:50], np.s_[128:192, 100:150], np.s_[256:300, 250:260]]
    specs["unalloc_default"] = ("f4", blosc("lz4", "byte"), field("f4", 5), part)
    specs["unalloc_user"] = ("i2", dict(blosc("zlib", "byte"), fillvalue=-7), field("i2", 6), part)
    specs["mandatory"] = ("f4", {}, field("f4", 7), "all")  # filter set without the optional flag
    return specs


def create(f, name, dtype, kwargs):
    if name == "mandatory":
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk(CHUNKS)
        dcpl.set_filter(32001, 0, (0, 0, 0, 0, 5, 1, 1))
        space = h5py.h5s.create_simple(SHAPE)
        h5py.h5d.create(f.id, name.encode(), h5py.h5t.py_create(np.dtype(dtype)), space, dcpl=dcpl)
        return f[name]
    return f.create_dataset(name, shape=SHAPE, dtype=dtype, chunks=CHUNKS, **kwargs)


def fill_dataset(d, data, written):
    if isinstance(written, str):
        d[...] = data
    else:
        for s in written:
            d[s] = data[s]


def digest(a):
    a = np.ascontiguousarray(a)
    return hashlib.sha256(a.tobytes()).hexdigest()[:24] + f":{a.dtype.str}:{a.shape}"


def read_with(d, fspace_setup, mshape, msel=None, fill=0):
    fspace = d.id.get_space()
    fspace_setup(fspace)
    out = np.full(mshape, fill, d.dtype) if d.dtype != COMPOUND else np.zeros(mshape, COMPOUND)
    mspace = h5py.h5s.create_simple(out.shape)
    if msel:
        msel(mspace)
    d.id.read(mspace, fspace, out)
    return out


# Point selection in arbitrary order, repeating points.
_rng = np.random.default_rng(9)
POINTS = np.stack([_rng.integers(0, 300, 20000), _rng.integers(0, 260, 20000)], axis=1)
POINTS[100:200] = POINTS[0:100]


def selections(d):
    """name -> function reading an array: every kind of selection and memory space."""
    conv = {"f": "f8" if d.dtype == np.dtype("f4") else "f4", "i": "i8", "u": "i8"}.get(d.dtype.kind)
    return {
        "all": lambda: d[...],
        "hyperslab": lambda: d[5:290:3, 7:250],
        "block": lambda: d[64:256, 50:200],  # whole chunks only
        "rows": lambda: d[np.arange(0, 300, 7), :],
        "points": lambda: read_with(d, lambda s: s.select_elements(POINTS), (len(POINTS),)),
        # A memory space of another shape: a file hyperslab into a strided 1-D buffer.
        "memshape": lambda: read_with(d, lambda s: s.select_hyperslab((10, 20), (200, 200)), (3 * 200 * 200,),
                                      lambda m: m.select_hyperslab((1,), (200 * 200,), stride=(3,))),
        # No elements selected: the buffer stays as it was.
        "none": lambda: read_with(d, lambda s: s.select_none(), (4,), lambda m: m.select_none(), fill=1),
        # Type conversion (the native path).
        "convert": (lambda: d.astype(conv)[...]) if conv else None,
    }


def selection_bytes(d, name):
    """Bytes the selection reads (what the fast path's thresholds look at)."""
    n = {"all": 300 * 260, "hyperslab": 95 * 243, "block": 192 * 150, "rows": 43 * 260, "points": 20000,
         "memshape": 200 * 200, "none": 0, "convert": 300 * 260}[name]
    return n * d.dtype.itemsize


def cmd_make(path):
    with h5py.File(path, "w") as f:
        for name, (dtype, kwargs, data, written) in dense_specs().items():
            fill_dataset(create(f, name, dtype, kwargs), data, written)
    return {"made": len(dense_specs())}


def cmd_read(path):
    """Digests of every selection; with DENSE_REPORT_FAILURES=1, failed reads are reported
    (as "error") instead of stopping the run, with the bytes each selection reads."""
    import os
    report = os.environ.get("DENSE_REPORT_FAILURES") == "1"
    result = {}
    with h5py.File(path, "r") as f:
        for name in f:
            for sel, read in selections(f[name]).items():
                if read is None:
                    continue
                key = f"{name}/{sel}"
                if not report:
                    result[key] = digest(read())
                    continue
                try:
                    result[key] = [digest(read()), selection_bytes(f[name], sel)]
                except OSError:
                    result[key] = ["error", selection_bytes(f[name], sel)]
    return result


def write_specs():
    # A mandatory filter is not loaded for writes to a reopened file (HDF5 1.14 itself fails
    # those): roundtrip covers the mandatory dataset, created and written in one process.
    specs = {k: v for k, v in dense_specs().items() if not k.startswith("unalloc") and k != "mandatory"}
    specs["partial"] = ("f4", blosc("lz4", "byte"), field("f4", 8), [np.s_[3:290, 1:259]])
    specs["wholechunks"] = ("i2", dict(blosc("zstd", "byte"), fillvalue=11), field("i2", 9),
                            [np.s_[64:300, 50:260]])  # whole chunks, edge chunks included
    return specs


def cmd_create(path):
    with h5py.File(path, "w") as f:
        for name, (dtype, kwargs, _, _) in write_specs().items():
            create(f, name, dtype, kwargs)
        # An edge chunk already stored before the whole-chunk write (its padding is kept).
        f["wholechunks"][290:300, 250:260] = 5
    return {"created": len(write_specs())}


def cmd_write(path):
    """Writes every dataset of write_specs, or those $DENSE_ONLY names (comma-separated)."""
    import os
    only = os.environ.get("DENSE_ONLY")
    with h5py.File(path, "r+") as f:
        for name, (_, _, data, written) in write_specs().items():
            if only and name not in only.split(","):
                continue
            if name == "type_f8":  # from a memory space of another shape (gathered)
                d = f[name]
                big = np.zeros((2,) + SHAPE, data.dtype)
                big[1] = data
                mspace = h5py.h5s.create_simple(big.shape)
                mspace.select_hyperslab((1, 0, 0), (1,) + SHAPE)
                d.id.write(mspace, d.id.get_space(), big)
            else:
                fill_dataset(f[name], data, written)
    return cmd_expected(path)


def cmd_createwrite(path):
    """create and write in one process: HDF5 1.14 loads a filter plugin when a dataset is
    created or read, never for a write, so writes to a reopened file skip an optional plugin
    filter that nothing loaded yet (chunks stored raw); creating first loads it."""
    cmd_create(path)
    return cmd_write(path)


def cmd_expected(path):
    """What `write` must have stored, checked by whoever reads the file."""
    out = {}
    for name, (dtype, kwargs, data, written) in write_specs().items():
        fill = kwargs.get("fillvalue", 0)
        if isinstance(written, str):
            exp = data
        else:
            exp = np.full(SHAPE, fill, np.dtype(dtype))
            for s in written:
                exp[s] = data[s]
        out[name] = digest(exp)
    return out


def cmd_check(path):
    """Digests of every dataset's values (whoever reads: native, peer plugin, connector)."""
    with h5py.File(path, "r") as f:
        return {name: digest(f[name][...]) for name in f}


def cmd_masks(path):
    """Each dataset's filter masks, chunk by chunk in index order (bit 0: stored raw)."""
    out = {}
    with h5py.File(path, "r") as f:
        for name in f:
            d = f[name]
            infos = [d.id.get_chunk_info(i) for i in range(d.id.get_num_chunks())]
            out[name] = [[list(c.chunk_offset), c.filter_mask] for c in infos]
    return out


def cmd_roundtrip(path):
    """Writes natively through the chunk cache and reads all in one open file, then writes
    whole chunks and reads them, with the file open throughout."""
    out = {}
    with h5py.File(path, "w") as f:
        d = f.create_dataset("r", data=field("f4", 10), chunks=CHUNKS, **blosc("lz4", "byte"))
        d[70:80, 60:70] = -1  # a small native write: a dirty chunk in HDF5's cache
        out["after_partial"] = digest(d[...])
        d[...] = field("f4", 11)
        out["after_whole"] = digest(d[...])
        d[0:5, 0:5] = 42
        out["after_small"] = digest(d[...])
        m = create(f, "mandatory", "f4", {})  # the native path (a chunk that does not pay fails it)
        m[...] = field("f4", 14)
        out["mandatory"] = digest(m[...])
    out["expected_mandatory"] = digest(field("f4", 14))
    exp = field("f4", 10)
    exp[70:80, 60:70] = -1
    out["expected_partial"] = digest(exp)
    exp = field("f4", 11)
    out["expected_whole"] = digest(exp)
    exp[0:5, 0:5] = 42
    out["expected_small"] = digest(exp)
    return out


def cmd_extend(path):
    """Whole-chunk writes, then the extent grows over the edge chunks' padding."""
    with h5py.File(path, "w") as f:
        d = f.create_dataset("e", shape=SHAPE, maxshape=(None, None), dtype="i2", chunks=CHUNKS,
                             fillvalue=3, **blosc("zstd", "bit"))
        d[...] = field("i2", 12)
        d.resize((320, 300))
        return {"e": digest(d[...])}


def cmd_corrupt(path):
    """A chunk whose Blosc frame is damaged (written natively, read by whoever runs `read1`)."""
    with h5py.File(path, "w") as f:
        d = f.create_dataset("c", data=field("f4", 13), chunks=CHUNKS, **blosc("lz4", "byte"))
        mask, raw = d.id.read_direct_chunk((128, 100))
        bad = bytearray(raw)
        bad[12:16] = (len(raw) * 5).to_bytes(4, "little")  # compressed size beyond the frame
        d.id.write_direct_chunk((128, 100), bytes(bad), mask)
    return {}


def cmd_makesizes(path):
    """One dataset of 12.5 KiB chunks and one of 128 KiB chunks, 8 chunks or more each."""
    with h5py.File(path, "w") as f:
        f.create_dataset("small", data=field("f4", 15), chunks=CHUNKS, **blosc("lz4", "byte"))
        f.create_dataset("large", data=field("f4", 16, (256, 1024)), chunks=(64, 512), **blosc("lz4", "byte"))
    return {}


def cmd_readsizes(path):
    """Whole reads of both: a digest, or "error" when the read failed."""
    out = {}
    with h5py.File(path, "r") as f:
        for name in ("small", "large"):
            try:
                out[name] = digest(f[name][...])
            except OSError:
                out[name] = "error"
    return out


def cmd_rowrite(path):
    """A whole-dataset write to a file opened read-only."""
    with h5py.File(path, "r") as f:
        try:
            f["zstd_bit"][...] = np.zeros(SHAPE, "f4")
        except OSError as e:
            return {"error": str(e)}
    return {"error": None}


def cmd_read1(path):
    with h5py.File(path, "r") as f:
        try:
            f["c"][...]
        except OSError as e:
            return {"error": str(e)}
    return {"error": None}


if __name__ == "__main__":
    cmd, path = sys.argv[1], sys.argv[2]
    print(json.dumps(globals()["cmd_" + cmd](path)))
