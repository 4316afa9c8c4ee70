"""from_dask on real files: dask arrays of pydata sparse, scipy and dense blocks written by dask's
thread, process and distributed schedulers store the very chunks write_coo stores (byte for
byte), over chunks stored before too; blocks off the chunk grid are regrouped; bad blocks fail
the write with a clear error before any of their chunks is stored."""
import os

import dask
import dask.array as da
import h5py
import numpy as np
import pytest
import scipy.sparse
import sparse

import h5sparse
from cluster_files import dataset as _dataset, random_coo as _random_coo, stored_chunks as _stored_chunks


def _assert_same_file_content(a, b):
    assert _stored_chunks(a) == _stored_chunks(b)
    ca, va = h5sparse.read_coo(a)
    cb, vb = h5sparse.read_coo(b)
    np.testing.assert_array_equal(ca, cb)
    np.testing.assert_array_equal(va, vb)


@pytest.mark.parametrize("scheduler", ["threads", "processes", "sync"])
@pytest.mark.parametrize("blocks", [(64, 128), (50, 70)])  # on the chunk grid, off it
def test_blocks_make_the_chunks_write_coo_makes(tmp_path, scheduler, blocks):
    coo = _random_coo((200, 250), 0.05, seed=1)
    with h5py.File(tmp_path / "c.h5", "w") as f:
        expected, got = _dataset(f, "expected"), _dataset(f, "got")
        h5sparse.write_coo(expected, coo.coords.T + [40, 5], coo.data)
        with dask.config.set(scheduler=scheduler):
            written = h5sparse.from_dask(got, da.from_array(coo, chunks=blocks, asarray=False), offset=(40, 5),
                                         in_flight=3)
        assert written == len(_stored_chunks(expected)) > 10
        _assert_same_file_content(expected, got)


def test_scipy_and_dense_blocks_and_a_nan_fill(tmp_path):
    m = scipy.sparse.random(200, 120, density=0.1, format="csr", random_state=3, dtype=np.float64)
    dense = m.toarray()
    dense[dense == 0] = np.nan
    with h5py.File(tmp_path / "s.h5", "w") as f:
        expected = _dataset(f, "expected", shape=(200, 120), chunks=(16, 32), dtype="f8", fill=np.nan)
        h5sparse.from_scipy(expected, m)
        from_csr, from_dense = (_dataset(f, n, shape=(200, 120), chunks=(16, 32), dtype="f8", fill=np.nan)
                                for n in ("csr", "dense"))
        blocks = da.from_array(m.toarray(), chunks=(40, 60)).map_blocks(scipy.sparse.csr_matrix, dtype="f8")
        h5sparse.from_dask(from_csr, blocks)
        h5sparse.from_dask(from_dense, da.from_array(dense, chunks=(64, 64)))
        _assert_same_file_content(expected, from_csr)
        _assert_same_file_content(expected, from_dense)


def test_chunks_stored_before_are_merged_as_write_coo_merges(tmp_path):
    first, second = _random_coo((300, 260), 0.03, seed=5), _random_coo((300, 260), 0.03, seed=6)
    with h5py.File(tmp_path / "m.h5", "w") as f:
        expected, got = _dataset(f, "expected"), _dataset(f, "got")
        for d in (expected, got):
            h5sparse.write_coo(d, first.coords.T, first.data)
        h5sparse.write_coo(expected, second.coords.T, second.data)
        h5sparse.from_dask(got, da.from_array(second, chunks=(96, 128), asarray=False))
        _assert_same_file_content(expected, got)


def test_values_convert_as_write_coo_converts_them(tmp_path):
    values = np.array([1.5, -2.7, 3e9, 40000.0])
    coords = np.array([[0, 0], [1, 5], [7, 7], [30, 3]])
    coo = sparse.COO(coords.T, values, shape=(32, 16))
    with h5py.File(tmp_path / "v.h5", "w") as f:
        expected = _dataset(f, "expected", shape=(32, 16), chunks=(8, 8), dtype="i2")
        got = _dataset(f, "got", shape=(32, 16), chunks=(8, 8), dtype="i2")
        h5sparse.write_coo(expected, coords, values)
        h5sparse.from_dask(got, da.from_array(coo, chunks=(8, 8), asarray=False))
        _assert_same_file_content(expected, got)


def test_bad_blocks_fail_before_any_of_their_chunks_is_stored(tmp_path):
    with h5py.File(tmp_path / "b.h5", "w") as f:
        d = _dataset(f, "x", shape=(100, 40), chunks=(20, 40))
        ones = da.ones((100, 40), chunks=(20, 40), dtype="f4")
        with pytest.raises(IndexError, match="outside the extent"):
            h5sparse.from_dask(d, ones, offset=(1, 0))
        with pytest.raises(TypeError, match="do not convert"):
            h5sparse.from_dask(d, da.from_array(np.full((100, 40), "a"), chunks=(20, 40)))
        with pytest.raises(ValueError, match="fill value"):
            h5sparse.from_dask(d, da.from_array(sparse.COO.from_numpy(np.eye(100, 40), fill_value=5),
                                                chunks=(20, 40), asarray=False))
        assert h5sparse.read_coo(d)[0].shape[0] == 0  # nothing stored by the refused calls
        # Block i holds i + 1. The last comes one row short: the four before it are stored, nothing of it.
        numbered = ones + da.arange(100, chunks=20)[:, None] // 20
        short = da.map_blocks(lambda b: b[:-1] if b.shape[0] == 20 and b[0, 0] == 5 else b, numbered, dtype="f4")
        with dask.config.set(scheduler="sync"), pytest.raises(ValueError, match="shape"):
            h5sparse.from_dask(d, short, in_flight=1)
        coords, values = h5sparse.read_coo(d)
        assert coords[:, 0].max() == 79 and len(values) == 80 * 40
        with pytest.raises(ValueError, match="not a sparse dataset"):
            h5sparse.from_dask(f.create_dataset("dense", (4,), "f4"), da.ones(4, chunks=2))
    with h5py.File(tmp_path / "b.h5", "r") as f, pytest.raises(ValueError, match="read-only"):
        h5sparse.from_dask(f["x"], da.ones((100, 40), chunks=(20, 40), dtype="f4"))


def test_a_distributed_cluster_writes_and_survives_a_dead_worker(tmp_path):
    distributed = pytest.importorskip("distributed")  # noqa: F841  (Debian's python3-distributed)
    from distributed import Client, LocalCluster
    coo = _random_coo((256, 512), 0.05, seed=9)
    marker = tmp_path / "died-once"

    def die_once(block, block_info=None):
        if block_info[0]["chunk-location"] == (1, 2) and not marker.exists():
            marker.touch()
            os._exit(1)  # the worker process dies mid-task; dask runs the task again elsewhere
        return block

    array = da.from_array(coo, chunks=(64, 128), asarray=False).map_blocks(die_once, dtype="f4")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster), h5py.File(tmp_path / "d.h5", "w") as f:
        expected, got = _dataset(f, "expected", shape=(256, 512)), _dataset(f, "got", shape=(256, 512))
        h5sparse.write_coo(expected, coo.coords.T, coo.data)
        h5sparse.from_dask(got, array, in_flight=2)
        assert marker.exists()
        _assert_same_file_content(expected, got)


def _flip_byte_of_chunk(path, name, offset, at):
    """Flips one stored byte of the chunk at `offset`, on disk."""
    with h5py.File(path, "r") as f:
        info = f[name].id.get_chunk_info_by_coord(offset)
    with open(path, "r+b") as raw:
        raw.seek(info.byte_offset + at)
        byte = raw.read(1)
        raw.seek(info.byte_offset + at)
        raw.write(bytes([byte[0] ^ 0x40]))


def test_a_corrupt_stored_chunk_fails_its_block_naming_the_chunk(tmp_path):
    path = tmp_path / "k.h5"
    coo = _random_coo((64, 64), 0.1, seed=2)
    with h5py.File(path, "w") as f:
        d = _dataset(f, "x", shape=(64, 64), chunks=(32, 32))
        h5sparse.write_coo(d, coo.coords.T, coo.data)
    _flip_byte_of_chunk(path, "x", (32, 0), at=40)
    with h5py.File(path, "a") as f:
        d = f["x"]
        before = _stored_chunks(d)
        with dask.config.set(scheduler="sync"), pytest.raises(h5sparse.H5SparseError, match=r"\(32, 0\)"):
            h5sparse.from_dask(d, da.from_array(coo, chunks=(32, 64), asarray=False), in_flight=1)
        after = _stored_chunks(d)
        assert after[(32, 0)] == before[(32, 0)] and after[(32, 32)] == before[(32, 32)]


def test_chunk_writes_checked_by_checksums_refuse_what_the_encoder_did_not_make(tmp_path):
    """The DXPL from_dask stores with: intact chunks of this dataset's layout pass, a flipped byte
    or another layout's chunk is refused, and the chunk stored before stays."""
    from h5sparse.cluster import _encoded_chunk_writes
    dxpl = _encoded_chunk_writes()
    coo = _random_coo((16, 16), 0.3, seed=4)
    with h5py.File(tmp_path / "w.h5", "w") as f:
        d = _dataset(f, "x", shape=(16, 16), chunks=(16, 16))
        plain = _dataset(f, "plain", shape=(16, 16), chunks=(16, 16), values=None)
        h5sparse.write_coo(d, coo.coords.T, coo.data)
        h5sparse.write_coo(plain, coo.coords.T[:3], coo.data[:3])
        _mask, chunk = d.id.read_direct_chunk((0, 0))
        d.id.write_direct_chunk((0, 0), chunk, filter_mask=0, dxpl=dxpl)  # intact: stored
        flipped = bytearray(chunk)
        flipped[len(chunk) // 2] ^= 1
        with pytest.raises(Exception, match="refused"):
            d.id.write_direct_chunk((0, 0), bytes(flipped), filter_mask=0, dxpl=dxpl)
        plain_chunk = plain.id.read_direct_chunk((0, 0))[1]
        with pytest.raises(Exception, match="refused"):  # a filtered section where no filter is
            plain.id.write_direct_chunk((0, 0), chunk, filter_mask=0, dxpl=dxpl)
        assert d.id.read_direct_chunk((0, 0))[1] == chunk
        assert plain.id.read_direct_chunk((0, 0))[1] == plain_chunk
        np.testing.assert_array_equal(h5sparse.read_coo(d)[1], coo.data)
        # What only decoding finds (8-byte values where 4-byte ones belong) passes the checksums:
        # that check is for the encoder's chunks. Readers still say what is wrong.
        wide = _dataset(f, "wide", shape=(16, 16), chunks=(16, 16), dtype="f8", values=None)
        h5sparse.write_coo(wide, coo.coords.T[:3], coo.data[:3])
        wide_chunk = wide.id.read_direct_chunk((0, 0))[1]
        with pytest.raises(Exception, match="refused"):
            plain.id.write_direct_chunk((0, 0), wide_chunk, filter_mask=0)
        plain.id.write_direct_chunk((0, 0), wide_chunk, filter_mask=0, dxpl=dxpl)
        with pytest.raises(OSError, match=r"chunk at \(0, 0\): section 1 \(values\) holds 24 bytes for 3"):
            plain[...]


_DYING_WRITER = """
import os, sys
import dask, dask.array as da, h5py, numpy as np, sparse
import h5sparse
path, seed = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(seed)
coords = np.unique(rng.integers(0, 256, (2, 3000)), axis=1)
coo = sparse.COO(coords, np.arange(coords.shape[1], dtype="f4") + 1, shape=(256, 256))

def die_at_block_6(block, block_info=None):
    if block_info[0]["chunk-location"] == (6, 0):
        os._exit(3)  # the writing process dies while it stores block 5
    return block

with h5py.File(path, "w", libver="latest") as f:
    d = f.create_dataset("x", shape=(256, 256), dtype="f4", chunks=(32, 64),
                         **h5sparse.Sparse(values=h5sparse.Blosc("lz4")))
    f.swmr_mode = True
    array = da.from_array(coo, chunks=(32, 256), asarray=False).map_blocks(die_at_block_6, dtype="f4")
    with dask.config.set(scheduler="sync"):
        h5sparse.from_dask(d, array, in_flight=1, flush_every=4)  # a block's 4 chunks, then a flush
"""


def test_chunks_flushed_before_the_writer_dies_stay_readable(tmp_path):
    """An SWMR writer's file is consistent at every moment (HDF5's ordered metadata writes): a
    reader sees each chunk stored whole, every chunk flushed before the crash among them."""
    import subprocess
    import sys
    path = tmp_path / "crash.h5"
    p = subprocess.run([sys.executable, "-c", _DYING_WRITER, str(path), "11"], capture_output=True, text=True)
    assert p.returncode == 3, p.stderr
    rng = np.random.default_rng(11)
    coords = np.unique(rng.integers(0, 256, (2, 3000)), axis=1)
    expected = dict(zip(map(tuple, coords.T), np.arange(coords.shape[1], dtype="f4") + 1))
    with h5py.File(path, "r", swmr=True) as f:  # an SWMR reader opens what the writer left
        d = f["x"]
        stored = _stored_chunks(d)
        got_coords, got_values = h5sparse.read_coo(d)
    got = dict(zip(map(tuple, got_coords.tolist()), got_values))
    rows_flushed = 4 * 32  # blocks 0-3, flushed before block 5 was computed
    assert {(r, c) for r, c in expected if r < rows_flushed} <= set(got)
    for (r0, c0) in stored:  # each chunk whole: exactly the elements it should hold
        inside = {k: v for k, v in expected.items() if r0 <= k[0] < r0 + 32 and c0 <= k[1] < c0 + 64}
        assert {k: v for k, v in got.items() if k in inside} == inside
    assert set(got) <= set(expected) and max(r for r, _c in got) < 6 * 32



@pytest.mark.parametrize("shape, chunks, blocks, offset", [((1000,), (64,), (100,), (7,)),
                                                           ((20, 30, 40), (8, 8, 16), (7, 15, 40), (3, 0, 5))])
def test_other_ranks_write_as_write_coo_does(tmp_path, shape, chunks, blocks, offset):
    coo = _random_coo(shape, 0.1, seed=len(shape))
    extent = tuple(n + o + 3 for n, o in zip(shape, offset))
    with h5py.File(tmp_path / "r.h5", "w") as f:
        expected = _dataset(f, "expected", shape=extent, chunks=chunks)
        got = _dataset(f, "got", shape=extent, chunks=chunks)
        h5sparse.write_coo(expected, coo.coords.T + np.asarray(offset), coo.data)
        with dask.config.set(scheduler="threads"):
            h5sparse.from_dask(got, da.from_array(coo, chunks=blocks, asarray=False), offset=offset)
        _assert_same_file_content(expected, got)
