"""The connector's chunk-parallel path for dense Blosc datasets (dense_blosc_dataset.hpp) gives
exactly what HDF5's own path gives: every read and write below runs in child processes with
H5SPARSE_NTHREADS 1 (HDF5's path through the connector), 2 and 3, and its results are compared
with h5py without the connector (our Blosc plugin) and with the peer hdf5-blosc plugin.

That the fast path really served a call is shown by running it with a plugin directory that
holds the connector but no Blosc filter: HDF5's own path then cannot decode or encode a chunk,
the connector's can.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

import connector_support as cs

WORKER = os.path.join(cs.HERE, "dense_chunks_worker.py")
THREADS = (1, 2, 3)


def run(cmd, path, connector, threads=None, plugins=None, **extra):
    env = cs.env(connector, plugins)
    env.pop("H5SPARSE_NTHREADS", None)
    if threads is not None:
        env["H5SPARSE_NTHREADS"] = str(threads)
    env.update(extra)
    proc = subprocess.run([sys.executable, WORKER, cmd, str(path)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"{cmd} {connector} {threads}: {proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def connector_only(tmp_path_factory):
    """A plugin directory with the connector and no filter plugin."""
    d = tmp_path_factory.mktemp("connector-only")
    os.symlink(os.path.join(cs.plugin_dir(), "libh5sparse_vol.so"), d / "libh5sparse_vol.so")
    return str(d)


def peer_dir():
    d = os.environ["H5SPARSE_PEER_PLUGIN_DIR"]
    assert any("blosc" in n.lower() for n in os.listdir(d)), f"no hdf5-blosc peer plugin in {d}"
    return d


@pytest.fixture(scope="module")
def dense_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("dense") / "dense.h5"
    run("make", path, False)  # written by HDF5's own path with our plugin
    return path


@pytest.fixture(scope="module")
def native_reads(dense_file):
    return run("read", dense_file, False)


@pytest.mark.parametrize("threads", THREADS)
def test_reads_equal_native(dense_file, native_reads, threads):
    got = run("read", dense_file, True, threads)
    assert got.keys() == native_reads.keys()
    assert {k for k in got if got[k] != native_reads[k]} == set()


def test_reads_equal_peer(dense_file, native_reads):
    assert run("read", dense_file, False, plugins=peer_dir()) == native_reads


def test_fast_path_serves_large_reads(dense_file, native_reads, connector_only):
    got = run("read", dense_file, True, 2, plugins=connector_only, DENSE_REPORT_FAILURES="1")
    served = [k for k, (_, nbytes) in got.items() if nbytes >= 65536 and not k.endswith("/convert")]
    assert len(served) > 100
    assert {k: got[k][0] for k in served} == {k: native_reads[k] for k in served}
    # Type conversion takes HDF5's path, which needs the filter: proof that it fell back.
    assert got["zstd_bit/convert"][0] == "error"
    assert got["lz4_byte/convert"][0] == "error"
    # With one thread every read is HDF5's own.
    single = run("read", dense_file, True, 1, plugins=connector_only, DENSE_REPORT_FAILURES="1")
    assert single["zstd_bit/all"][0] == "error"


def test_default_threads_leave_small_chunks_to_hdf5(tmp_path, connector_only):
    """H5SPARSE_NTHREADS unset: chunks under 128 KiB stay on HDF5's path (cheaper there), larger
    ones take the fast path when the process may use more than one CPU."""
    path = tmp_path / "s.h5"
    run("makesizes", path, False)
    native = run("readsizes", path, False)
    got = run("readsizes", path, True, None, plugins=connector_only)
    assert got["small"] == "error"  # HDF5's path, without the filter plugin
    if len(os.sched_getaffinity(0)) > 1:
        assert got["large"] == native["large"]
    else:
        assert got["large"] == "error"
    # H5SPARSE_NTHREADS set: small chunks too.
    assert run("readsizes", path, True, 2, plugins=connector_only) == native


@pytest.mark.parametrize("threads", THREADS)
def test_writes_read_back_everywhere(tmp_path, threads):
    path = tmp_path / "w.h5"
    run("create", path, False)
    expected = run("write", path, True, threads)
    assert run("check", path, False) == expected  # our plugin, no connector
    assert run("check", path, False, plugins=peer_dir()) == expected  # the peer plugin
    assert run("check", path, True, 2) == expected  # our fast path


def test_writes_dumped_by_h5dump_with_the_peer(tmp_path):
    """h5dump with only the peer plugin on its path prints the same values from a file the fast
    path wrote as from one HDF5's path wrote."""
    fast, native = tmp_path / "f.h5", tmp_path / "n.h5"
    run("createwrite", fast, True, 2)
    run("createwrite", native, False)
    env = cs.env(False, peer_dir())
    dumps = []
    for path in (fast, native):
        proc = subprocess.run(["h5dump", "-d", "/zstd_bit", "-d", "/lz4hc_noshuf", "-d", "/type_compound",
                               "-d", "/wholechunks", str(path)], env=env, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        dumps.append(proc.stdout.replace(str(path), "FILE"))
    assert "DATA {" in dumps[0] and dumps[0] == dumps[1]


def test_fast_path_serves_whole_chunk_writes(tmp_path, connector_only):
    """Without the filter plugin HDF5's path stores every chunk of an optional filter raw (the
    filter skipped); the fast path encodes them itself."""
    path = tmp_path / "w.h5"
    run("create", path, False)
    fast = "blosclz_bit,zstd_noshuf,type_u1,type_f8,type_compound,wholechunks,partial"
    expected = run("write", path, True, 2, plugins=connector_only, DENSE_ONLY=fast)
    got = run("check", path, False, plugins=peer_dir())
    assert {k: got[k] for k in fast.split(",")} == {k: expected[k] for k in fast.split(",")}
    masks = run("masks", path, False)
    for name in fast.split(",")[:-1]:
        assert {m for _, m in masks[name]} == {0}, name
    assert {m for _, m in masks["partial"]} == {1}  # partial chunks: HDF5's path, filter missing


def test_raw_chunks_stored_like_the_filter(tmp_path):
    """Chunks that do not compress are stored raw with filter-mask bit 0 set, chunk for chunk
    as HDF5's path stores them (random bytes; edge chunks, padded with zeros, do compress)."""
    native, fast = tmp_path / "n.h5", tmp_path / "f.h5"
    run("createwrite", native, False, DENSE_ONLY="raw")
    run("createwrite", fast, True, 2, DENSE_ONLY="raw")
    want = run("masks", native, False)["raw"]
    assert {m for _, m in want} == {0, 1}
    assert run("masks", fast, False)["raw"] == want


@pytest.mark.parametrize("threads", (2, 3))
def test_write_then_read_in_one_open_file(tmp_path, threads):
    got = run("roundtrip", tmp_path / "r.h5", True, threads)
    for what in ("partial", "whole", "small", "mandatory"):
        assert got[what if what == "mandatory" else "after_" + what] == got["expected_" + what], what


def test_edge_padding_after_extent_grows(tmp_path):
    native = run("extend", tmp_path / "n.h5", False)
    assert run("extend", tmp_path / "f.h5", True, 2) == native


def test_corrupt_chunk_names_dataset_and_chunk(tmp_path):
    path = tmp_path / "c.h5"
    run("corrupt", path, False)
    assert run("read1", path, False)["error"]  # HDF5's path fails on it too
    error = run("read1", path, True, 2)["error"]
    assert error and "dataset '/c', chunk at (128, 100)" in error and "blosc" in error


def test_write_to_read_only_file_fails_as_hdf5_does(dense_file, native_reads):
    assert "no write intent" in run("rowrite", dense_file, True, 2)["error"]
    assert run("read", dense_file, False) == native_reads  # nothing changed
