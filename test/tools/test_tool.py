"""h5sparse-tool on a corpus of real files. Sparse datasets are written through the connector
(several pipelines, types, ranks, fill values, nested groups); the tool runs with neither the
connector nor HDF5_PLUGIN_PATH, and what it prints is checked against what the connector's
get_defined, h5py, h5dump and an independent Python parse of the stored chunks say."""
import os
import pathlib
import re
import struct
import subprocess
import sys

os.environ["HDF5_VOL_CONNECTOR"] = "h5sparse under_vol=0;under_info={}"  # before h5py loads HDF5

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import h5sparse  # noqa: E402
from tool_cli import BARE_ENV, PLAIN_ENV, TOOL, expect_failure, parse_dataset_blocks, tool  # noqa: E402

RFC_FIGURE = np.zeros((13, 10), np.int32)
RFC_FIGURE[2:5, 2:8] = np.arange(18).reshape(3, 6) * 3 + 66
RFC_FIGURE[6, 0:3] = [100, 0, -100]
RFC_FIGURE[5, 9], RFC_FIGURE[11, 1], RFC_FIGURE[12, 8] = 2, 1, 3
RFC_MASK = RFC_FIGURE != 0
RFC_MASK[6, 1] = True  # defined although 0, as in the RFC

# name: dtype, shape, chunks, maxshape, fill, Sparse(...) arguments, FILTERS lines per section
SPECS = {
    "/rfc": (np.int32, (13, 10), (5, 4), None, None, dict(selection=h5sparse.Deflate(9)),
             (["COMPRESSION DEFLATE { LEVEL 9 }"], ["NONE"])),
    "/grp/f4_blosc": (np.float32, (60, 70), (16, 16), None, -1.5,
                      dict(values=h5sparse.Blosc("zstd", 5, "bit")),
                      (["NONE"], ["FILTER_ID 32001", "PARAMS { 0 0 0 0 5 2 5 }"])),
    "/grp/sub/u1_lzf": (np.uint8, (20, 20, 20), (8, 8, 8), None, None,
                        dict(values=[h5sparse.Shuffle(), h5sparse.LZF()]),
                        (["NONE"], ["PREPROCESSING SHUFFLE", "FILTER_ID 32000"])),
    "/i8_runs": (np.int64, (1000,), (64,), (None,), 7, dict(selection=h5sparse.Deflate(1), values=h5sparse.Deflate(6)),
                 (["COMPRESSION DEFLATE { LEVEL 1 }"], ["COMPRESSION DEFLATE { LEVEL 6 }"])),
    "/be_i2": (np.dtype(">i2"), (30, 40), (7, 9), (None, 40), None, dict(), (["NONE"], ["NONE"])),
    "/compound": (np.dtype([("x", "<i4"), ("y", "<f8")]), (50,), (16,), None, None, dict(), (["NONE"], ["NONE"])),
}


def masks_and_values(rng):
    out = {}
    for name, (dtype, shape, *_rest) in SPECS.items():
        if name == "/rfc":
            out[name] = (RFC_MASK, RFC_FIGURE)
            continue
        mask = rng.random(shape) < 0.08
        if name == "/grp/f4_blosc":
            mask[10:20, 30:45] = True  # a rectangle across chunk borders
        if name == "/i8_runs":
            mask[:] = False
            for start in rng.integers(0, 990, 25):
                mask[start:start + rng.integers(1, 10)] = True
        values = np.zeros(shape, dtype)
        if np.dtype(dtype).names:
            values["x"] = np.arange(values.size)
            values["y"] = values["x"] / 3
        elif np.dtype(dtype).kind == "f":
            values[...] = rng.standard_normal(shape) * 1e3
        else:
            values[...] = rng.integers(-100 if np.dtype(dtype).kind == "i" else 0, 100, shape)
        out[name] = (mask, values)
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Sparse datasets written point by point through the connector, plus dense ones."""
    path = tmp_path_factory.mktemp("corpus") / "corpus.h5"
    rng = np.random.default_rng(11)
    expected = {}
    with h5py.File(path, "w") as f:
        for name, (mask, values) in masks_and_values(rng).items():
            dtype, shape, chunks, maxshape, fill = SPECS[name][:5]
            kwargs = {} if fill is None else {"fillvalue": fill}
            d = f.create_dataset(name, shape=shape, dtype=dtype, chunks=chunks, maxshape=maxshape, **kwargs,
                                 **h5sparse.Sparse(**SPECS[name][5]))
            for index in np.argwhere(mask):
                d[tuple(index)] = values[tuple(index)]
        f.create_dataset("dense", data=np.arange(100), chunks=(10,))
        f.create_dataset("grp/contiguous", data=np.ones((4, 5)))
        for name in SPECS:
            d = f[name]
            expected[name] = (set(map(tuple, h5sparse.get_defined(d).tolist())), d[...])
    return path, expected


def coords(text):
    return tuple(int(v) for v in text.strip("()").split(","))


def expand_locations(block):
    """Elements named by the BLOCK/POINT lines; asserts that no element is named twice."""
    seen, count = set(), 0
    for kind, rest in re.findall(r"DEFINED_SPARSE_DATA (BLOCK|POINT) (.*)", block):
        if kind == "BLOCK":
            lo, hi = (coords(c) for c in rest.split("-"))
            ranges = [range(a, b + 1) for a, b in zip(lo, hi)]
            box = set(np.ndindex(*[len(r) for r in ranges]))
            for offset in box:
                seen.add(tuple(r[i] for r, i in zip(ranges, offset)))
            count += len(box)
        else:
            points = [coords(p) for p in re.findall(r"\([0-9,]+\)", rest)]
            seen.update(points)
            count += len(points)
    assert count == len(seen), "an element is listed twice"
    return seen


def test_dump_locations_match_get_defined(corpus):
    path, expected = corpus
    blocks = parse_dataset_blocks(tool("dump", path, "--sparse-locations").stdout)
    assert set(blocks) == set(SPECS)  # every sparse dataset, none of the dense ones
    for name, (defined, _) in expected.items():
        assert expand_locations(blocks[name]) == defined, name
    rfc = [line.strip() for line in blocks["/rfc"].splitlines() if "DEFINED_SPARSE_DATA" in line]
    assert rfc == ["DEFINED_SPARSE_DATA BLOCK (2,2)-(4,7)", "DEFINED_SPARSE_DATA BLOCK (6,0)-(6,2)",
                   "DEFINED_SPARSE_DATA POINT (5,9), (11,1), (12,8)"]


def header_lines(path, name):
    out = subprocess.run(["h5dump", "-H", "-d", name, str(path)], capture_output=True, text=True, env=PLAIN_ENV,
                         check=True).stdout
    return [line.strip() for line in out.splitlines()]


def test_dump_data_values_match_h5py(corpus):
    path, expected = corpus
    blocks = parse_dataset_blocks(tool("dump", path, "--sparse-data").stdout)
    for name, (defined, dense) in expected.items():
        block = blocks[name]
        head = [line.strip() for line in block.splitlines()[:2]]
        assert head[0] in header_lines(path, name) and head[1] in header_lines(path, name), head
        values = {}
        for start, row in re.findall(r"^\s+(\([0-9,]+\)) (.*?),?$", block, re.M):
            first = coords(start)
            items = re.findall(r"\{[^}]*\}|[^,\s][^,]*", row)
            for k, item in enumerate(items):
                values[first[:-1] + (first[-1] + k,)] = item.strip()
        assert set(values) == defined, name
        for index, text in values.items():
            want = dense[index]
            if dense.dtype.names:
                x, y = (v.strip() for v in text.strip("{} ").split(","))
                assert (int(x), float(y)) == (want["x"], want["y"]), (name, index)
            elif dense.dtype.kind == "f":
                assert dense.dtype.type(text) == want, (name, index, text)  # shortest exact form
            else:
                assert int(text) == want, (name, index)


BENCH_SPARSE = pathlib.Path(__file__).resolve().parents[2] / "bench" / "sparse"  # chunkfmt.py: docs/FORMAT.md in Python
CHUNK_INFO_SCRIPT = r"""
import h5py, json, struct, sys
sys.path.insert(0, sys.argv.pop(1))
import chunkfmt
out = {}
with h5py.File(sys.argv[1], "r") as f:
    for name in sys.argv[2:]:
        d = f[name]
        chunks = []
        for i in range(d.id.get_num_chunks()):
            info = d.id.get_chunk_info(i)
            raw = d.id.read_direct_chunk(info.chunk_offset)[1]
            parsed = chunkfmt.parse_chunk(raw)
            # A mask the file does not store (no filter ran: every filter skipped) is None.
            sections = [(s.stored_size, s.unfiltered_size,
                         None if s.filter_mask == chunkfmt.ALL_SKIPPED else s.filter_mask) for s in parsed]
            unfiltered = parsed[0].filter_mask in (0, chunkfmt.ALL_SKIPPED)
            encoding = parsed[0].data[0] if unfiltered and name != "/rfc" and name != "/i8_runs" else None
            chunks.append([list(info.chunk_offset), info.byte_offset, info.size, sections, encoding])
        out[name] = chunks
print(json.dumps(out))
"""


def test_show_reports_what_is_stored(corpus):
    import json
    path, expected = corpus
    stored = json.loads(subprocess.run([sys.executable, "-c", CHUNK_INFO_SCRIPT, str(BENCH_SPARSE), str(path), *SPECS],
                                       capture_output=True, text=True, env=PLAIN_ENV, check=True).stdout)
    blocks = parse_dataset_blocks(tool("show", path, "--chunks").stdout)
    encodings = {0: "empty", 1: "all", 2: "bitmap", 3: "offsets", 4: "runs", 5: "blocks", 6: "rice_offsets", 7: "elias_fano"}
    for name, (defined, dense) in expected.items():
        block, chunks = blocks[name], stored[name]
        dtype, shape, chunk_dims = SPECS[name][:3]
        assert f"STRUCTURED_CHUNK ( {', '.join(map(str, chunk_dims))} )" in block
        assert f"DEFINED_ELEMENTS {len(defined)} OF {int(np.prod(shape))}" in block
        grid = int(np.prod([-(-s // c) for s, c in zip(shape, chunk_dims)]))
        assert f"STORED_CHUNKS {len(chunks)} OF {grid}" in block
        total = sum(c[2] for c in chunks)
        ratio = dense.size * dense.dtype.itemsize / total
        assert f"\n      SIZE {total} ({ratio:.3f}:1 COMPRESSION)\n" in block, name
        sections = re.findall(r"SECTION (\d) \w+ \{\n\s+SIZE (\d+)(?: \(([\d.]+):1 COMPRESSION\))?\n\s+FILTERS \{\n(.*?)\n\s+\}\n",
                              block, re.S)
        assert len(sections) == 2
        for s, (number, size, ratio_text, filters) in enumerate(sections):
            stored_size = sum(c[3][s][0] for c in chunks)
            unfiltered = sum(c[3][s][1] for c in chunks)
            assert int(number) == s and int(size) == stored_size, name
            assert float(ratio_text) == pytest.approx(unfiltered / stored_size, abs=6e-4)
            for line in SPECS[name][6][s]:
                assert line in filters, (name, s, line)
        lines = re.findall(r"CHUNK (\([0-9,]+\)) \{ ADDRESS (\d+) SIZE (\d+) DEFINED (\d+) SECTION 0 \{ ENCODING (\w+) "
                           r"SIZE (\d+) OF (\d+) MASK 0x(\w+) \} SECTION 1 \{ SIZE (\d+) OF (\d+) MASK 0x(\w+) \} \}", block)
        assert len(lines) == len(chunks)
        by_offset = {coords(line[0]): line for line in lines}
        for offset, address, size, sections, encoding in chunks:
            line = by_offset[tuple(offset)]
            assert (int(line[1]), int(line[2])) == (address, size)
            for s, at in ((0, 5), (1, 8)):
                stored_size, unfiltered, mask = sections[s]
                assert [int(v) for v in line[at:at + 2]] == [stored_size, unfiltered]
                # No mask in the file: no filter ran, the stored bytes are the section's.
                assert int(line[at + 2], 16) == mask if mask is not None else stored_size == unfiltered
            if encoding is not None:
                assert line[4] == encodings[encoding]
            inside = [p for p in defined if all(o <= c < o + k for c, o, k in zip(p, offset, chunk_dims))]
            assert int(line[3]) == len(inside)


def test_stat_counts_sparse_layouts_and_section_filters(corpus):
    path, _ = corpus
    out = tool("stat", path).stdout
    assert "Dataset layout counts[STRUCTURED CHUNK SPARSE]: 6" in out
    assert "Dataset layout counts[CHUNKED]: 1" in out and "Dataset layout counts[CONTIG]: 1" in out
    # deflate: /rfc and /i8_runs (both sections, counted once); shuffle: u1_lzf; user: blosc, lzf
    assert "GZIP filter: 2" in out and "SHUFFLE filter: 1" in out and "USER-DEFINED filter: 2" in out
    assert "NO filter: 4" in out


def make_dense_corpus(path):
    rng = np.random.default_rng(3)
    with h5py.File(path, "w") as f:
        a = np.zeros((200, 300), "f8")
        m = rng.random(a.shape) < 0.05
        a[m] = rng.standard_normal(int(m.sum()))
        a[0, 0] = -0.0  # differs from the fill value byte for byte: stays defined
        f.create_dataset("x", data=a, chunks=(50, 64), compression="gzip")
        f.attrs["title"] = "corpus"
        g = f.create_group("grp/sub")
        g.attrs["n"] = np.arange(3)
        b = np.full((40, 30, 20), 7, ">i2")
        b[3:9, 4:6, :] = 1
        b[30, 2, 19] = -4
        g.create_dataset("y", data=b, fillvalue=7).attrs["units"] = "m"
        f.create_dataset("contig", data=(np.arange(1000) % 7 == 0).astype("u1"))
        f.create_dataset("blosc", data=np.where(rng.random((64, 64)) < 0.1, 1.5, 0).astype("f4"), chunks=(16, 16),
                         compression=32001, compression_opts=(0, 0, 0, 0, 5, 1, 1))
        f.create_dataset("strings", data=np.array([b"a", b"bc"], "S2"))
        f.create_dataset("scalar", data=3.0)
        f["soft"] = h5py.SoftLink("/grp/sub/y")
        f["hard"] = f["x"]


def h5diff(a, b):
    return subprocess.run(["h5diff", str(a), str(b)], capture_output=True, text=True, env=PLAIN_ENV)


def test_dense_sparse_dense_roundtrip_is_identical(tmp_path):
    dense, sparse, back = tmp_path / "dense.h5", tmp_path / "sparse.h5", tmp_path / "back.h5"
    make_dense_corpus(dense)
    report = tool("repack", "--to", "sparse", dense, sparse).stdout
    assert "/hard: dense -> sparse" in report and "/strings: dense -> sparse" in report
    assert "/scalar" not in report  # cannot be chunked: copied as it is
    with h5py.File(sparse, "r") as f, h5py.File(dense, "r") as g:
        for name in ("x", "grp/sub/y", "contig", "blosc", "strings"):
            assert f[name].id.get_create_plist().get_filter(0)[0] == 45100, name
            data, itemsize = g[name][...], g[name].dtype.itemsize
            fill = np.array(g[name].fillvalue, g[name].dtype).tobytes()
            as_bytes = np.frombuffer(data.tobytes(), np.uint8).reshape(data.shape + (itemsize,))
            want = set(map(tuple, np.argwhere((as_bytes != np.frombuffer(fill, np.uint8)).any(axis=-1)).tolist()))
            assert set(map(tuple, h5sparse.get_defined(f[name]).tolist())) == want, name
        assert (0, 0) in set(map(tuple, h5sparse.get_defined(f["x"]).tolist()))  # -0.0 differs from 0.0
        assert f.get("soft", getlink=True).path == "/grp/sub/y" and f["x"].id == f["hard"].id
        assert f.attrs["title"] == "corpus" and f["grp/sub"].attrs["n"].tolist() == [0, 1, 2]
        assert f["grp/sub/y"].attrs["units"] == "m" and f["grp/sub/y"].fillvalue == 7
        assert f["x"].id.get_create_plist().get_filter(0)[0] == 45100
    assert h5diff(dense, sparse).returncode == 0  # read through the filter plugin
    tool("repack", "--to", "dense", sparse, back)
    result = h5diff(dense, back)
    assert result.returncode == 0, result.stdout
    with h5py.File(back, "r") as f:
        assert f["x"].compression == "gzip" and f["x"].chunks == (50, 64)
        assert f["blosc"].id.get_create_plist().get_filter(0)[0] == 32001


def test_sparse_dense_sparse_keeps_the_defined_set_through_a_dump(corpus, tmp_path):
    path, expected = corpus
    dense, again = tmp_path / "dense.h5", tmp_path / "again.h5"
    tool("repack", "--to", "dense", path, dense)
    listing = tmp_path / "defined.txt"
    listing.write_text(tool("dump", path).stdout)
    tool("repack", "--to", "sparse", "--defined", listing, dense, again)  # the list names the datasets
    assert h5diff(path, again).returncode == 0
    with h5py.File(again, "r") as f:
        for name, (defined, values) in expected.items():
            assert set(map(tuple, h5sparse.get_defined(f[name]).tolist())) == defined, name
            assert np.array_equal(f[name][...], values)
        assert f["dense"].chunks == (10,) and f["dense"].id.get_create_plist().get_nfilters() == 0


def test_exclude_value_becomes_the_fill_value(tmp_path):
    dense, sparse = tmp_path / "dense.h5", tmp_path / "sparse.h5"
    data = np.full((50, 60), 5, np.int32)
    data[10:20, 10:12] = 9
    with h5py.File(dense, "w") as f:
        f.create_dataset("v", data=data)
    out = tool("repack", "--to", "sparse", "--exclude", "5", "--chunk", "16x16", "--values-filter",
               "complib=gzip,complevel=4", dense, sparse).stdout
    assert "/v: dense -> sparse, 20 of 3,000 elements defined" in out
    with h5py.File(sparse, "r") as f:
        d = f["v"]
        assert d.fillvalue == 5 and d.chunks == (16, 16)
        assert set(map(tuple, h5sparse.get_defined(d).tolist())) == {(r, c) for r in range(10, 20) for c in (10, 11)}
    assert "COMPRESSION DEFLATE { LEVEL 4 }" in tool("show", sparse).stdout
    assert h5diff(dense, sparse).returncode == 0


def test_version_names_the_kernels_this_cpu_allows():
    # The extensions come from CPUID, not from a compiler runtime's table (the wheel's leaves it
    # empty), so they follow the CPU's flags as the kernel lists them; H5SPARSE_CPU caps them.
    # PDEP counts where it is not microcoded: AMD before family 19h (Zen 3) runs it in microcode.
    cpu = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            cpu.setdefault(key.strip(), value.strip())
    flags = set(cpu.get("flags", "").split())
    slow_pdep = cpu.get("vendor_id") in ("AuthenticAMD", "HygonGenuine") and int(cpu.get("cpu family", 0)) < 0x19
    needs = {"popcnt": {"popcnt"}, "bmi2": {"bmi1", "bmi2"}, "pdep": {"bmi1", "bmi2", "popcnt"}, "avx2": {"avx2", "popcnt"}}
    expected = [name for name, need in needs.items() if need <= flags and not (name == "pdep" and slow_pdep)]
    lines = tool("--version").stdout.splitlines()
    assert lines[0].startswith("h5sparse-tool ")
    assert lines[1] == "kernels: " + (" ".join(expected) or "baseline")
    capped = subprocess.run([TOOL, "--version"], capture_output=True, text=True, env={**BARE_ENV, "H5SPARSE_CPU": "baseline"})
    assert capped.stdout.splitlines()[1] == "kernels: baseline"


def test_progress_only_when_asked_or_on_a_terminal(tmp_path):
    dense, sparse = tmp_path / "dense.h5", tmp_path / "sparse.h5"
    with h5py.File(dense, "w") as f:
        f.create_dataset("v", data=np.arange(4096.0).reshape(64, 64))
    quiet = tool("repack", "--to", "sparse", "--chunk", "8x8", dense, sparse)
    assert quiet.stderr == ""
    loud = subprocess.run([TOOL, "repack", "--to", "sparse", "--chunk", "8x8", "--progress", str(dense), str(sparse)],
                          capture_output=True, env=BARE_ENV, check=True)
    assert loud.stderr.startswith(b"\rrepack /v: ") and loud.stderr.endswith(b"\rrepack /v: 100% (64/64 chunks)\n")


def test_h5repack_user_defined_filter_converts_without_connector(tmp_path):
    """h5repack -f UD=45100 makes a dense dataset sparse with only the plugin path (also in
    test/sparse/test_sparse_no_connector.py); the tool, also without the connector, sees it."""
    dense, sparse = tmp_path / "dense.h5", tmp_path / "sparse.h5"
    data = np.zeros((120, 90), np.int16)
    data[::7, ::11] = np.arange(1, data[::7, ::11].size + 1).reshape(data[::7, ::11].shape)
    with h5py.File(dense, "w") as f:
        f.create_dataset("x", data=data, chunks=(40, 30))
    subprocess.run(["h5repack", "-f", "x:UD=45100,0,3,1,0,0", str(dense), str(sparse)], env=PLAIN_ENV, check=True)
    block = parse_dataset_blocks(tool("dump", sparse).stdout)["/x"]
    assert expand_locations(block) == set(map(tuple, np.argwhere(data != 0).tolist()))
    assert "FILL_IS_UNDEFINED TRUE" in tool("show", sparse).stdout


def test_errors_are_clear_and_leave_files_alone(corpus, tmp_path):
    path, _ = corpus
    expect_failure(tool("show", path, "-d", "/dense", check=False), "/dense is not a sparse dataset (layout CHUNKED")
    expect_failure(tool("dump", path, "-d", "/nope", check=False), "no object /nope")
    expect_failure(tool("show", tmp_path / "missing.h5", check=False), "no such file")
    (tmp_path / "text.h5").write_text("not hdf5")
    expect_failure(tool("stat", tmp_path / "text.h5", check=False), "not an HDF5 file")
    expect_failure(tool("show", path, "--frob", check=False), "option --frob does not apply to show")
    expect_failure(tool("frob", check=False), 'unknown command "frob"')
    expect_failure(tool("dump", path, "--sparse-data", "--sparse-locations", check=False), "choose one")
    out = tmp_path / "out.h5"
    out.write_bytes(b"previous output")
    expect_failure(tool("repack", "--to", "sparse", "--chunk", "0x4", path, out, check=False), "--chunk wants")
    expect_failure(tool("repack", "--to", "dense", path, path, check=False), "must differ")
    listing = tmp_path / "l.txt"
    listing.write_text("DEFINED_SPARSE_DATA BLOCK (0)-(200)\n")
    expect_failure(tool("repack", "--to", "sparse", "-d", "/dense", "--defined", listing, path, out, check=False),
                   "(0)-(200) lies outside /dense's extent ( 100 )")
    listing.write_text("DEFINED_SPARSE_DATA BLOCK (0)-(2)\n")
    expect_failure(tool("repack", "--to", "sparse", "--defined", listing, path, out, check=False), "need -d DATASET")
    listing.write_text("DEFINED_SPARSE_DATA BLOCK (9)-(2)\n")
    expect_failure(tool("repack", "--to", "sparse", "--defined", listing, path, out, check=False), "l.txt:1")
    expect_failure(tool("repack", "--to", "dense", "-d", "/dense", path, out, check=False), "not a sparse dataset")
    assert out.read_bytes() == b"previous output"
    assert not [p for p in os.listdir(tmp_path) if ".partial-" in p]


def test_corrupt_chunk_is_named(corpus, tmp_path):
    path, _ = corpus
    broken = tmp_path / "broken.h5"
    broken.write_bytes(path.read_bytes())
    script = ("import h5py, sys\nd = h5py.File(sys.argv[1], 'r')['/grp/f4_blosc']\n"
              "i = d.id.get_chunk_info(1)\nprint(i.byte_offset + i.size - 3, i.chunk_offset)\n")
    where = subprocess.run([sys.executable, "-c", script, str(broken)], capture_output=True, text=True,
                           env=PLAIN_ENV, check=True).stdout.split(None, 1)
    with open(broken, "r+b") as f:
        f.seek(int(where[0]))
        byte = f.read(1)
        f.seek(int(where[0]))
        f.write(bytes([byte[0] ^ 0x40]))
    chunk = "(" + ", ".join(re.findall(r"\d+", where[1])) + ")"
    for command in ("show", "dump"):
        expect_failure(tool(command, broken, "-d", "/grp/f4_blosc", check=False),
                       f"dataset '/grp/f4_blosc', chunk at {chunk}: section 1 (values) stored-bytes checksum mismatch", "corrupt data")


STORED_CHUNKS_SCRIPT = r"""
import h5py, sys
with h5py.File(sys.argv[1], "r") as f:
    d = f[sys.argv[2]]
    for i in range(d.id.get_num_chunks()):
        info = d.id.get_chunk_info(i)
        mask, raw = d.id.read_direct_chunk(info.chunk_offset)
        print(info.chunk_offset, mask, raw.hex())
"""


def stored_chunks(path, name):
    return subprocess.run([sys.executable, "-c", STORED_CHUNKS_SCRIPT, str(path), name], capture_output=True,
                          text=True, env=PLAIN_ENV, check=True).stdout.splitlines()


def test_repacked_chunks_are_the_connectors_bytes(tmp_path):
    """The tool encodes with the connector's encoder: same data, same pipeline, same chunks."""
    rng = np.random.default_rng(5)
    data = np.where(rng.random((300, 200)) < 0.1, rng.standard_normal((300, 200)), 0).astype("f4")
    written, dense, repacked = tmp_path / "written.h5", tmp_path / "dense.h5", tmp_path / "repacked.h5"
    with h5py.File(written, "w") as f:
        f.create_dataset("x", shape=data.shape, dtype="f4", chunks=(64, 64),
                         **h5sparse.Sparse(fill_is_undefined=True, values=h5sparse.Blosc("lz4", 5, "byte")))[...] = data
    with h5py.File(dense, "w") as f:
        f.create_dataset("x", data=data, chunks=(64, 64))
    tool("repack", "--to", "sparse", "--fill-is-undefined", "--values-filter",
         "complib=blosc:lz4,complevel=5,shuffle=byte", dense, repacked)
    connector_chunks = stored_chunks(written, "x")
    assert len(connector_chunks) == 20
    assert stored_chunks(repacked, "x") == connector_chunks


def test_installed_tool_finds_its_plugins(tmp_path):
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", os.path.dirname(os.environ["H5SPARSE_BIN_DIR"]), "--prefix", str(prefix)],
                   capture_output=True, check=True)
    installed = prefix / "bin" / "h5sparse-tool"
    dense, sparse = tmp_path / "dense.h5", tmp_path / "sparse.h5"
    with h5py.File(dense, "w") as f:
        f.create_dataset("x", data=np.eye(20))
    env = {k: v for k, v in BARE_ENV.items() if not k.startswith("H5SPARSE_")}
    subprocess.run([str(installed), "repack", "--to", "sparse", str(dense), str(sparse)], env=env, check=True,
                   capture_output=True)
    out = subprocess.run([str(installed), "dump", str(sparse)], env=env, check=True, capture_output=True, text=True)
    assert expand_locations(parse_dataset_blocks(out.stdout)["/x"]) == {(i, i) for i in range(20)}
    assert "See also: h5sparse-tool" in subprocess.run([str(prefix / "bin" / "h5plugin-config"), "--help"],
                                                       capture_output=True, text=True, check=True).stdout


def test_chunk_written_around_the_filter_reads_as_dense(tmp_path):
    """A chunk stored with filter mask bit 0 set holds raw dense bytes, which HDF5 reads as they
    are: the tool reports it as such and counts every element defined, as a reader sees it."""
    path = tmp_path / "raw.h5"
    script = ("import h5py, numpy as np, sys, h5sparse\n"
              "with h5py.File(sys.argv[1], 'w') as f:\n"
              "    d = f.create_dataset('x', shape=(8, 8), dtype='<i2', chunks=(4, 4), **h5sparse.Sparse())\n"
              "    d.id.write_direct_chunk((4, 0), np.arange(16, dtype='<i2').tobytes(), filter_mask=1)\n"
              "with h5py.File(sys.argv[1], 'r') as f:\n"  # read after reopening: HDF5 then skips the filter
              "    assert (f['x'][4:8, 0:4] == np.arange(16).reshape(4, 4)).all()\n")
    subprocess.run([sys.executable, "-c", script, str(path)], env=PLAIN_ENV, check=True)
    show = tool("show", path, "--chunks").stdout
    assert "DEFINED_ELEMENTS 16 OF 64" in show and "CHUNK (4,0) {" in show and "UNFILTERED_DENSE" in show
    data = parse_dataset_blocks(tool("dump", path, "--sparse-data").stdout)["/x"]
    assert "DEFINED_SPARSE_DATA BLOCK (4,0)-(7,3)" in data and "(7,0) 12, 13, 14, 15" in data


def test_dump_window_selects_a_box(corpus):
    path, expected = corpus
    defined, _ = expected["/grp/sub/u1_lzf"]
    out = tool("dump", path, "-d", "/grp/sub/u1_lzf", "-s", "3,5,0", "-c", "10,4,20", "--sparse-data").stdout
    want = {p for p in defined if 3 <= p[0] < 13 and 5 <= p[1] < 9}
    assert want and expand_locations(parse_dataset_blocks(out)["/grp/sub/u1_lzf"]) == want
    expect_failure(tool("dump", path, "-d", "/rfc", "-s", "3", check=False), "--start and --count need 2 values")
    expect_failure(tool("dump", path, "-d", "/rfc", "-s", "3,3", "-c", "11,1", check=False), "outside /rfc's extent")
