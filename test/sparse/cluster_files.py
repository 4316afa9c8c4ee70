"""Helpers of the cluster and stripes tests: their sparse datasets (Blosc lz4 values by default),
random pydata sparse arrays, and a dataset's stored chunks as H5Dread_chunk gives them."""
import numpy as np
import sparse

import h5sparse

LZ4 = h5sparse.Blosc("lz4")


def dataset(f, name, shape=(300, 260), chunks=(32, 64), dtype="f4", fill=0, values=LZ4):
    return f.create_dataset(name, shape=shape, dtype=dtype, chunks=chunks, fillvalue=fill,
                            **h5sparse.Sparse(values=values))


def random_coo(shape, density, seed, fill=0.0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape) * density)
    coords = np.unique(np.stack([rng.integers(0, s, n) for s in shape]), axis=1)
    return sparse.COO(coords, rng.random(coords.shape[1]).astype("f4") + 1, shape=shape, fill_value=fill)


def stored_chunks(d):
    """Every stored chunk's bytes by offset, as H5Dread_chunk gives them."""
    chunks = {}
    d.id.chunk_iter(lambda info: chunks.setdefault(tuple(info.chunk_offset), None))
    return {o: d.id.read_direct_chunk(o) for o in chunks}
