"""h5sparse-tool on variable-length sparse datasets (issue 21), written by h5py through the
connector: strings (UTF-8 with multibyte characters and characters h5dump escapes, ASCII, ""),
int32 sequences (NULL: h5py writes an empty sequence as one), a compound with variable-length
members, a dense VarChunks dataset. The tool runs with neither the connector nor the plugin
path; what dump prints is checked against h5py through the connector and the connector-free
Python reader (h5sparse.read_vl_chunks), what show prints against the chunks' headers
(h5sparse.vl_chunk_info); a corrupt chunk is named."""
import os
import pickle
import re
import subprocess
import sys

os.environ["HDF5_VOL_CONNECTOR"] = "h5sparse under_vol=0;under_info={}"  # before h5py loads HDF5

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import h5sparse  # noqa: E402
from h5sparse import Blosc, Deflate, Shuffle  # noqa: E402
from tool_cli import BARE_ENV, expect_failure, parse_dataset_blocks, tool  # noqa: E402

NAMES = ["/s", "/a", "/v", "/c", "/d"]
RECORD = np.dtype([("n", "<i4"), ("name", h5py.string_dtype()), ("xs", h5py.vlen_dtype(np.float64))])


def write_corpus(path):
    with h5py.File(path, "w") as f:
        s = f.create_dataset("s", shape=(6, 5), chunks=(4, 4), dtype=h5py.string_dtype(), **h5sparse.Sparse())
        s[0, 0:2] = np.array(["ab", ""], dtype=object)
        s[1, 2] = 'q"u\\o\nt\t\x01 z\u00e9\u6f22\U0001f642'
        s[3, 1:5] = np.array(["w%d" % i for i in range(4)], dtype=object)
        s[5, 4] = "x"
        a = f.create_dataset("a", shape=(10,), chunks=(4,), dtype=h5py.string_dtype("ascii"),
                             **h5sparse.Sparse(lengths=Deflate(), data=Deflate()))
        a[3:5] = np.array([b"hi", b""], dtype=object)
        v = f.create_dataset("v", shape=(7,), chunks=(3,), dtype=h5py.vlen_dtype(np.int32),
                             **h5sparse.Sparse(data=[Shuffle(), Blosc("lz4", 5, "byte")]))
        v[0] = np.array([1, 2, -3], np.int32)
        v[2] = np.zeros(0, np.int32)
        v[5] = np.array([2**31 - 1], np.int32)
        c = f.create_dataset("c", shape=(4,), chunks=(2,), dtype=RECORD, **h5sparse.Sparse(values=Deflate()))
        c[1] = (7, "hey", np.array([1.5, -0.25]))
        c[2] = (-1, "", np.zeros(0))
        d = f.create_dataset("d", shape=(5,), chunks=(5,), dtype=h5py.string_dtype(),
                             **h5sparse.VarChunks(data=Blosc("lz4", 5, "byte")))
        d[...] = np.array(["a", "bb", "", "ccc", "d"], dtype=object)


READ_SCRIPT = r"""
import pickle, sys
import h5py, h5sparse
with h5py.File(sys.argv[1], "r") as f:
    out = {n: (h5sparse.read_vl_chunks(f[n]), h5sparse.vl_chunk_info(f[n])) for n in sys.argv[3:]}
with open(sys.argv[2], "wb") as o:
    pickle.dump(out, o)
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tool_vl")
    path = tmp / "vl.h5"
    write_corpus(path)
    subprocess.run([sys.executable, "-c", READ_SCRIPT, str(path), str(tmp / "read.pickle"), *NAMES], env=BARE_ENV,
                   check=True)
    with open(tmp / "read.pickle", "rb") as f:
        return path, pickle.load(f)


def quoted(raw):
    """A string as the tool prints it: h5dump -e's escapes, bytes above 0x7F as they are."""
    escapes = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
    out = []
    for ch in raw.decode("utf-8"):
        if ch in escapes:
            out.append(escapes[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\%03o" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def number(x):
    text = repr(float(x)) if isinstance(x, (float, np.floating)) else str(int(x))
    return text[:-2] if text.endswith(".0") else text


def printed(value):
    """What dump prints for a value of read_vl_chunks: NULL, quoted strings, (sequences), { compounds }."""
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return quoted(value)
    if isinstance(value, np.ndarray):
        return "(" + ", ".join(number(x) for x in value) + ")"
    if isinstance(value, tuple):
        return "{ " + ", ".join(printed(v) for v in value) + " }"
    return number(value)


def dumped_values(block, expected):
    """{coords: text} of a --sparse-data block: each DATA line holds the values of consecutive
    elements from its first coordinates, split with the expected texts' lengths (strings may
    hold ", ")."""
    values = {}
    for start, rest in re.findall(r"^\s+\(([0-9,]+)\) (.*?),?$", block, re.M):
        at = tuple(int(v) for v in start.split(","))
        while rest:
            text = expected.get(at, "")
            assert rest.startswith(text), (at, rest, text)
            values[at] = text
            rest = rest[len(text):]
            assert rest == "" or rest.startswith(", "), (at, rest)
            rest = rest[2:]
            at = at[:-1] + (at[-1] + 1,)
    return values


def test_dump_prints_the_values_of_the_python_reader_and_h5py(corpus):
    path, read = corpus
    blocks = parse_dataset_blocks(tool("dump", path, "--sparse-data").stdout)
    assert set(blocks) == set(NAMES)
    with h5py.File(path, "r") as f:
        for name in NAMES:
            elements = read[name][0]
            expected = {tuple(c): printed(v) for c, v in zip(elements.coords.tolist(), elements.values)}
            assert elements.coords.tolist() == h5sparse.get_defined(f[name]).tolist(), name
            assert dumped_values(blocks[name], expected) == expected, name
            data = f[name][...]  # through the connector: NULL reads as empty
            for c, v in zip(elements.coords.tolist(), elements.values):
                want = data[tuple(c)]
                if isinstance(v, bytes):
                    assert v == want, (name, c)
                elif isinstance(v, np.ndarray) or v is None:
                    assert np.array_equal(np.zeros(0) if v is None else v, want), (name, c)
    s = blocks["/s"]
    assert "(0,0) \"ab\", \"\"\n" in s and '(1,2) "q\\"u\\\\o\\nt\\t\\001 z\u00e9\u6f22\U0001f642"' in s
    assert "DEFINED_SPARSE_DATA BLOCK (3,1)-(3,4)" in s
    assert "(0) (1, 2, -3)\n" in blocks["/v"] and "(2) NULL\n" in blocks["/v"] and "(5) (2147483647)" in blocks["/v"]
    assert '(1) { 7, "hey", (1.5, -0.25) }, { -1, "", NULL }' in blocks["/c"]
    assert '(0) "a", "bb", "", "ccc", "d"' in blocks["/d"]
    assert "STRSIZE H5T_VARIABLE;" in s and "CSET H5T_CSET_UTF8;" in s and "CSET H5T_CSET_ASCII;" in blocks["/a"]
    assert "H5T_VLEN {" in blocks["/v"] and "H5T_STD_I32LE" in blocks["/v"]


def test_dump_locations_and_window(corpus):
    path, read = corpus
    blocks = parse_dataset_blocks(tool("dump", path, "-d", "/s", "-s", "0,1", "-c", "4,3").stdout)
    assert [line.strip() for line in blocks["/s"].splitlines() if "DEFINED_SPARSE_DATA" in line] == [
        "DEFINED_SPARSE_DATA BLOCK (3,1)-(3,3)", "DEFINED_SPARSE_DATA POINT (0,1), (1,2)"]


def test_show_reports_the_four_sections_of_every_chunk(corpus):
    path, read = corpus
    blocks = parse_dataset_blocks(tool("show", path, "--chunks").stdout)
    for name in NAMES:
        elements, infos = read[name]
        block = blocks[name]
        assert f"DEFINED_ELEMENTS {len(elements.coords)} OF " in block, name
        sections = re.findall(r"SECTION (\d) (\w+) \{\n\s+SIZE (\d+)", block)
        assert [(int(s), n) for s, n, _ in sections] == [
            (0, "SPARSE_SELECTION"), (1, "SPARSE_FIXED_DATA"), (2, "SPARSE_VL_LENGTHS"), (3, "SPARSE_VL_DATA")]
        for s, (_, _, size) in enumerate(sections):
            assert int(size) == sum(i.section_size[s] for i in infos), (name, s)
        lines = re.findall(r"CHUNK \(([0-9,]+)\) \{ ADDRESS (\d+) SIZE (\d+) DEFINED \d+ (.*) \}", block)
        assert len(lines) == len(infos), name
        by_offset = {tuple(int(v) for v in offset.split(",")): (int(a), int(z), rest) for offset, a, z, rest in lines}
        for info in infos:
            address, size, rest = by_offset[info.offset]
            assert (address, size) == (info.addr, info.size)
            found = re.findall(r"SECTION (\d) \{ (?:ENCODING \w+ )?SIZE (\d+) OF (\d+) MASK 0x(\w+) \}", rest)
            assert [(int(a), int(b), int(c), int(m, 16)) for a, b, c, m in found] == [
                (s, info.section_size[s], info.section_orig_size[s], info.filter_mask[s]) for s in range(4)], name
    assert "FILLVALUE {\n      VALUE  NULL\n   }" in blocks["/s"]
    assert "ENCODING all" in blocks["/d"] and "FILTER_ID 32001" in blocks["/v"]


def test_stat_counts_defined_elements_and_section_filters(corpus):
    path, read = corpus
    out = tool("stat", path).stdout
    assert f"Defined elements: {sum(len(read[n][0].coords) for n in NAMES)} of 56" in out
    assert "GZIP filter: 2" in out and "USER-DEFINED filter: 2" in out and "SHUFFLE filter: 1" in out


def test_corrupt_chunk_is_named_and_repack_refuses(corpus, tmp_path):
    path, _ = corpus
    broken = tmp_path / "broken.h5"
    broken.write_bytes(path.read_bytes())
    with h5py.File(broken, "r") as f:
        info = f["s"].id.get_chunk_info_by_coord((0, 0))
    with open(broken, "r+b") as f:  # the last byte of section 3 (data)
        f.seek(info.byte_offset + info.size - 1)
        byte = f.read(1)[0]
        f.seek(info.byte_offset + info.size - 1)
        f.write(bytes([byte ^ 0x40]))
    for command in ("show", "dump"):
        expect_failure(tool(command, broken, "-d", "/s", check=False),
                       "dataset '/s', chunk at (0, 0): section 3 (data) stored-bytes checksum mismatch", "corrupt data")
    expect_failure(tool("repack", "--to", "dense", "-d", "/s", path, tmp_path / "dense.h5", check=False),
                   "/s holds variable-length values, which only dump, show and stat read")
