"""h5sparse.RowBatches: shuffled batches of rows for loaders, on real files through the connector."""
import threading

import h5py
import numpy as np
import pytest

import h5sparse

SHAPE = (1000, 300)


def make(path, density=0.05, seed=1):
    """A sparse matrix dataset and the same data dense (undefined = 0)."""
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random(SHAPE) < density, rng.integers(1, 50, SHAPE), 0).astype("f4")
    with h5py.File(path, "w") as f:
        d = f.create_dataset("X", shape=SHAPE, dtype="f4", chunks=(128, 64),
                             **h5sparse.Sparse(values=h5sparse.Blosc("lz4", 5, "byte")))
        rows, cols = np.nonzero(dense)
        h5sparse.write_coo(d, np.stack([rows, cols], axis=1), dense[rows, cols])
    return dense


@pytest.fixture
def matrix(tmp_path):
    path = tmp_path / "m.h5"
    dense = make(path)
    with h5py.File(path, "r") as f:
        yield f["X"], dense


@pytest.mark.parametrize("read_ahead", [0, 2])
def test_every_row_once_with_its_values(matrix, read_ahead):
    d, dense = matrix
    batches = list(h5sparse.RowBatches(d, batch_size=70, block_size=32, buffer_blocks=4, seed=3,
                                       read_ahead=read_ahead))
    rows = np.concatenate([b.rows for b in batches])
    assert sorted(rows.tolist()) == list(range(SHAPE[0]))
    assert [len(b.rows) for b in batches] == [70] * 14 + [20]
    for b in batches:
        assert b.matrix.shape == (len(b.rows), SHAPE[1])
        assert np.array_equal(b.matrix.toarray(), dense[b.rows])
    assert rows.tolist() != sorted(rows.tolist())  # shuffled


def test_shuffles_blocks_and_rows_within_a_buffer_only(matrix):
    d, _ = matrix
    reader = h5sparse.RowBatches(d, batch_size=1000, block_size=50, buffer_blocks=2, seed=9, read_ahead=0)
    rows = next(iter(reader)).rows
    blocks = reader.blocks()
    for at in range(0, len(blocks), 2):  # the rows of each buffer of two blocks, in any order
        buffer = rows[at * 50:(at + 2) * 50]
        expect = set(range(*blocks[at])) | set(range(*blocks[at + 1]))
        assert set(buffer.tolist()) == expect


def test_same_seed_same_batches_and_unshuffled_order(matrix):
    d, _ = matrix
    first = [b.rows for b in h5sparse.RowBatches(d, batch_size=64, seed=5)]
    again = [b.rows for b in h5sparse.RowBatches(d, batch_size=64, seed=5)]
    other = [b.rows for b in h5sparse.RowBatches(d, batch_size=64, seed=6)]
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))
    ordered = np.concatenate([b.rows for b in h5sparse.RowBatches(d, batch_size=64, shuffle=False)])
    assert ordered.tolist() == list(range(SHAPE[0]))


def test_shards_split_the_blocks_and_drop_last(matrix):
    d, dense = matrix
    shards = [h5sparse.RowBatches(d, batch_size=32, block_size=25, seed=2, rows=(100, 900), shard=(i, 3),
                                  drop_last=True) for i in range(3)]
    seen = [np.concatenate([b.rows for b in s]) for s in shards]
    assert all(len(b.rows) == 32 for s in shards for b in s)
    assert all(len(list(s)) == len(s) for s in shards)
    assert not set(seen[0]) & set(seen[1]) and not set(seen[1]) & set(seen[2])
    kept = set(np.concatenate(seen).tolist())
    assert kept <= set(range(100, 900)) and len(kept) > 800 - 3 * 32


def test_stopping_early_stops_the_reading_thread(matrix):
    d, _ = matrix
    before = threading.active_count()
    batches = iter(h5sparse.RowBatches(d, batch_size=10, block_size=10, buffer_blocks=1, read_ahead=2))
    next(batches)
    batches.close()
    assert threading.active_count() == before


def test_a_failed_read_raises_in_the_caller(tmp_path):
    path = tmp_path / "m.h5"
    make(path)
    with h5py.File(path, "r") as f:
        reader = h5sparse.RowBatches(f["X"], batch_size=100, read_ahead=1)
        f.close()  # the dataset is gone under the reader's thread
        with pytest.raises(Exception):
            list(reader)


def test_bad_arguments_are_refused(matrix):
    d, _ = matrix
    for bad in (dict(batch_size=0), dict(block_size=0), dict(rows=(10, 5)), dict(rows=(0, 2000)),
                dict(shard=(3, 3)), dict(read_ahead=-1)):
        with pytest.raises(ValueError):
            h5sparse.RowBatches(d, **bad)
    with h5py.File(d.file.filename.replace("m.h5", "v.h5"), "w") as f:
        with pytest.raises(ValueError, match="2-D"):
            h5sparse.RowBatches(f.create_dataset("v", shape=(10,), dtype="f4", **h5sparse.Sparse()))
