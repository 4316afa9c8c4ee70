"""Batches of rows in shuffled order for machine-learning loaders (cells of a cells x genes
matrix, say), read the way loaders read HDF5 and TileDB data fast: the rows are cut into blocks
of contiguous rows, the blocks are shuffled, a buffer of blocks is read (each block one row
band, the read that chunked storage serves best), its rows are shuffled inside the buffer and
handed out in batches, while a thread reads the next buffer. (The block shuffle of
TileDB-SOMA-ML and scDataset; randomness is within a buffer's rows and in the order of blocks.)

    for batch in h5sparse.RowBatches(dset, batch_size=256, seed=epoch):
        batch.rows    # the dataset's row numbers of the batch's rows, in the batch's order
        batch.matrix  # scipy.sparse.csr_array (len(rows), columns), its rows in that order

A RowBatches object is an iterable that PyTorch's IterableDataset can return from __iter__
(torch is never imported here); for DataLoader workers pass shard=(worker id, worker count),
which gives each worker its own blocks of every epoch.
"""
import queue
import threading
from collections import namedtuple

import numpy as np

from .interop import to_scipy

RowBatch = namedtuple("RowBatch", "rows matrix")


class RowBatches:
    """Shuffled batches of the rows of a 2-D dataset (see the module's text).

    batch_size: rows a batch; block_size: contiguous rows read together; buffer_blocks: blocks
    whose rows are shuffled together; shuffle: False reads rows in order; seed: the permutation
    (the same seed, the same batches); rows: (start, stop) of the rows to use (default all);
    read_ahead: buffers read ahead on a thread (0: read on the caller's thread); shard:
    (index, count), this reader's part of the blocks; drop_last: no short last batch."""

    def __init__(self, dset, batch_size=256, block_size=64, buffer_blocks=16, shuffle=True, seed=None,
                 rows=None, read_ahead=1, shard=(0, 1), drop_last=False):
        if len(dset.shape) != 2:
            raise ValueError(f"row batches need a 2-D dataset; {dset.name} has {len(dset.shape)} dimensions")
        for name, value in (("batch_size", batch_size), ("block_size", block_size),
                            ("buffer_blocks", buffer_blocks)):
            if int(value) < 1:
                raise ValueError(f"{name} must be at least 1, got {value!r}")
        if int(read_ahead) < 0:
            raise ValueError(f"read_ahead must be 0 or more, got {read_ahead!r}")
        start, stop = (0, dset.shape[0]) if rows is None else (int(rows[0]), int(rows[1]))
        if not 0 <= start <= stop <= dset.shape[0]:
            raise ValueError(f"rows {rows!r} are not a range of {dset.name}'s {dset.shape[0]} rows")
        index, count = (int(s) for s in shard)
        if not 0 <= index < count:
            raise ValueError(f"shard must be (index, count) with 0 <= index < count, got {shard!r}")
        self.dset, self.batch_size, self.block_size = dset, int(batch_size), int(block_size)
        self.buffer_blocks, self.shuffle, self.seed = int(buffer_blocks), bool(shuffle), seed
        self.start, self.stop, self.read_ahead, self.shard = start, stop, int(read_ahead), (index, count)
        self.drop_last = bool(drop_last)

    def blocks(self):
        """(start, stop) of the blocks this reader reads, in reading order."""
        starts = np.arange(self.start, self.stop, self.block_size)
        order = np.random.default_rng(self.seed).permutation(len(starts)) if self.shuffle else np.arange(len(starts))
        mine = starts[order][self.shard[0]::self.shard[1]]
        return [(int(s), min(int(s) + self.block_size, self.stop)) for s in mine]

    def __len__(self):
        rows = sum(stop - start for start, stop in self.blocks())
        return rows // self.batch_size if self.drop_last else -(-rows // self.batch_size)

    def __iter__(self):
        rng = np.random.default_rng(self.seed)
        buffers = self._buffers() if self.read_ahead == 0 else _read_ahead(self._buffers(), self.read_ahead)
        carry = None  # rows of the last buffer that did not fill a batch
        for rows, matrix in buffers:
            if self.shuffle:
                order = rng.permutation(len(rows))
                rows, matrix = rows[order], matrix[order]
            if carry is not None:
                rows, matrix = np.concatenate([carry[0], rows]), _stack(carry[1], matrix)
            whole = len(rows) - len(rows) % self.batch_size
            for at in range(0, whole, self.batch_size):
                yield RowBatch(rows[at:at + self.batch_size], matrix[at:at + self.batch_size])
            carry = (rows[whole:], matrix[whole:]) if whole < len(rows) else None
        if carry is not None and not self.drop_last:
            yield RowBatch(*carry)

    def _buffers(self):
        """(row numbers, CSR rows) of each buffer of blocks, in reading order."""
        blocks = self.blocks()
        for at in range(0, len(blocks), self.buffer_blocks):
            group = blocks[at:at + self.buffer_blocks]
            parts = [to_scipy(self.dset, np.s_[start:stop, :], format="csr") for start, stop in group]
            rows = np.concatenate([np.arange(start, stop) for start, stop in group])
            yield rows, parts[0] if len(parts) == 1 else _stack(*parts)


def _stack(*parts):
    import scipy.sparse
    return scipy.sparse.vstack(parts, format="csr")


_DONE = object()


def _read_ahead(source, depth):
    """The items of `source`, produced on a thread up to `depth` ahead of the consumer. The
    thread's exception is raised in the consumer; a consumer that stops early stops the thread."""
    items, stop = queue.Queue(maxsize=depth), threading.Event()

    def put(item):  # False once the consumer has stopped
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce():
        try:
            for item in source:
                if not put(item):
                    return
            put(_DONE)
        except BaseException as failure:  # handed to the consumer, raised there
            put(failure)

    thread = threading.Thread(target=produce, name="h5sparse-row-batches", daemon=True)
    thread.start()
    try:
        while True:
            item = items.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()
