"""Direct structured-chunk I/O from Python (h5sparse.read_struct_chunk & co.) and h5py's native
chunk calls on sparse datasets, through the connector, on real files: a chunk-by-chunk copy
reproduces values, defined elements and stored bytes; every size and mask agrees across the
calls that report it; iteration visits each stored chunk once; bad writes are refused with a
message saying why and leave what is stored untouched."""
import h5py
import numpy as np
import pytest

import h5sparse

SHAPE, CHUNKS = (100, 120), (16, 20)


def make(f, name, fill_is_undefined=False):
    return f.create_dataset(name, shape=SHAPE, dtype="<f8", chunks=CHUNKS, fillvalue=np.nan,
                            **h5sparse.Sparse(values=h5sparse.Blosc("lz4", 5, "byte"), selection=h5sparse.Deflate(6),
                                              fill_is_undefined=fill_is_undefined))


def fill(d):
    rng = np.random.default_rng(7)
    rows, cols = rng.integers(0, SHAPE[0], 40), rng.integers(0, SHAPE[1], 40)
    for r, c in zip(rows, cols):
        d[r, c] = r * 1000.0 + c
    d[40:70, 10:75] = np.arange(30 * 65, dtype="<f8").reshape(30, 65)
    d[80:96, 100:120] = -1.5        # a whole chunk
    d[0:16, 100:120] = 3.0
    h5sparse.erase(d, np.s_[0:16, 100:120])  # stored, nothing defined


def same_values(a, b):
    return np.array_equal(a[...], b[...], equal_nan=True)


@pytest.fixture
def src(tmp_path):
    with h5py.File(tmp_path / "chunks.h5", "w") as f:
        d = make(f, "src")
        fill(d)
        yield d


def test_copy_by_sections_reproduces_the_dataset(src):
    dst = make(src.file, "dst")
    infos = h5sparse.struct_chunks(src)
    for info in infos:
        got, sections = h5sparse.read_struct_chunk(src, info.offset)
        assert got == info
        assert [len(s) for s in sections] == list(info.section_size)
        h5sparse.write_struct_chunk(dst, info.offset, sections, info)
    assert same_values(src, dst)
    assert np.array_equal(h5sparse.get_defined(src), h5sparse.get_defined(dst))
    for info in infos:
        assert src.id.read_direct_chunk(info.offset) == dst.id.read_direct_chunk(info.offset)
    assert h5sparse.struct_chunks(dst) == [i._replace(addr=j.addr) for i, j in zip(infos, h5sparse.struct_chunks(dst))]


def test_sizes_and_masks_agree_across_calls(src):
    infos = h5sparse.struct_chunks(src)
    assert len(infos) == src.id.get_num_chunks() > 10
    assert len({i.offset for i in infos}) == len(infos)  # each stored chunk once
    native = []
    src.id.chunk_iter(lambda s: native.append(s))
    assert {tuple(s.chunk_offset) for s in native} == {i.offset for i in infos}
    empty = 0
    for k, info in enumerate(infos):
        assert 17 <= info.size - sum(info.section_size) <= 57  # the format version 2 header
        n = src.id.get_chunk_info_by_coord(info.offset)
        assert (n.filter_mask, n.byte_offset, n.size) == (0, info.addr, info.size)
        assert h5sparse.struct_chunk_info_by_coord(src, info.offset) == info
        assert h5sparse.struct_chunk_info(src, k) == info
        assert tuple(src.id.get_chunk_info(k).chunk_offset) == info.offset
        mask, raw = src.id.read_direct_chunk(info.offset)
        assert mask == 0 and raw[:1] == b"\x02" and len(raw) == info.size
        if info.section_orig_size[1] == 0:  # nothing defined: values section empty, every filter skipped
            empty += 1
            assert info.section_size[1] == 0 and info.filter_mask[1] == 0b1
    assert empty == 1


def test_info_by_index_within_a_selection(src):
    sel = np.s_[0:30, 0:50]
    meeting = [i for i in h5sparse.struct_chunks(src) if i.offset[0] < 30 and i.offset[1] < 50]
    got = []
    while True:
        try:
            got.append(h5sparse.struct_chunk_info(src, len(got), sel))
        except h5sparse.ChunkIOError as e:
            assert "out of range" in str(e)
            break
    assert got == meeting and got
    stored = {i.offset for i in h5sparse.struct_chunks(src)}
    grid = {(r, c) for r in range(0, SHAPE[0], CHUNKS[0]) for c in range(0, SHAPE[1], CHUNKS[1])}
    assert grid - stored
    for offset in grid - stored:
        assert h5sparse.struct_chunk_info_by_coord(src, offset) is None


def test_iteration_stops_and_passes_exceptions(src):
    seen = []
    assert h5sparse.struct_chunk_iter(src, lambda i: seen.append(i) or len(seen) == 3) is True
    assert len(seen) == 3

    def boom(_info):
        raise KeyError("from the callback")
    with pytest.raises(KeyError, match="from the callback"):
        h5sparse.struct_chunk_iter(src, boom)


def test_native_chunk_calls(src):
    other = make(src.file, "native")
    for info in h5sparse.struct_chunks(src):
        mask, raw = src.id.read_direct_chunk(info.offset)
        other.id.write_direct_chunk(info.offset, raw, filter_mask=mask)
    assert same_values(src, other)
    assert np.array_equal(h5sparse.get_defined(src), h5sparse.get_defined(other))
    assert src.id.get_offset() is None  # chunked: no single offset


def test_bad_writes_are_refused_and_change_nothing(src):
    at = (32, 0)
    info, sections = h5sparse.read_struct_chunk(src, at)
    before_raw, before = src.id.read_direct_chunk(at), src[...]
    bad = [
        (dict(section_orig_size=(info.section_orig_size[0], info.section_orig_size[1] + 8)), "section 1"),
        (dict(filter_mask=(0b10, info.filter_mask[1])), "names filters beyond"),
        (dict(filter_mask=(0b1, info.filter_mask[1])), "section 0"),
        (dict(sections=[sections[0], sections[1][:-1]]), "not a structured chunk"),
        (dict(sections=[sections[1], sections[0]]), "not a structured chunk"),
        (dict(offset=(33, 0)), "is not the first element of a chunk"),
        (dict(offset=(112, 0)), "inside the extent"),
    ]
    for change, message in bad:
        args = dict(offset=at, sections=sections, info=info)
        args.update(change)
        with pytest.raises(h5sparse.ChunkIOError, match=message):
            h5sparse.write_struct_chunk(src, args["offset"], args["sections"], args["info"],
                                        filter_mask=args.get("filter_mask"),
                                        section_orig_size=args.get("section_orig_size"))
    _, raw = before_raw
    damaged = bytearray(raw)  # a byte of section 1 (zero padding to the size class may follow it)
    damaged[bytes(raw).index(bytes(sections[1])) + len(sections[1]) // 2] ^= 0x10
    for payload, mask, message in [(b"garbage bytes", 0, "not a structured chunk"),
                                   (bytes(damaged), 0, "checksum mismatch"),
                                   (np.zeros(CHUNKS, "<f8").tobytes(), 1, "filter mask 1 refused")]:
        with pytest.raises(OSError, match=message):
            src.id.write_direct_chunk(at, payload, filter_mask=mask)
    assert src.id.read_direct_chunk(at) == before_raw
    assert np.array_equal(src[...], before, equal_nan=True)


def test_dense_datasets_refuse_struct_calls(tmp_path):
    with h5py.File(tmp_path / "dense.h5", "w") as f:
        d = f.create_dataset("d", shape=(10,), dtype="i4", chunks=(5,))
        d[...] = 1
        with pytest.raises(h5sparse.ChunkIOError, match="not sparse"):
            h5sparse.read_struct_chunk(d, (0,))
        with pytest.raises(h5sparse.ChunkIOError, match="not sparse"):
            h5sparse.struct_chunks(d)
