"""Chunks of one read or write decoded and encoded on several threads (H5SPARSE_NTHREADS;
CTest runs this file with 1, 2 and 3): a corrupt chunk inside a parallel batch is the HDF5 error
naming it (the first corrupt chunk in chunk order, as the serial path), a failed write stores
the chunks before it in chunk order and nothing of the corrupt one, the stored bytes do not
depend on the thread count, the pool really runs the chunks (threads appear only when asked),
and Blosc sections with BLOSC_NTHREADS > 1 inside parallel chunks neither deadlock nor differ."""
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5sparse

SHAPE, CHUNKS = (128, 128), (16, 16)  # 64 chunks: several per thread and batch
FILL = -1.5


def chunk_origins():
    return [(r, c) for r in range(0, SHAPE[0], CHUNKS[0]) for c in range(0, SHAPE[1], CHUNKS[1])]


def values(seed):
    rng = np.random.default_rng(seed)
    v = rng.normal(size=SHAPE).astype("<f4")
    v[rng.random(SHAPE) < 0.7] = FILL  # fill values are not stored (fill-is-undefined)
    return v


def make(path, data, section=None):
    with h5py.File(path, "w") as f:
        f.create_dataset("d", shape=SHAPE, dtype="<f4", chunks=CHUNKS, fillvalue=FILL,
                         **h5sparse.Sparse(values=section, selection=section, fill_is_undefined=True))
        f["d"][...] = data


def corrupt(path, origin):
    """Flips a byte in the middle of the stored chunk at `origin`, in the file itself; returns
    the corrupt bytes."""
    with h5py.File(path, "r") as f:
        info = f["d"].id.get_chunk_info_by_coord(origin)
    at = info.byte_offset + info.size // 2
    fd = os.open(path, os.O_RDWR)
    try:
        byte = os.pread(fd, 1, at)
        os.pwrite(fd, bytes([byte[0] ^ 0x5A]), at)
    finally:
        os.close(fd)
    with h5py.File(path, "r") as f:
        return f["d"].id.read_direct_chunk(origin)[1]


def run_python(script, *args, **env_changes):
    env = dict(os.environ)
    env.update({k: str(v) for k, v in env_changes.items()})
    out = subprocess.run([sys.executable, "-c", script, *map(str, args)], env=env, check=True,
                         capture_output=True, text=True)
    return out.stdout


def test_corrupt_chunks_in_a_parallel_batch_name_the_first(tmp_path):
    path = tmp_path / "corrupt.h5"
    data = values(1)
    make(path, data)
    corrupt(path, (80, 48))
    corrupt(path, (112, 0))  # later in chunk order: the error names (80, 48), as a serial read does
    with h5py.File(path, "r") as f:
        d = f["d"]
        for read in (lambda: d[...], lambda: d.read_direct(np.empty(SHAPE, "<f4")),
                     lambda: d[64:128, 32:128], lambda: d[[3, 85, 120], :]):
            with pytest.raises(OSError) as err:
                read()
            assert "dataset '/d', chunk at (80, 48)" in str(err.value), str(err.value)
        # Chunks away from the corrupt ones still read, in parallel batches too.
        expected = np.where(data == FILL, FILL, data)
        assert np.array_equal(d[0:80, :], expected[0:80, :])
        assert np.array_equal(d[:, 64:128][0:112], expected[0:112, 64:128])


def test_corrupt_chunks_in_coordinate_reads_name_the_first(tmp_path):
    # Coordinate reads decode a band of chunks on a worker while the next is read: the error is
    # still the first corrupt chunk in chunk order, whole chunks or parts of them.
    path = tmp_path / "corrupt_coo.h5"
    data = values(4)
    make(path, data)
    corrupt(path, (80, 48))
    corrupt(path, (112, 0))
    with h5py.File(path, "r") as f:
        d = f["d"]
        for read in (lambda: h5sparse.read_coo(d), lambda: h5sparse.to_scipy(d, format="csr"),
                     lambda: h5sparse.read_coo(d, np.s_[70:128, :]), lambda: h5sparse.to_scipy(d, cols=[50, 3, 120]),
                     lambda: h5sparse.to_scipy(d, rows=[85, 3, 120])):
            with pytest.raises(h5sparse.H5SparseError, match=r"dataset '/d', chunk at \(80, 48\)"):
                read()
        expected = np.where(data == FILL, FILL, data)
        coords, got = h5sparse.read_coo(d, np.s_[0:80, :])
        defined = np.argwhere(expected[0:80] != FILL)
        assert np.array_equal(coords, defined) and np.array_equal(got, expected[0:80][expected[0:80] != FILL])


def test_failed_parallel_write_stores_chunks_in_order_up_to_the_corrupt_one(tmp_path):
    path = tmp_path / "write.h5"
    old = values(2)
    make(path, old)
    bad = corrupt(path, (48, 80))
    origins = chunk_origins()
    failing = origins.index((48, 80))
    new = values(3)
    with h5py.File(path, "r+") as f:
        d = f["d"]
        with pytest.raises(OSError, match=r"dataset '/d', chunk at \(48, 80\)"):
            d[...] = new
    with h5py.File(path, "r") as f:
        d = f["d"]
        assert d.id.read_direct_chunk((48, 80))[1] == bad  # the corrupt chunk is left as it was
        for k, (r, c) in enumerate(origins):
            if k == failing:
                continue
            box = np.s_[r:r + CHUNKS[0], c:c + CHUNKS[1]]
            got = d[box]
            # Every chunk is wholly old or wholly new: before the failing one new, after it old.
            want = new[box] if k < failing else old[box]
            assert np.array_equal(got, want), (r, c)


COUNT_THREADS = """
import os, sys, h5py, numpy as np
def threads():
    return len(os.listdir('/proc/self/task'))
before = threads()  # before the open, which starts the workers ahead of the first read
with h5py.File(sys.argv[1], 'r') as f:
    d = f['d']
    d[...]
    print(before, threads())
"""


@pytest.mark.parametrize("threads", [1, 3])
def test_the_pool_runs_the_chunks_when_asked(tmp_path, threads):
    path = tmp_path / "count.h5"
    make(path, values(4))
    before, after = map(int, run_python(COUNT_THREADS, path, H5SPARSE_NTHREADS=threads, BLOSC_NTHREADS=1).split())
    assert after - before == threads - 1, (before, after)


WRITE_AND_DUMP = """
import sys, h5py, numpy as np
import h5sparse
shape, chunks = (128, 128), (16, 16)
rng = np.random.default_rng(5)
v = rng.normal(size=shape).astype('<f4')
v[rng.random(shape) < 0.6] = 0
section = None if sys.argv[2] == 'none' else h5sparse.Blosc('lz4', 5, 'byte')
with h5py.File(sys.argv[1], 'w') as f:
    d = f.create_dataset('d', shape=shape, dtype='<f4', chunks=chunks,
                         **h5sparse.Sparse(values=section, selection=section, fill_is_undefined=True))
    d[...] = v
    d[20:90, 5:100] = v[20:90, 5:100] * 2  # merges into stored chunks
with h5py.File(sys.argv[1], 'r') as f:
    d = f['d']
    expected = v.copy()
    expected[20:90, 5:100] *= 2
    assert np.array_equal(d[...], expected)
    for r in range(0, 128, 16):
        for c in range(0, 128, 16):
            print(d.id.read_direct_chunk((r, c))[1].hex())
"""


@pytest.mark.parametrize("codec", ["none", "blosc"])
def test_stored_bytes_do_not_depend_on_the_thread_count(tmp_path, codec):
    dumps = {t: run_python(WRITE_AND_DUMP, tmp_path / f"t{t}.h5", codec, H5SPARSE_NTHREADS=t)
             for t in (1, 2, 3)}
    assert dumps[1] == dumps[2] == dumps[3]


def test_blosc_threads_inside_parallel_chunks(tmp_path):
    """Whole 256 KiB chunks through Blosc with BLOSC_NTHREADS=2 (c-blosc's own threads inside
    each chunk task of the pool): no deadlock, the same values."""
    script = """
import sys, h5py, numpy as np
import h5sparse
shape, chunks = (1024, 512), (256, 256)
v = np.arange(np.prod(shape), dtype='<f4').reshape(shape)
v[::3, ::7] = 0
with h5py.File(sys.argv[1], 'w') as f:
    d = f.create_dataset('d', shape=shape, dtype='<f4', chunks=chunks,
                         **h5sparse.Sparse(values=h5sparse.Blosc('lz4', 5, 'byte'), fill_is_undefined=True))
    d[...] = v
    d[100:900, 50:450] = v[100:900, 50:450] + 1
v[100:900, 50:450] += 1
with h5py.File(sys.argv[1], 'r') as f:
    assert np.array_equal(f['d'][...], v)
print('ok')
"""
    for threads in (2, 3):
        out = subprocess.run([sys.executable, "-c", script, str(tmp_path / f"b{threads}.h5")],
                             env=dict(os.environ, H5SPARSE_NTHREADS=str(threads), BLOSC_NTHREADS="2"),
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize("nchunks", range(2, 10))
def test_writes_of_few_chunks_split_between_threads(tmp_path, nchunks):
    """Bands of fewer chunks than threads, or not a multiple of them (4 chunks on 3 threads are
    2 runs of 2, no empty run): the values as written, in dense writes and point writes."""
    rng = np.random.default_rng(nchunks)
    with h5py.File(tmp_path / "few.h5", "w") as f:
        d = f.create_dataset("d", shape=(8, 8 * nchunks), dtype="<i4", chunks=(8, 8), fillvalue=-1,
                             **h5sparse.Sparse())
        data = rng.integers(0, 1000, size=d.shape).astype("<i4")
        d[...] = data
        assert np.array_equal(d[...], data)
        cols = rng.permutation(d.shape[1])[:nchunks * 3]  # unordered points across the chunks
        rows = rng.integers(0, 8, cols.size)
        space = d.id.get_space()
        space.select_elements(np.stack([rows, cols], axis=1))
        new = rng.integers(0, 1000, cols.size).astype("<i4")
        d.id.write(h5py.h5s.create_simple((cols.size,)), space, new)
        data[rows, cols] = new
        assert np.array_equal(d[...], data)


ONE_RUNTIME = """
import sys, h5py, numpy as np
import h5sparse
with h5py.File(sys.argv[1], 'w') as f:
    f.create_dataset('sparse', shape=(64, 64), dtype='<f4', chunks=(16, 16), **h5sparse.Sparse())[...] = 1
    f.create_dataset('blosc', data=np.arange(4096.0), chunks=(1024,), compression=32001,
                     compression_opts=(0, 0, 0, 0, 5, 1, 1))
with h5py.File(sys.argv[1], 'r') as f:
    assert all(f[n][...].sum() > 0 for n in ('sparse', 'blosc'))
maps = open('/proc/self/maps').read().split()
print(' '.join(sorted({p for p in maps if '/libh5sparse' in p})))
"""


def test_one_runtime_per_process(tmp_path):
    """The connector and the filter plugins share one core library (one worker pool, one set of
    kept buffers, one error class) instead of a copy each: a plugin holds no core code, and a
    process using all of them maps each of our libraries once."""
    plugin_dir = os.environ["HDF5_PLUGIN_PATH"].split(":")[0]
    plugins = sorted(os.path.join(plugin_dir, n) for n in os.listdir(plugin_dir) if n.startswith("libh5sparse_"))
    assert len(plugins) >= 4, plugins  # connector, structured chunk, Blosc, LZF
    for plugin in plugins:
        needed = subprocess.run(["readelf", "-d", plugin], capture_output=True, text=True, check=True).stdout
        assert "[libh5sparse_core.so]" in needed, plugin
        # The full symbol table (hidden symbols too): a statically linked core would define these.
        symbols = subprocess.run(["nm", "-C", "--defined-only", plugin], capture_output=True, text=True,
                                 check=True).stdout
        for core_function in ("h5sparse::run_shared(", "h5sparse::encode_chunk(", "h5sparse::sparse_generation("):
            assert core_function not in symbols, (plugin, core_function)
    mapped = run_python(ONE_RUNTIME, tmp_path / "all.h5").split()
    names = [os.path.basename(p) for p in mapped]
    assert names.count("libh5sparse_core.so") == 1, mapped
    # (h5py brings its own LZF filter, so HDF5 never loads ours here.)
    assert {"libh5sparse_vol.so", "libh5sparse_structured.so", "libh5sparse_blosc.so"} <= set(names), names
