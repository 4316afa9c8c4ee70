"""Interop of our plugins with the peers, both directions, one side per process.

Writers (each in its own process, HDF5_PLUGIN_PATH naming one side only):
  peer      h5py + the Debian hdf5-blosc plugin (libH5Zblosc.so / libblosc_filter.so)
  ours      h5py + libh5sparse_blosc.so
  pytables  PyTables with its built-in Blosc (empty plugin path), several complibs
  lzf-h5py  h5py's built-in LZF (empty plugin path)
  lzf-ours  h5py with its LZF unregistered + libh5sparse_lzf.so
Readers: our plugins through h5dump, the C program read_dataset and h5py; the peer plugin
through h5py; PyTables' built-in Blosc and h5py's built-in LZF. Every reader reports which
plugin libraries it had mapped and the test asserts it was the intended side. Values are
compared decoded, never as compressed bytes.
"""
import json
import os
from types import SimpleNamespace

import numpy as np
import pytest

import h5interop as hi


def blosc(name, dtype, shape, chunks, compressor, clevel, shuffle, raw=False, **extra):
    return dict(name=name, dtype=dtype, shape=shape, chunks=chunks, filter="blosc",
                opts=hi.blosc_opts(compressor, clevel, shuffle), raw=raw, **extra)


def lzf(name, dtype, shape, chunks, raw=False, **extra):
    return dict(name=name, dtype=dtype, shape=shape, chunks=chunks, filter="lzf", raw=raw, **extra)


BLOSC_SPECS = [
    blosc("blosclz_f8", "f8", [10000], [3000], "blosclz", 5, "byte"),
    blosc("lz4_f4_2d", "f4", [100, 370], [32, 160], "lz4", 5, "byte"),
    blosc("lz4hc_i2_bit", "i2", [10000], [4096], "lz4hc", 9, "bit"),
    blosc("snappy_i2", "i2", [20000], [8192], "snappy", 5, "byte"),  # (snappy never pays on 1-byte types)
    blosc("zlib_compound", "compound", [3000], [1024], "zlib", 1, "none"),
    blosc("zstd_f8_3d", "f8", [3, 40, 50], [2, 16, 32], "zstd", 3, "bit"),
    blosc("blosclz_u1_clevel9_noshuffle", "u1", [10000], [4096], "blosclz", 9, "none"),
    blosc("array3_lz4", "array3", [2000], [512], "lz4", 5, "byte"),
    blosc("bigcompound_zstd", "bigcompound", [200], [64], "zstd", 5, "byte"),
    blosc("big_f4_lz4", "f4", [1_200_000], [1_100_000], "lz4", 5, "byte"),
    blosc("clevel0_i2", "i2", [3000], [1024], "blosclz", 0, "byte", raw=True),
    blosc("random_u1", "u1", [8192], [4096], "lz4", 5, "byte", raw=True, kind="random"),
]

LZF_SPECS = [
    lzf("lzf_f8", "f8", [10000], [4096]),
    lzf("lzf_i2_2d_shuffle", "i2", [300, 200], [64, 48], hdf5_shuffle=True),
    lzf("lzf_compound", "compound", [3000], [1024]),
    lzf("lzf_array3", "array3", [2000], [512]),
    lzf("lzf_big_f8", "f8", [700_000], [600_000]),
    lzf("lzf_random_u1", "u1", [8192], [4096], raw=True, kind="random"),
]


def pyt(name, complib, dtype="f8", shape=(20000,), chunks=(3000,), complevel=5, **extra):
    return dict(name=name, complib=complib, dtype=dtype, shape=list(shape), chunks=list(chunks),
                complevel=complevel, filter="blosc", raw=False, **extra)


PYTABLES_SPECS = [
    pyt("pt_blosclz", "blosc:blosclz", shuffle=True),
    pyt("pt_lz4", "blosc:lz4", shuffle=True),
    pyt("pt_lz4hc", "blosc:lz4hc", shuffle=True, complevel=9),
    pyt("pt_snappy", "blosc:snappy", shuffle=True),
    pyt("pt_zlib", "blosc:zlib", shuffle=False, complevel=1),
    pyt("pt_zstd", "blosc:zstd", shuffle=True),
    pyt("pt_lz4_bitshuffle_2d", "blosc:lz4", dtype="i2", shape=(200, 150), chunks=(64, 64), bitshuffle=True),
    pyt("pt_zstd_f4_noshuffle", "blosc:zstd", dtype="f4", complevel=3),
    pyt("pt_table_zstd", "blosc:zstd", dtype="compound", shape=(3000,), chunks=(500,), complevel=9,
        shuffle=True, node="table"),
    pyt("pt_earray_lz4", "blosc:lz4", dtype="i2", shape=(5000,), chunks=(1024,), shuffle=True, node="earray"),
]


def pytables_cd_values(spec):
    shuffle = 2 if spec.get("bitshuffle") else 1 if spec.get("shuffle") else 0
    compressor = hi.COMPRESSORS[spec["complib"].split(":")[1]]
    return (2, 2, hi.blosc_typesize(spec), hi.chunk_bytes(spec), spec["complevel"], shuffle, compressor)


def cd_values(spec):
    return pytables_cd_values(spec) if "complib" in spec else hi.expected_cd_values(spec)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("interop")
    empty = d / "no-plugins"
    empty.mkdir()
    for name, specs in (("blosc", BLOSC_SPECS), ("lzf", LZF_SPECS), ("pytables", PYTABLES_SPECS)):
        (d / f"{name}.json").write_text(json.dumps(specs))
    w = SimpleNamespace(dir=d, empty=empty)
    w.peer = (d / "peer.h5", hi.run_worker(hi.peer_dir(), "write", d / "blosc.json", d / "peer.h5"))
    w.ours = (d / "ours.h5", hi.run_worker(hi.plugin_dir(), "write", d / "blosc.json", d / "ours.h5"))
    w.pytables = (d / "pytables.h5", hi.run_worker(empty, "pytables-write", d / "pytables.json", d / "pytables.h5"))
    w.lzf_h5py = (d / "lzf_h5py.h5", hi.run_worker(empty, "write", d / "lzf.json", d / "lzf_h5py.h5"))
    w.lzf_ours = (d / "lzf_ours.h5", hi.run_worker(hi.plugin_dir(), "write", d / "lzf.json", d / "lzf_ours.h5",
                                                   "--unregister-lzf"))
    return w


SPECS = {"peer": BLOSC_SPECS, "ours": BLOSC_SPECS, "pytables": PYTABLES_SPECS,
         "lzf_h5py": LZF_SPECS, "lzf_ours": LZF_SPECS}


def read_with_h5py(files, writer, plugin_path, out, unregister_lzf=False):
    """Reads every dataset of a writer's file in a fresh h5py process (arrays via the .npz
    `out`); returns (report, arrays)."""
    path, _ = getattr(files, writer)
    names = [s["name"] for s in SPECS[writer]]
    args = ["read", path, out, *names] + (["--unregister-lzf"] if unregister_lzf else [])
    report = hi.run_worker(plugin_path, *args)
    with np.load(out) as z:
        arrays = {name: z[name] for name in names}
    return report, arrays


def assert_values(spec, got):
    expected = hi.make_array(spec)
    assert got.shape == expected.shape, spec["name"]
    if expected.dtype.names:  # PyTables/h5py may differ in dtype padding: compare by field
        assert got.dtype.names == expected.dtype.names
        for field in expected.dtype.names:
            assert np.array_equal(got[field], expected[field]), f"{spec['name']}.{field}"
    else:
        assert got.dtype == expected.dtype, spec["name"]
        assert got.tobytes() == expected.tobytes(), f"{spec['name']}: values differ"


# --- the writers used the intended side, and wrote what the specs say --------------------------


@pytest.mark.parametrize("writer", ["peer", "ours", "lzf_h5py", "lzf_ours"])
def test_h5py_writers(files, writer):
    path, report = getattr(files, writer)
    plugins = report["plugins"]
    if writer == "peer":
        assert hi.classify(plugins) == "peer", plugins
    elif writer == "ours":
        assert hi.classify(plugins) == "ours" and any(p.endswith("libh5sparse_blosc.so") for p in plugins)
        assert report["search_path"] == [hi.plugin_dir()]
    elif writer == "lzf_h5py":
        assert plugins == []  # h5py's built-in LZF, no plugin at all
    else:
        assert report["plugins_before"] == []
        assert [os.path.basename(p) for p in plugins] == ["libh5sparse_lzf.so"]
    for spec in SPECS[writer]:
        meta = report["datasets"][spec["name"]]
        fid = hi.FILTER_BLOSC if spec["filter"] == "blosc" else hi.FILTER_LZF
        [flt] = [f for f in meta["filters"] if f["id"] == fid]
        assert tuple(flt["cd_values"]) == cd_values(spec), spec["name"]
        assert flt["name"] == spec["filter"]
        bit = 1 << meta["filters"].index(flt)
        masks = {c["mask"] & bit for c in meta["chunks"]}
        assert masks == ({bit} if spec["raw"] else {0}), (spec["name"], meta["chunks"])


def test_peer_and_ours_store_the_same_pipeline(files):
    peer, ours = files.peer[1]["datasets"], files.ours[1]["datasets"]
    for spec in BLOSC_SPECS:
        assert peer[spec["name"]]["filters"] == ours[spec["name"]]["filters"], spec["name"]
        assert [c["mask"] for c in peer[spec["name"]]["chunks"]] == [c["mask"] for c in ours[spec["name"]]["chunks"]]


def test_pytables_writer(files):
    import h5py  # metadata only: nothing is decoded in this process

    path, report = files.pytables
    assert report["plugins"] == []  # PyTables' own Blosc
    with h5py.File(path, "r") as f:
        for spec in PYTABLES_SPECS:
            meta = hi.h5py_metadata(f[spec["name"]])
            [flt] = [x for x in meta["filters"] if x["id"] == hi.FILTER_BLOSC]
            assert tuple(flt["cd_values"]) == cd_values(spec), spec["name"]
            assert {c["mask"] for c in meta["chunks"]} == {0}, spec["name"]


# --- h5py reads the peers' files with OUR plugins, and our files with theirs -------------------


@pytest.mark.parametrize("writer", ["peer", "pytables", "lzf_h5py"])
def test_h5py_reads_their_files_with_our_plugins(files, tmp_path, writer):
    report, arrays = read_with_h5py(files, writer, hi.plugin_dir(), tmp_path / "r.npz",
                                    unregister_lzf=writer.startswith("lzf"))
    assert hi.classify(report["plugins"]) == "ours", report["plugins"]
    wanted = "libh5sparse_lzf.so" if writer.startswith("lzf") else "libh5sparse_blosc.so"
    assert wanted not in map(os.path.basename, report["plugins_before"])
    assert wanted in map(os.path.basename, report["plugins"])
    for spec in SPECS[writer]:
        assert_values(spec, arrays[spec["name"]])


def test_peer_plugin_reads_our_files(files, tmp_path):
    report, arrays = read_with_h5py(files, "ours", hi.peer_dir(), tmp_path / "r.npz")
    assert hi.classify(report["plugins"]) == "peer", report["plugins"]
    for spec in BLOSC_SPECS:
        assert_values(spec, arrays[spec["name"]])


def test_pytables_reads_our_files(files):
    path, _ = files.ours
    names = [s["name"] for s in BLOSC_SPECS if s["dtype"] not in ("array3", "bigcompound")]
    out = files.dir / "ours-pytables.npz"
    report = hi.run_worker(files.empty, "pytables-read", path, out, *names)
    assert report["plugins"] == []  # PyTables' built-in Blosc
    with np.load(out) as z:
        for spec in BLOSC_SPECS:
            if spec["name"] in names:
                assert_values(spec, z[spec["name"]])


def test_h5py_builtin_lzf_reads_our_files(files, tmp_path):
    report, arrays = read_with_h5py(files, "lzf_ours", files.empty, tmp_path / "r.npz")
    assert report["plugins"] == [] and report["lzf_registered_after"]
    for spec in LZF_SPECS:
        assert_values(spec, arrays[spec["name"]])


def test_our_lzf_reads_our_files(files, tmp_path):
    report, arrays = read_with_h5py(files, "lzf_ours", hi.plugin_dir(), tmp_path / "r.npz", unregister_lzf=True)
    assert "libh5sparse_lzf.so" in map(os.path.basename, report["plugins"])
    for spec in LZF_SPECS:
        assert_values(spec, arrays[spec["name"]])


# --- h5dump and the C reader, with only our plugin directory ----------------------------------

THEIR_DATASETS = [(w, s) for w in ("peer", "pytables", "lzf_h5py") for s in SPECS[w]]


@pytest.mark.parametrize("writer,spec", THEIR_DATASETS, ids=[f"{w}-{s['name']}" for w, s in THEIR_DATASETS])
def test_h5dump_reads_their_files_with_our_plugins(files, tmp_path, writer, spec):
    path, _ = getattr(files, writer)
    proc, data = hi.h5dump_binary(hi.plugin_dir(), path, spec["name"], tmp_path / "out.bin")
    assert data is not None, proc.stderr.decode(errors="replace")
    assert data == hi.packed_bytes(hi.make_array(spec))
    if not spec["raw"]:
        # Control: without any plugin h5dump cannot decode these chunks, so the read above
        # really went through our filter.
        proc, data = hi.h5dump_binary(files.empty, path, spec["name"], tmp_path / "none.bin")
        assert proc.returncode != 0 and data is None


@pytest.mark.parametrize("writer,spec", THEIR_DATASETS, ids=[f"{w}-{s['name']}" for w, s in THEIR_DATASETS])
def test_c_reader_reads_their_files_with_our_plugins(files, writer, spec):
    path, _ = getattr(files, writer)
    data, report = hi.c_read(hi.plugin_dir(), path, spec["name"])
    expected = hi.make_array(spec)
    assert report["elements"] * report["element_size"] == expected.nbytes
    assert data == hi.packed_bytes(expected)
    fid = hi.FILTER_BLOSC if spec["filter"] == "blosc" else hi.FILTER_LZF
    assert [(f[0], f[2]) for f in report["filters"] if f[0] == fid] == [(fid, cd_values(spec))]
    assert hi.classify(report["plugins"]) in ("ours", "none"), report["plugins"]
    if not spec["raw"]:
        lib = "libh5sparse_blosc.so" if fid == hi.FILTER_BLOSC else "libh5sparse_lzf.so"
        assert lib in map(os.path.basename, report["plugins"]), report["plugins"]
        _, control = hi.c_read(files.empty, path, spec["name"], check=False)
        assert control["returncode"] != 0 and "filter" in control["stderr"]


@pytest.mark.parametrize("spec", BLOSC_SPECS + LZF_SPECS, ids=lambda s: s["name"])
def test_c_reader_reads_our_files_with_our_plugins(files, spec):
    path, _ = files.ours if spec["filter"] == "blosc" else files.lzf_ours
    data, report = hi.c_read(hi.plugin_dir(), path, spec["name"])
    assert data == hi.packed_bytes(hi.make_array(spec))
    assert hi.classify(report["plugins"]) in ("ours", "none"), report["plugins"]
