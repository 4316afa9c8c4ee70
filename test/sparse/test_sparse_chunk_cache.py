"""Decoded-chunk cache of small sparse reads (docs/DESIGN.md, "Decoded-chunk cache"): element-wise
and small-slice reads decode each chunk once, within the dataset access list's chunk cache
budget. What must hold: a read never returns data older than the last change made in this
process, through whichever handle, file object or API call (writes, erases, extent changes,
native and structured direct chunk writes); corrupt chunks are reported on every read and
never cached; rdcc_nbytes=0 turns the cache off; and what the cache keeps behaves as HDF5's
chunk cache does for a dense chunk (a change of the file made behind HDF5's back is not seen)."""
import os

import h5py
import numpy as np
import pytest

import h5sparse

FILL = -7
SHAPE, CHUNKS = (40, 36), (8, 12)


def pipelines():
    return {
        "plain": h5sparse.Sparse(),
        "blosc": h5sparse.Sparse(values=h5sparse.Blosc("zstd", 3, "byte"), selection=h5sparse.Deflate(4)),
    }


def create(path, pipeline="plain", **file_kwargs):
    f = h5py.File(path, "w", **file_kwargs)
    d = f.create_dataset("x", shape=SHAPE, dtype="<i4", chunks=CHUNKS, fillvalue=FILL, maxshape=(None, None),
                         **pipelines()[pipeline])
    model = np.full(SHAPE, FILL, "<i4")
    rng = np.random.default_rng(1)
    mask = rng.random(SHAPE) < 0.3
    values = rng.integers(0, 1000, SHAPE).astype("<i4")
    d[...] = np.where(mask, values, FILL)  # every element written: all defined
    model[...] = np.where(mask, values, FILL)
    h5sparse.erase(d, np.s_[:, :5])  # some undefined ones
    model[:, :5] = FILL
    return f, d, model


def warm(d, model):
    """Point and small-slice reads over every chunk, checked: the chunks are now decoded and kept."""
    for i in range(0, SHAPE[0], 3):
        for j in range(0, SHAPE[1], 5):
            assert d[i, j] == model[i, j]
    assert np.array_equal(d[2:5, 7:15], model[2:5, 7:15])


def check(d, model):
    for i in range(SHAPE[0]):
        assert np.array_equal(d[i, ::7], model[i, ::7])
        assert d[i, i % SHAPE[1]] == model[i, i % SHAPE[1]]
    assert np.array_equal(d[...], model)


def change_by_write(f, model):
    f["x"][9:11, 3:20] = 5
    model[9:11, 3:20] = 5


def change_by_erase(f, model):
    h5sparse.erase(f["x"], np.s_[0:20:3, 10:30])
    model[0:20:3, 10:30] = FILL


def change_by_native_direct_write(f, model):
    other = f["x"]
    # The stored chunk at (16, 12) put at (0, 0) and (8, 24): H5Dwrite_chunk, as h5py calls it.
    mask, raw = other.id.read_direct_chunk((16, 12))
    for at in ((0, 0), (8, 24)):
        other.id.write_direct_chunk(at, raw, filter_mask=mask)
        model[at[0]:at[0] + 8, at[1]:at[1] + 12] = model[16:24, 12:24]


def change_by_structured_write(f, model):
    other = f["x"]
    info, sections = h5sparse.read_struct_chunk(other, (24, 0))
    h5sparse.write_struct_chunk(other, (32, 24), sections, info)
    model[32:40, 24:36] = model[24:32, 0:12]


def change_by_extent(f, model):
    other = f["x"]
    other.resize((30, 20))  # cuts elements off, which stay undefined when the extent grows back
    other.resize(SHAPE)
    cut = np.ones(SHAPE, bool)
    cut[:30, :20] = False
    model[cut] = FILL


def change_through_another_file_object(f, model):
    with h5py.File(f.filename, "r+") as again:  # HDF5 shares the open file between both
        again["x"][30:40, 30:36] = 99
    model[30:40, 30:36] = 99


CHANGES = [change_by_write, change_by_erase, change_by_native_direct_write, change_by_structured_write,
           change_by_extent, change_through_another_file_object]


@pytest.mark.parametrize("pipeline", sorted(pipelines()))
@pytest.mark.parametrize("change", CHANGES, ids=lambda c: c.__name__)
def test_reads_after_a_change_through_another_handle_see_it(tmp_path, pipeline, change):
    f, d, model = create(tmp_path / "c.h5", pipeline)
    with f:
        warm(d, model)
        change(f, model)
        check(d, model)  # the handle that cached chunks before the change
    with h5py.File(tmp_path / "c.h5", "r") as f:
        check(f["x"], model)


@pytest.mark.parametrize("cache", [None, 0, 300, 2000])
def test_random_reads_and_changes_through_two_handles_match_the_model(tmp_path, cache):
    """rdcc_nbytes: h5py's default (1 MiB: all 15 chunks fit), 0 (no cache), 300 bytes (no
    decoded chunk fits: up to 384 bytes of values and 16 of bitmap each), 2000 (a few fit:
    evictions)."""
    kwargs = {} if cache is None else {"rdcc_nbytes": cache}
    f, a, model = create(tmp_path / "r.h5", "blosc", **kwargs)
    rng = np.random.default_rng(7)
    with f:
        b = f["x"]
        for step in range(600):
            handle = a if rng.random() < 0.7 else b
            i0, j0 = int(rng.integers(0, SHAPE[0])), int(rng.integers(0, SHAPE[1]))
            i1, j1 = min(SHAPE[0], i0 + int(rng.integers(1, 6))), min(SHAPE[1], j0 + int(rng.integers(1, 9)))
            op = rng.random()
            if op < 0.55:
                assert handle[i0, j0] == model[i0, j0], step
            elif op < 0.8:
                assert np.array_equal(handle[i0:i1, j0:j1], model[i0:i1, j0:j1]), step
            elif op < 0.93:
                v = rng.integers(0, 1000, (i1 - i0, j1 - j0)).astype("<i4")
                handle[i0:i1, j0:j1] = v
                model[i0:i1, j0:j1] = v
            else:
                h5sparse.erase(handle, np.s_[i0:i1, j0:j1])
                model[i0:i1, j0:j1] = FILL
        assert np.array_equal(a[...], model)


def test_a_corrupt_chunk_is_an_error_on_every_read_and_never_kept(tmp_path):
    path = tmp_path / "bad.h5"
    f, d, model = create(path)
    with f:
        _, good = d.id.read_direct_chunk((8, 12))
        info = d.id.get_chunk_info_by_coord((8, 12))
        f.flush()
    fd = os.open(path, os.O_RDWR)
    try:  # the last byte of section 1 (a value) flipped in the file
        os.pwrite(fd, bytes([good[-1] ^ 0x40]), info.byte_offset + len(good) - 1)
    finally:
        os.close(fd)
    with h5py.File(path, "r+") as f:
        d = f["x"]
        for _ in range(3):
            with pytest.raises(OSError, match=r"dataset '/x', chunk at \(8, 12\)"):
                d[9, 13]
        assert d[0, 6] == model[0, 6]  # other chunks read
        d.id.write_direct_chunk((8, 12), good)  # mended through the connector
        check(d, model)


def test_what_is_kept_behaves_as_hdf5s_chunk_cache(tmp_path):
    """A chunk changed in the file behind HDF5's back (not through the library) after reads:
    with a chunk cache, the next small read returns what was read before, for a dense Deflate
    dataset (HDF5's cache) and a sparse one (ours) alike; with rdcc_nbytes=0 both see the
    damage. This proves the cache is there, and that rdcc_nbytes switches it."""
    path = tmp_path / "parity.h5"
    f, _, model = create(path)
    with f:
        f.create_dataset("dense", data=model, chunks=CHUNKS, compression="gzip")
        spots = {}
        for name in ("x", "dense"):
            info = f[name].id.get_chunk_info_by_coord((0, 12))
            spots[name] = (info.byte_offset, info.size)
    for rdcc_nbytes, stale in ((1 << 20, True), (0, False)):
        with h5py.File(path, "r", rdcc_nbytes=rdcc_nbytes) as f:
            handles = {name: f[name] for name in spots}  # caches live as long as the handle
            # Ours keeps a chunk missed twice within its last 16 misses; HDF5's at once.
            before = {name: (d[3, 15], d[3, 16])[0] for name, d in handles.items()}
            assert before["x"] == before["dense"] == model[3, 15]
            with open(path, "r+b") as raw:
                saved = {}
                for name, (at, size) in spots.items():
                    raw.seek(at)
                    saved[name] = raw.read(size)
                    raw.seek(at)
                    raw.write(b"\0" * size)
                raw.flush()
            try:
                for name, d in handles.items():
                    if stale:
                        assert d[3, 15] == model[3, 15], name
                    else:
                        with pytest.raises(OSError):
                            d[3, 15]
            finally:
                with open(path, "r+b") as raw:
                    for name, (at, _) in spots.items():
                        raw.seek(at)
                        raw.write(saved[name])
