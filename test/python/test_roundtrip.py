"""Round trips through h5py with OUR plugins: every Blosc compressor x clevel x shuffle, LZF
with and without HDF5's shuffle, five dtypes, chunks from one element to over 4 MiB, shapes
with partial edge chunks, and chunks that do not compress (stored raw, filter-mask bit set).

This process sees only our plugin directory (HDF5_PLUGIN_PATH is set before h5py loads HDF5)
and h5py's built-in LZF is unregistered, so every Blosc or LZF chunk here is encoded and
decoded by libh5sparse_blosc.so / libh5sparse_lzf.so; the `only_our_plugins` fixture checks
that after every test. Files are closed and reopened without a chunk cache before reading,
so reads decode what is stored.
"""
import itertools
import os

import numpy as np
import pytest

import h5interop as hi

os.environ["HDF5_PLUGIN_PATH"] = hi.plugin_dir()
for _name in [k for k in os.environ if k.startswith("HDF5_") and k != "HDF5_PLUGIN_PATH"]:
    del os.environ[_name]  # no VOL connector or second plugin path in this process
import h5py  # noqa: E402  (after the environment is settled)

assert h5py.h5z.unregister_filter(hi.FILTER_LZF), "h5py's built-in LZF could not be unregistered"

DTYPES = ["u1", "i2", "f4", "f8", "compound"]
BLOSC_COMPRESSORS = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]
CLEVELS = [0, 1, 5, 9]
SHUFFLES = ["none", "byte", "bit"]


@pytest.fixture(autouse=True)
def only_our_plugins():
    yield
    mapped = hi.mapped_plugins()
    assert hi.classify(mapped) in ("ours", "none"), mapped


def test_search_path_is_ours_only_and_plugins_load():
    assert [os.fsdecode(h5py.h5pl.get(i)) for i in range(h5py.h5pl.size())] == [hi.plugin_dir()]
    # H5Zfilter_avail loads a plugin for a filter not registered: h5py's own LZF is gone,
    # so 32000 is available only through our library.
    assert h5py.h5z.filter_avail(hi.FILTER_BLOSC) and h5py.h5z.filter_avail(hi.FILTER_LZF)
    names = {os.path.basename(p) for p in hi.mapped_plugins()}
    assert names == set(hi.OUR_LIBS)
    for fid, name in ((hi.FILTER_BLOSC, "blosc"), (hi.FILTER_LZF, "lzf")):
        flags = h5py.h5z.get_filter_info(fid)
        assert flags & h5py.h5z.FILTER_CONFIG_ENCODE_ENABLED and flags & h5py.h5z.FILTER_CONFIG_DECODE_ENABLED


def write_read(path, specs):
    """Writes `specs` with h5py, reopens without a chunk cache and returns, per dataset,
    (expected values, read values, metadata, raw chunks as stored)."""
    with h5py.File(path, "w") as f:
        for spec in specs:
            hi.h5py_write(f, spec)
    out = {}
    with h5py.File(path, "r", rdcc_nbytes=0) as f:
        for spec in specs:
            dset = f[spec["name"]]
            meta = hi.h5py_metadata(dset)
            raw = [dset.id.read_direct_chunk(tuple(c["offset"])) for c in meta["chunks"]]
            out[spec["name"]] = (hi.make_array(spec), dset[()], meta, raw)
    return out


def chunk_of(values, offset, chunks):
    """The full chunk at `offset` as HDF5 stores it unfiltered (edge chunks padded with 0)."""
    full = np.zeros(tuple(chunks) + values.shape[len(chunks):], values.dtype)
    region = tuple(slice(o, min(o + c, n)) for o, c, n in zip(offset, chunks, values.shape))
    full[tuple(slice(0, r.stop - r.start) for r in region)] = values[region]
    return full.tobytes()


def assert_dataset(spec, result, *, compressed):
    """Values read back exactly; the pipeline is the expected one; every chunk is stored
    compressed (mask 0, smaller) or, if not `compressed`, raw with the filter-mask bit set and
    the raw chunk equal to the data."""
    expected, got, meta, raw = result
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes(), f"{spec['name']}: values differ"
    fid = hi.FILTER_BLOSC if spec["filter"] == "blosc" else hi.FILTER_LZF
    ours = [f for f in meta["filters"] if f["id"] == fid]
    assert len(ours) == 1
    assert tuple(ours[0]["cd_values"]) == hi.expected_cd_values(spec)
    assert ours[0]["name"] == spec["filter"]
    bit = 1 << meta["filters"].index(ours[0])
    nchunks = int(np.prod([-(-n // c) for n, c in zip(spec["shape"], spec["chunks"])]))
    assert len(meta["chunks"]) == nchunks
    size = hi.chunk_bytes(spec)
    for chunk, (mask, data) in zip(meta["chunks"], raw):
        assert mask == chunk["mask"]
        if compressed:
            assert mask & bit == 0, f"{spec['name']} chunk {chunk['offset']} stored raw"
            assert chunk["size"] < size
        else:
            assert mask & bit, f"{spec['name']} chunk {chunk['offset']}: filter-mask bit not set"
            if len(meta["filters"]) == 1:  # the stored chunk is the plain data
                assert chunk["size"] == size
                assert bytes(data) == chunk_of(expected, chunk["offset"], spec["chunks"])


@pytest.mark.parametrize("compressor,clevel,shuffle",
                         list(itertools.product(BLOSC_COMPRESSORS, CLEVELS, SHUFFLES)))
def test_blosc_matrix(tmp_path, compressor, clevel, shuffle):
    # 10000 elements in chunks of 4096: two full chunks and a partial edge chunk.
    specs = [dict(name=dt, dtype=dt, shape=[10000], chunks=[4096], filter="blosc",
                  opts=hi.blosc_opts(compressor, clevel, shuffle)) for dt in DTYPES]
    results = write_read(tmp_path / "m.h5", specs)
    for spec in specs:
        # clevel 0 makes blosc copy the data behind a header: bigger than the input, so the
        # optional filter leaves every chunk raw.
        assert_dataset(spec, results[spec["name"]], compressed=clevel > 0)


@pytest.mark.parametrize("hdf5_shuffle", [False, True])
def test_lzf_matrix(tmp_path, hdf5_shuffle):
    specs = [dict(name=dt, dtype=dt, shape=[10000], chunks=[4096], filter="lzf", hdf5_shuffle=hdf5_shuffle)
             for dt in DTYPES]
    results = write_read(tmp_path / "l.h5", specs)
    for spec in specs:
        assert_dataset(spec, results[spec["name"]], compressed=True)
    # h5py's own LZF is unregistered, so these chunks went through a plugin: ours.
    assert "libh5sparse_lzf.so" in map(os.path.basename, hi.mapped_plugins())


CODECS = {
    "blosc-lz4-byte": dict(filter="blosc", opts=hi.blosc_opts("lz4", 5, "byte")),
    "blosc-zstd-bit": dict(filter="blosc", opts=hi.blosc_opts("zstd", 3, "bit")),
    "blosc-blosclz-none-9": dict(filter="blosc", opts=hi.blosc_opts("blosclz", 9, "none")),
    "blosc-zlib-byte-1": dict(filter="blosc", opts=hi.blosc_opts("zlib", 1, "byte")),
    "blosc-lz4hc-bit-9": dict(filter="blosc", opts=hi.blosc_opts("lz4hc", 9, "bit")),
    "lzf": dict(filter="lzf"),
}

# (dtype, shape, chunks, compressible): one element; one-element chunks; odd chunks; 2-D and
# 3-D with partial edges on every axis; chunks over 4 MiB (with a partial second chunk).
SHAPES = {
    "single-element": ("f8", [1], [1], False),
    "one-element-chunks": ("i2", [37], [1], False),
    "odd-chunks-u1": ("u1", [1000], [7], False),
    "2d-partial": ("f4", [103, 57], [40, 16], True),
    "3d-partial": ("i2", [9, 33, 17], [4, 16, 8], True),
    "compound-2d": ("compound", [50, 41], [16, 16], True),
    "big-f8": ("f8", [700_000], [600_000], True),         # 4.8 MB chunks
    "big-2d-f4": ("f4", [1200, 1000], [1100, 1000], True),  # 4.4 MB chunks
    "big-compound": ("compound", [400_000], [350_000], True),  # 4.55 MB chunks
}
BIG_CODECS = ["blosc-lz4-byte", "blosc-zstd-bit", "blosc-blosclz-none-9", "lzf"]


@pytest.mark.parametrize("codec,shape", [(c, s) for s in SHAPES for c in CODECS
                                         if not s.startswith("big") or c in BIG_CODECS])
def test_chunk_shapes(tmp_path, codec, shape):
    dtype, dims, chunks, compressible = SHAPES[shape]
    spec = dict(name="d", dtype=dtype, shape=dims, chunks=chunks, **CODECS[codec])
    if shape.startswith("big"):
        assert hi.chunk_bytes(spec) > 4 << 20
    result = write_read(tmp_path / "s.h5", [spec])["d"]
    assert_dataset(spec, result, compressed=compressible)


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("dtype", ["u1", "f8", "compound"])
def test_random_data_is_stored_raw(tmp_path, codec, dtype):
    """Random bytes do not compress: every chunk raw, filter-mask bit set, read back exact.
    (Whole chunks only: the zero padding of a partial edge chunk would compress.)"""
    spec = dict(name="r", dtype=dtype, shape=[3, 2048], chunks=[1, 2048], kind="random", seed=7, **CODECS[codec])
    result = write_read(tmp_path / "r.h5", [spec])["r"]
    assert_dataset(spec, result, compressed=False)


@pytest.mark.parametrize("codec", list(CODECS))
def test_mixed_chunks(tmp_path, codec):
    """One dataset, chunk by chunk: compressible chunks are filtered, random ones raw."""
    spec = dict(name="m", dtype="f8", shape=[4096 * 4], chunks=[4096], **CODECS[codec])
    values = hi.make_array(spec)
    noise = hi.make_array(dict(spec, kind="random", seed=3))
    values[4096:8192] = noise[4096:8192]
    values[12288:] = noise[12288:]
    path = tmp_path / "x.h5"
    with h5py.File(path, "w") as f:
        kwargs = ({"compression": hi.FILTER_BLOSC, "compression_opts": spec["opts"]}
                  if spec["filter"] == "blosc" else {"compression": "lzf"})
        f.create_dataset("m", data=values, chunks=(4096,), **kwargs)
    with h5py.File(path, "r", rdcc_nbytes=0) as f:
        dset = f["m"]
        masks = [dset.id.get_chunk_info(i).filter_mask for i in range(4)]
        assert masks == [0, 1, 0, 1]
        for i in (1, 3):
            mask, raw = dset.id.read_direct_chunk((4096 * i,))
            assert mask == 1 and bytes(raw) == values[4096 * i:4096 * (i + 1)].tobytes()
        assert dset[()].tobytes() == values.tobytes()
        assert dset[5000:13000].tobytes() == values[5000:13000].tobytes()  # partial reads


def test_partial_writes_and_reads(tmp_path):
    """Chunks rewritten piecemeal (read-modify-write through the filter) and read in slices."""
    spec = dict(name="p", dtype="i2", shape=[300, 200], chunks=[64, 48], filter="blosc",
                opts=hi.blosc_opts("lz4", 5, "bit"))
    values = hi.make_array(spec)
    path = tmp_path / "p.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("p", shape=values.shape, dtype=values.dtype, chunks=(64, 48),
                             compression=hi.FILTER_BLOSC, compression_opts=spec["opts"])
        for r in range(0, 300, 37):
            d[r:r + 37] = values[r:r + 37]
    for _ in range(2):
        with h5py.File(path, "r+", rdcc_nbytes=0) as f:
            d = f["p"]
            assert d[()].tobytes() == values.tobytes()
            assert d[100:250:3, 7:190:5].tobytes() == values[100:250:3, 7:190:5].tobytes()
            values[10:20, 10:20] = -5
            d[10:20, 10:20] = -5
            assert all(d.id.get_chunk_info(i).filter_mask == 0 for i in range(d.id.get_num_chunks()))
