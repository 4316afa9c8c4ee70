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


def _dataset(f, name, shape=(300, 260), chunks=(32, 64), dtype="f4", fill=0, values=None):
    return f.create_dataset(name, shape=shape, dtype=dtype, chunks=chunks, fillvalue=fill,
                            **h5sparse.Sparse(values=values or h5sparse.Blosc("lz4")))


def _random_coo(shape, density, seed, fill=0.0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape) * density)
    coords = np.unique(np.stack([rng.integers(0, s, n) for s in shape]), axis=1)
    return sparse.COO(coords, rng.random(coords.shape[1]).astype("f4") + 1, shape=shape, fill_value=fill)


def _stored_chunks(d):
    """Every stored chunk's bytes by offset, as H5Dread_chunk gives them."""
    chunks = {}
    d.id.chunk_iter(lambda info: chunks.setdefault(tuple(info.chunk_offset), None))
    return {o: d.id.read_direct_chunk(o) for o in chunks}


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
