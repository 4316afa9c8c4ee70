"""The benchmark's data (bench/cluster/run.py), made where a block is computed: a module of its
own, which the cluster's workers import (the harness puts this directory on their PYTHONPATH),
so that tasks carry a reference to make_block, not its pickled code."""
import numpy as np

CASES = {  # name: (side, elements, chunk, block)
    "65536^2, 1%": (65536, int(65536 * 65536 * 0.01), 16384, (16384, 16384)),
    "1048576^2, 2e7": (1048576, 20_000_000, 16384, (16384, 1048576)),
}
QUICK = {
    "16384^2, 1%": (16384, int(16384 * 16384 * 0.01), 4096, (4096, 4096)),
    "262144^2, 1e6": (262144, 1_000_000, 4096, (4096, 262144)),
}


def case_of(name):
    return CASES.get(name) or QUICK[name]


def make_block(seed, shape, elements, block_info=None):
    """The sparse.COO block at `block_info`'s location: `elements` uniform positions (fewer after
    removing repeats), float32 values, all from the block's own seed."""
    import sparse
    location = block_info[None]["chunk-location"] if block_info else (0, 0)
    rng = np.random.default_rng([seed, *location])
    flat = np.unique(rng.integers(0, shape[0] * shape[1], elements, dtype=np.int64))
    coords = np.stack([flat // shape[1], flat % shape[1]])
    return sparse.COO(coords, rng.random(len(flat), dtype=np.float32), shape=shape, has_duplicates=False,
                      sorted=True)


def block_args(name):
    """make_block's (seed, shape, elements) for the blocks of case `name`."""
    side, elements, _chunk, block = case_of(name)
    return 2026, block, elements // ((side // block[0]) * (side // block[1]))


def the_array(name):
    import dask.array as da
    import sparse
    side, _elements, _chunk, block = case_of(name)
    meta = sparse.COO(np.zeros((2, 0), np.int64), np.zeros(0, np.float32), shape=(0, 0))
    return da.map_blocks(make_block, *block_args(name), dtype=np.float32, meta=meta,
                         chunks=(side // block[0] * (block[0],), side // block[1] * (block[1],)))


def block_start(array, location):
    return tuple(sum(c[:i]) for c, i in zip(array.chunks, location))
