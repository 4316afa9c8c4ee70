"""Our LZF (32000) and Blosc (32001) as mandatory filters on chunks they cannot shrink:
`h5repack -f UD=...` with flags 0 on incompressible float32 data succeeds (HDF5 fails the write
of a mandatory filter that returns 0), every chunk is stored filtered in the codec's stored form
(LZF literal runs: the chunk plus a byte per 32; Blosc's copied frame: the chunk plus its 16-byte
header), and the peers read the values back: h5py's built-in LZF (no plugin path) and the
hdf5-blosc plugin (the Debian peer directory only). As optional filters (flags 1) the same
chunks stay raw with their mask bit set, as before."""
import os
import subprocess
import sys

import numpy as np
import pytest

import h5interop as hi

SHAPE, CHUNKS = (64, 1000), (16, 250)
CHUNK_BYTES = 16 * 250 * 4
STORED_SIZE = {32000: CHUNK_BYTES + CHUNK_BYTES // 32, 32001: CHUNK_BYTES + 16}
FILTERS = {32000: "UD=32000,{flags},0", 32001: "UD=32001,{flags},7,0,0,0,0,5,1,1"}  # blosc: lz4, clevel 5, byte shuffle

# Run in a child whose HDF5_PLUGIN_PATH names one side: prints the values' bits, every chunk's
# (filter mask, stored size), the dataset's filters and the plugin libraries it had mapped.
READER = """
import json, sys, h5py, numpy as np
sys.path.insert(0, sys.argv[2])
import h5interop as hi
with h5py.File(sys.argv[1], "r") as f:
    d = f["x"]
    values = d[...].view("u4")
    chunks = [(c.filter_mask, c.size) for c in (d.id.get_chunk_info(i) for i in range(d.id.get_num_chunks()))]
    filters = [d.id.get_create_plist().get_filter(i)[:2] for i in range(d.id.get_create_plist().get_nfilters())]
print(json.dumps({"sum": int(values.astype(np.uint64).sum()), "first": values.ravel()[:4].tolist(),
                  "chunks": chunks, "filters": filters, "plugins": hi.mapped_plugins()}))
"""


@pytest.fixture(scope="module")
def dense(tmp_path_factory):
    """float32 values from random bits: no byte plane repeats, so neither codec shrinks a chunk."""
    path = tmp_path_factory.mktemp("mandatory") / "dense.h5"
    import h5py
    bits = np.random.default_rng(7).integers(0, 2**32, size=SHAPE, dtype=np.uint64).astype(np.uint32)
    with h5py.File(path, "w") as f:
        f.create_dataset("x", data=bits.view("f4"), chunks=CHUNKS)
    return path, bits


def repack(src, dst, filter_id, flags):
    spec = FILTERS[filter_id].format(flags=flags)
    proc = hi.run_tool(hi.plugin_dir(), ["h5repack", "-f", spec, src, dst], check=False)
    assert proc.returncode == 0, f"h5repack -f {spec} failed:\n{proc.stderr.decode(errors='replace')}"
    return dst


def read(path, plugin_path):
    proc = subprocess.run([sys.executable, "-c", READER, str(path), os.path.dirname(hi.__file__)],
                          env=hi.clean_env(plugin_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    import json
    return json.loads(proc.stdout.strip().splitlines()[-1])


def expect_values(report, bits):
    assert report["first"] == bits.ravel()[:4].tolist()
    assert report["sum"] == int(bits.astype(np.uint64).sum())


def test_mandatory_lzf_stores_literal_streams_that_h5py_reads(dense, tmp_path):
    src, bits = dense
    out = repack(src, tmp_path / "lzf.h5", 32000, 0)
    empty = tmp_path / "no-plugins"
    empty.mkdir()
    report = read(out, empty)  # h5py's built-in LZF, nothing from a plugin directory
    assert report["plugins"] == []
    assert report["filters"] == [[32000, 0]]
    assert report["chunks"] == [[0, STORED_SIZE[32000]]] * 16
    expect_values(report, bits)


def test_mandatory_blosc_stores_copied_frames_that_the_peer_reads(dense, tmp_path):
    src, bits = dense
    out = repack(src, tmp_path / "blosc.h5", 32001, 0)
    report = read(out, hi.peer_dir())
    assert hi.classify(report["plugins"]) == "peer"
    assert report["filters"] == [[32001, 0]]
    assert report["chunks"] == [[0, STORED_SIZE[32001]]] * 16
    expect_values(report, bits)


@pytest.mark.parametrize("filter_id", [32000, 32001])
def test_optional_filters_leave_such_chunks_raw(dense, tmp_path, filter_id):
    src, bits = dense
    out = repack(src, tmp_path / f"optional-{filter_id}.h5", filter_id, 1)
    report = read(out, hi.plugin_dir())
    assert report["filters"] == [[filter_id, 1]]
    assert report["chunks"] == [[1, CHUNK_BYTES]] * 16  # mask bit 0: the filter was skipped
    expect_values(report, bits)
