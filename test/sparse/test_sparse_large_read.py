"""Full reads of sparse datasets large enough (>= 16 MiB read) for the connector to write the
destination with streaming stores, and to take the whole-selection path (chunk pieces from the
chunk's position, not from splitting the selection): values, fill values (patterned, not
zero) and edge chunks come out as the model says, for element sizes 1, 2, 3 (not streamed), 4
and 8, unfiltered and with a section pipeline, into new arrays, reused buffers at every 16-byte
misalignment, non-contiguous memory selections, and through hyperslab selections of every
element."""
import h5py
import numpy as np
import pytest

import h5sparse

SHAPE, CHUNKS = (2100, 2050), (256, 256)  # edge chunks in both dimensions


def model(dtype, seed):
    """Dense values and the defined mask: empty chunks, full chunks, random densities."""
    rng = np.random.default_rng(seed)
    defined = np.zeros(SHAPE, bool)
    for r in range(0, SHAPE[0], CHUNKS[0]):
        for c in range(0, SHAPE[1], CHUNKS[1]):
            block = defined[r:r + CHUNKS[0], c:c + CHUNKS[1]]
            kind = rng.integers(0, 4)
            if kind == 1:
                block[...] = True
            elif kind >= 2:
                block[...] = rng.random(block.shape) < (0.001 if kind == 2 else 0.3)
    defined[5, :] = True  # runs across chunk boundaries
    if dtype.kind == "S":
        values = rng.integers(97, 123, size=SHAPE + (dtype.itemsize,), dtype=np.uint8).view(dtype)[..., 0]
    else:
        values = rng.integers(1, 100, size=SHAPE).astype(dtype)
    return values, defined


FILLS = {"f4": -2.5, "i2": -7, "u1": 9, "f8": 1e300, "S3": b"fil"}


@pytest.mark.parametrize("code", ["f4", "i2", "u1", "f8", "S3"])
@pytest.mark.parametrize("codec", ["none", "blosc"])
def test_large_full_reads_match_model(tmp_path, code, codec):
    dtype = np.dtype(code)
    values, defined = model(dtype, seed=len(code) + len(codec))
    fill = np.array(FILLS[code], dtype)
    expected = np.where(defined, values, fill)
    section = h5sparse.Blosc("lz4", 5, "byte") if codec == "blosc" else None
    with h5py.File(tmp_path / "large.h5", "w") as f:
        d = f.create_dataset("x", shape=SHAPE, dtype=dtype, chunks=CHUNKS, fillvalue=fill,
                             **h5sparse.Sparse(values=section, selection=section))
        for r in range(0, SHAPE[0], CHUNKS[0]):  # defined elements only: row by row of chunks
            band = np.s_[r:r + CHUNKS[0]]
            rows, cols = np.nonzero(defined[band])
            if len(rows):
                space = d.id.get_space()
                space.select_elements(np.stack([rows + r, cols], axis=1))
                d.id.write(h5py.h5s.create_simple((len(rows),)), space, values[band][rows, cols])
    with h5py.File(tmp_path / "large.h5", "r") as f:
        d = f["x"]
        assert d.nbytes >= 16 << 20 or dtype.itemsize < 4
        assert np.array_equal(d[...], expected)
        assert np.array_equal(d[0:SHAPE[0], 0:SHAPE[1]], expected)  # a hyperslab of everything
        raw = np.empty(d.nbytes + 16, np.uint8)
        for misalign in (0, 3, 8) if dtype.itemsize >= 4 else (1,):
            out = raw[misalign:misalign + d.nbytes].view(dtype).reshape(SHAPE)
            out[...] = values  # every element must be overwritten
            d.read_direct(out)
            assert np.array_equal(out, expected), misalign
        wide = np.zeros((SHAPE[0], SHAPE[1] + 3), dtype)  # memory rows longer than the file's
        d.read_direct(wide, np.s_[...], np.s_[:, 2:SHAPE[1] + 2])
        assert np.array_equal(wide[:, 2:SHAPE[1] + 2], expected)
        untouched = np.zeros((), dtype)  # compared, not .any(): NumPy 1.x has no truth test of bytes
        assert (wide[:, :2] == untouched).all() and (wide[:, SHAPE[1] + 2:] == untouched).all()
