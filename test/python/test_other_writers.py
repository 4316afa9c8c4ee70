"""Files as other writers make them, read by our plugins and by the peers:

* Blosc frames made by c-blosc itself with parameters hdf5-blosc never uses (memcpyed frames,
  forced block sizes, a header typesize that differs from cd_values[2], several threads),
  stored with H5Dwrite_chunk: ours and hdf5-blosc must both decode them.
* Pipelines with unusual cd_values (old hdf5-blosc's 4 values, LZF without the chunk size),
  kept verbatim by writing where no filter is available.
* h5repack applying our filters (UD=), re-chunking through them, and removing them.
* Blosc with BLOSC_NTHREADS > 1 on both sides; with 2 threads every complib writes enough
  blocks for both threads, and the peer reads them; both plugins in one process, sharing
  c-blosc's global pool.
"""
import ctypes
import ctypes.util
import json
import os

import numpy as np
import pytest

import h5interop as hi

CHUNK = 4096  # float64 elements per chunk: 32 KiB


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("writers")
    (d / "no-plugins").mkdir()
    return d


def read_all(plugin_path, path, names, out, unregister_lzf=False, extra_env=None):
    args = ["read", path, out, *names] + (["--unregister-lzf"] if unregister_lzf else [])
    report = hi.run_worker(plugin_path, *args, extra_env=extra_env)
    with np.load(out) as z:
        return report, {n: z[n] for n in names}


def padded_chunks(values, chunks):
    """(offset, bytes of the full chunk, zero-padded at the edges) for every chunk."""
    out = []
    for index in np.ndindex(*[-(-n // c) for n, c in zip(values.shape, chunks)]):
        offset = [i * c for i, c in zip(index, chunks)]
        full = np.zeros(chunks, values.dtype)
        region = tuple(slice(o, min(o + c, n)) for o, c, n in zip(offset, chunks, values.shape))
        full[tuple(slice(0, r.stop - r.start) for r in region)] = values[region]
        out.append((offset, full.tobytes()))
    return out


# --- Blosc frames straight from c-blosc -----------------------------------------------------


def libblosc():
    name = ctypes.util.find_library("blosc")
    assert name, "libblosc not found"
    lib = ctypes.CDLL(name)
    lib.blosc_compress_ctx.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t,
                                       ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p,
                                       ctypes.c_size_t, ctypes.c_int]
    lib.blosc_decompress_ctx.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return lib


# name: (clevel, shuffle, header typesize, compressor, forced blocksize, threads, data kind)
FRAMES = {
    "memcpyed_clevel0": (0, 1, 8, "blosclz", 0, 1, "smooth"),
    "memcpyed_random": (5, 1, 8, "lz4", 0, 1, "random"),
    "blocksize_512_bit": (5, 2, 8, "lz4", 512, 1, "smooth"),
    "blocksize_4096_zstd": (5, 1, 8, "zstd", 4096, 1, "smooth"),
    "single_block_zlib": (9, 1, 8, "zlib", CHUNK * 8, 1, "smooth"),
    "header_typesize_1": (5, 1, 1, "blosclz", 0, 1, "smooth"),
    "header_typesize_4_bit": (5, 2, 4, "lz4hc", 0, 1, "smooth"),
    "threads_4_zstd": (9, 1, 8, "zstd", 0, 4, "smooth"),
    "snappy_small_blocks": (5, 1, 8, "snappy", 1024, 1, "smooth"),
}


@pytest.fixture(scope="module")
def frames_file(work):
    lib = libblosc()
    specs = []
    expected = {}
    for name, (clevel, shuffle, typesize, compressor, blocksize, threads, kind) in FRAMES.items():
        spec = dict(name=name, dtype="f8", shape=[3 * CHUNK - 1000], chunks=[CHUNK], kind=kind, seed=5)
        values = hi.make_array(spec)
        expected[name] = values
        stored = []
        for i, (offset, raw) in enumerate(padded_chunks(values, spec["chunks"])):
            dest = ctypes.create_string_buffer(len(raw) + 16)
            size = lib.blosc_compress_ctx(clevel, shuffle, typesize, len(raw), raw, dest, len(dest),
                                          compressor.encode(), blocksize, threads)
            assert size > 0, (name, size)
            frame = dest.raw[:size]
            check = ctypes.create_string_buffer(len(raw))
            assert lib.blosc_decompress_ctx(frame, check, len(check), 1) == len(raw)
            assert check.raw == raw
            if name == "memcpyed_clevel0" or (name == "memcpyed_random" and i < 2):  # (zero padding compresses)
                assert frame[2] & 0x02 and size == len(raw) + 16  # BLOSC_MEMCPYED
            path = work / f"{name}-{i}.frame"
            path.write_bytes(frame)
            stored.append([offset, 0, str(path)])
        cd = [2, 2, 8, CHUNK * 8, clevel, shuffle, hi.COMPRESSORS[compressor]]
        specs.append(dict(spec, pipeline=[[hi.FILTER_BLOSC, 1, cd]], stored=stored))
    (work / "frames.json").write_text(json.dumps(specs))
    path = work / "frames.h5"
    report = hi.run_worker(work / "no-plugins", "direct-write", work / "frames.json", path)
    for spec in specs:  # verbatim pipelines, every chunk filtered
        meta = report["datasets"][spec["name"]]
        assert meta["filters"][0]["cd_values"] == spec["pipeline"][0][2]
        assert [c["mask"] for c in meta["chunks"]] == [0, 0, 0]
    return path, expected


@pytest.mark.parametrize("side", ["ours", "peer"])
def test_blosc_frames_from_c_blosc(work, frames_file, side):
    path, expected = frames_file
    plugin_path = hi.plugin_dir() if side == "ours" else hi.peer_dir()
    report, arrays = read_all(plugin_path, path, list(expected), work / f"frames-{side}.npz")
    assert hi.classify(report["plugins"]) == side, report["plugins"]
    for name, values in expected.items():
        assert arrays[name].tobytes() == values.tobytes(), name


def test_blosc_frames_from_c_blosc_c_reader(frames_file):
    path, expected = frames_file
    for name, values in expected.items():
        data, report = hi.c_read(hi.plugin_dir(), path, name)
        assert data == values.tobytes(), name
        assert "libh5sparse_blosc.so" in map(os.path.basename, report["plugins"])


# --- pipelines with unusual cd_values ---------------------------------------------------------


@pytest.fixture(scope="module")
def odd_cd_file(work):
    """Chunks compressed by h5py's LZF and by hdf5-blosc, re-stored under pipelines whose
    cd_values other (older) writers produce."""
    import h5py  # raw chunks only: nothing is decoded in this process

    base = [dict(name="lzf", dtype="f8", shape=[3 * CHUNK - 1000], chunks=[CHUNK], filter="lzf"),
            dict(name="blosc", dtype="f8", shape=[3 * CHUNK - 1000], chunks=[CHUNK], filter="blosc",
                 opts=hi.blosc_opts("lz4", 5, "byte"))]
    (work / "base-lzf.json").write_text(json.dumps(base[:1]))
    (work / "base-blosc.json").write_text(json.dumps(base[1:]))
    hi.run_worker(work / "no-plugins", "write", work / "base-lzf.json", work / "base-lzf.h5")
    hi.run_worker(hi.peer_dir(), "write", work / "base-blosc.json", work / "base-blosc.h5")
    stored = {}
    for name in ("lzf", "blosc"):
        with h5py.File(work / f"base-{name}.h5", "r") as f:
            dset = f[name]
            stored[name] = []
            for i in range(dset.id.get_num_chunks()):
                info = dset.id.get_chunk_info(i)
                assert info.filter_mask == 0
                mask, raw = dset.id.read_direct_chunk(info.chunk_offset)
                path = work / f"{name}-{i}.chunk"
                path.write_bytes(raw)
                stored[name].append([list(info.chunk_offset), 0, str(path)])
    variants = {
        "lzf_no_size": ("lzf", [4, 0x0105, 0]),
        "lzf_no_values": ("lzf", []),
        "lzf_two_values": ("lzf", [4, 0x0105]),
        "blosc_four_values": ("blosc", [2, 2, 8, CHUNK * 8]),
        "blosc_no_chunk_size": ("blosc", [2, 2, 8, 0, 5, 1, 1]),
        "blosc_eight_values": ("blosc", [2, 2, 8, CHUNK * 8, 5, 1, 1, 77]),
    }
    specs = []
    for name, (source, cd) in variants.items():
        fid = hi.FILTER_LZF if source == "lzf" else hi.FILTER_BLOSC
        specs.append(dict(name=name, dtype="f8", shape=[3 * CHUNK - 1000], chunks=[CHUNK],
                          pipeline=[[fid, 1, cd]], stored=stored[source]))
    (work / "odd.json").write_text(json.dumps(specs))
    path = work / "odd.h5"
    report = hi.run_worker(work / "no-plugins", "direct-write", work / "odd.json", path, "--unregister-lzf")
    for spec in specs:
        assert report["datasets"][spec["name"]]["filters"][0]["cd_values"] == spec["pipeline"][0][2]
    expected = hi.make_array(base[0])
    return path, {name: expected for name in variants}


@pytest.mark.parametrize("side", ["ours", "theirs"])
def test_unusual_cd_values(work, odd_cd_file, side):
    path, expected = odd_cd_file
    lzf = [n for n in expected if n.startswith("lzf")]
    blosc = [n for n in expected if n.startswith("blosc")]
    if side == "ours":
        report, arrays = read_all(hi.plugin_dir(), path, lzf + blosc, work / "odd-ours.npz", unregister_lzf=True)
        assert {os.path.basename(p) for p in report["plugins"]} == set(hi.OUR_LIBS)
    else:  # h5py's built-in LZF and hdf5-blosc
        report, arrays = read_all(hi.peer_dir(), path, lzf + blosc, work / "odd-theirs.npz")
        assert hi.classify(report["plugins"]) == "peer"
    for name, values in expected.items():
        assert arrays[name].tobytes() == values.tobytes(), name
    for name in lzf + blosc:
        data, _ = hi.c_read(hi.plugin_dir(), path, name)
        assert data == expected[name].tobytes(), name


# --- h5repack through our plugins -------------------------------------------------------------


REPACK_SPECS = [
    dict(name="f8", dtype="f8", shape=[20000], chunks=[4096], filter=None),
    dict(name="compound_2d", dtype="compound", shape=[60, 70], chunks=[16, 32], filter=None),
]


@pytest.fixture(scope="module")
def plain_file(work):
    (work / "plain.json").write_text(json.dumps(REPACK_SPECS))
    path = work / "plain.h5"
    hi.run_worker(work / "no-plugins", "write", work / "plain.json", path)
    return path


def h5repack(plugin_path, *args):
    return hi.run_tool(plugin_path, ["h5repack", *map(str, args)])


def test_h5repack_applies_our_blosc_and_the_peer_reads_it(work, plain_file):
    out = work / "repacked-blosc.h5"
    h5repack(hi.plugin_dir(), "-f", "UD=32001,0,7,0,0,0,0,7,2,5", plain_file, out)
    names = [s["name"] for s in REPACK_SPECS]
    report, arrays = read_all(hi.peer_dir(), out, names, work / "repacked-blosc.npz")
    assert hi.classify(report["plugins"]) == "peer"
    for spec in REPACK_SPECS:
        assert arrays[spec["name"]].tobytes() == hi.make_array(spec).tobytes()
        [flt] = report["datasets"][spec["name"]]["filters"]
        assert flt["id"] == hi.FILTER_BLOSC
        assert tuple(flt["cd_values"]) == hi.expected_cd_values(dict(spec, filter="blosc", opts=(0, 0, 0, 0, 7, 2, 5)))
        assert {c["mask"] for c in report["datasets"][spec["name"]]["chunks"]} == {0}


def test_h5repack_applies_our_lzf_and_h5py_reads_it(work, plain_file):
    out = work / "repacked-lzf.h5"
    h5repack(hi.plugin_dir(), "-f", "UD=32000,1,0", plain_file, out)
    names = [s["name"] for s in REPACK_SPECS]
    report, arrays = read_all(work / "no-plugins", out, names, work / "repacked-lzf.npz")
    assert report["plugins"] == []  # h5py's built-in LZF
    for spec in REPACK_SPECS:
        assert arrays[spec["name"]].tobytes() == hi.make_array(spec).tobytes()
        [flt] = report["datasets"][spec["name"]]["filters"]
        assert tuple(flt["cd_values"]) == hi.expected_cd_values(dict(spec, filter="lzf"))
        assert {c["mask"] for c in report["datasets"][spec["name"]]["chunks"]} == {0}


def test_h5repack_rechunks_and_removes_through_our_blosc(work, plain_file):
    """A peer-compressed file re-chunked by h5repack through our plugin (our set_local must
    recompute the chunk size), then decompressed by h5repack through our plugin."""
    specs = [dict(s, filter="blosc", opts=hi.blosc_opts("zstd", 5, "byte")) for s in REPACK_SPECS]
    (work / "peer.json").write_text(json.dumps(specs))
    peer_file = work / "peer.h5"
    hi.run_worker(hi.peer_dir(), "write", work / "peer.json", peer_file)
    rechunked = work / "rechunked.h5"
    h5repack(hi.plugin_dir(), "-l", "/f8:CHUNK=1000", "-l", "/compound_2d:CHUNK=7x9", peer_file, rechunked)
    names = [s["name"] for s in specs]
    report, arrays = read_all(hi.peer_dir(), rechunked, names, work / "rechunked.npz")
    chunks = {"f8": [1000], "compound_2d": [7, 9]}
    for spec in specs:
        assert arrays[spec["name"]].tobytes() == hi.make_array(spec).tobytes()
        [flt] = report["datasets"][spec["name"]]["filters"]
        assert tuple(flt["cd_values"]) == hi.expected_cd_values(dict(spec, chunks=chunks[spec["name"]]))
    plain = work / "decompressed.h5"
    h5repack(hi.plugin_dir(), "-f", "NONE", rechunked, plain)
    report, arrays = read_all(work / "no-plugins", plain, names, work / "decompressed.npz")
    for spec in specs:
        assert report["datasets"][spec["name"]]["filters"] == []
        assert arrays[spec["name"]].tobytes() == hi.make_array(spec).tobytes()


# --- threads ---------------------------------------------------------------------------------


def test_blosc_nthreads(work):
    specs = [dict(name=f"{c}", dtype="f8", shape=[600_000], chunks=[300_000], filter="blosc",
                  opts=hi.blosc_opts(c, 5, "bit")) for c in ("blosclz", "lz4", "zstd")]
    (work / "threads.json").write_text(json.dumps(specs))
    path = work / "threads.h5"
    report = hi.run_worker(hi.plugin_dir(), "write", work / "threads.json", path, extra_env={"BLOSC_NTHREADS": "4"})
    assert hi.classify(report["plugins"]) == "ours"
    names = [s["name"] for s in specs]
    for side, plugin_path, threads in (("peer", hi.peer_dir(), "1"), ("ours", hi.plugin_dir(), "3"),
                                       ("ours", hi.plugin_dir(), "not-a-number")):
        report, arrays = read_all(plugin_path, path, names, work / "threads.npz", extra_env={"BLOSC_NTHREADS": threads})
        assert hi.classify(report["plugins"]) == side
        for spec in specs:
            assert arrays[spec["name"]].tobytes() == hi.make_array(spec).tobytes()


def frames_of(path, name):
    """The stored chunks of dataset `name`, raw (nothing is decoded in this process)."""
    import h5py

    with h5py.File(path, "r") as f:
        dset = f[name]
        out = []
        for i in range(dset.id.get_num_chunks()):
            info = dset.id.get_chunk_info(i)
            assert info.filter_mask == 0, (path, name, i)
            out.append(dset.id.read_direct_chunk(info.chunk_offset)[1])
        return out


def test_blosc_two_threads_every_complib(work):
    """1 MiB float32 chunks (the benchmark's): with BLOSC_NTHREADS=2 our frames are c-blosc's
    threaded frames (c-blosc's automatic blocks, so the peer's header and size; its threads may
    store the blocks in another order) for every complib, and the peer reads them; with one
    thread our frames are the peer's, byte for byte."""
    complibs = ("blosclz", "lz4", "lz4hc", "zlib", "zstd")
    specs = [dict(name=c, dtype="f4", shape=[600_000], chunks=[262_144], filter="blosc",
                  opts=hi.blosc_opts(c, 5, "byte")) for c in complibs]
    (work / "two-threads.json").write_text(json.dumps(specs))
    files = {}
    for side, plugin_path, threads in (("ours", hi.plugin_dir(), "2"), ("ours", hi.plugin_dir(), "1"),
                                       ("peer", hi.peer_dir(), "1")):
        files[side, threads] = work / f"two-threads-{side}-{threads}.h5"
        report = hi.run_worker(plugin_path, "write", work / "two-threads.json", files[side, threads],
                               extra_env={"BLOSC_NTHREADS": threads})
        assert hi.classify(report["plugins"]) == side
    for c in complibs:
        peer = frames_of(files["peer", "1"], c)
        threaded = frames_of(files["ours", "2"], c)
        assert [(len(f), f[:16]) for f in threaded] == [(len(f), f[:16]) for f in peer], c
        assert frames_of(files["ours", "1"], c) == peer, c
    names = list(complibs)
    for side, plugin_path, threads in (("peer", hi.peer_dir(), "1"), ("peer", hi.peer_dir(), "2"),
                                       ("ours", hi.plugin_dir(), "2")):
        report, arrays = read_all(plugin_path, files["ours", "2"], names, work / "two-threads.npz",
                                  extra_env={"BLOSC_NTHREADS": threads})
        assert hi.classify(report["plugins"]) == side
        for spec in specs:
            assert arrays[spec["name"]].tobytes() == hi.make_array(spec).tobytes(), (side, threads, spec["name"])


def blocks_by_index(frame):
    """A Blosc frame's stored blocks by block index, wherever c-blosc's threads put them."""
    nbytes, blocksize = (int.from_bytes(frame[i:i + 4], "little") for i in (4, 8))
    if frame[2] & 0x02:  # a copied frame: no blocks
        return [frame]
    starts = [int.from_bytes(frame[16 + 4 * i:20 + 4 * i], "little") for i in range(-(-nbytes // blocksize))]
    ends = sorted(starts) + [len(frame)]
    return [frame[s:ends[ends.index(s) + 1]] for s in starts]


def test_ours_and_the_peer_in_one_process_with_two_threads(work):
    """With BLOSC_NTHREADS=2 both plugins use the one libblosc's global API (its thread pool,
    its compressor setting). Alternating in one process, each writes c-blosc's frames for its
    own dataset's parameters (the other's header and blocks) and reads every dataset back; our
    plugin leaves c-blosc's two pool threads waiting for the next chunk, as the peer does."""
    complibs = ("blosclz", "lz4", "zstd", "lz4hc")
    specs = [dict(name=c, dtype="f4", shape=[600_000], chunks=[262_144], filter="blosc",
                  opts=hi.blosc_opts(c, 5, "byte")) for c in complibs]
    (work / "both.json").write_text(json.dumps(specs))
    path = work / "both.h5"
    libs = (os.path.join(hi.plugin_dir(), "libh5sparse_blosc.so"), os.path.join(hi.peer_dir(), "libH5Zblosc.so"))
    report = hi.run_worker(work / "no-plugins", "both-blosc", work / "both.json", path, *libs,
                           extra_env={"BLOSC_NTHREADS": "2"})
    assert hi.classify(report["plugins"]) == "both", report["plugins"]
    for reader, correct in report["correct"].items():
        assert all(correct.values()), (reader, correct)
    assert report["tasks"][1] >= report["tasks"][0] + 2, report["tasks"]
    for c in complibs:
        ours, peer = frames_of(path, f"ours/{c}"), frames_of(path, f"peer/{c}")
        assert [f[:16] for f in ours] == [f[:16] for f in peer], c
        assert [blocks_by_index(f) for f in ours] == [blocks_by_index(f) for f in peer], c
