"""`h5dump -p -H` shows our filters exactly as it shows the peers': for datasets written with
equal settings by the peer and by us, the FILTERS blocks (FILTER_ID, COMMENT, PARAMS) are
identical, and so is the rest of the header apart from the compressed SIZE.

Pairs: h5py + hdf5-blosc vs h5py + our Blosc; PyTables' built-in Blosc vs our Blosc (through
h5py, same chunks and options); h5py's built-in LZF vs our LZF. Each file is written, and
dumped, by a process that sees only its own side's plugins.
"""
import itertools
import json
import re

import pytest

import h5interop as hi

BLOSC_SPECS = [
    dict(name=f"{comp}_{shuffle}_{dtype}", dtype=dtype, shape=shape, chunks=chunks, filter="blosc",
         opts=hi.blosc_opts(comp, clevel, shuffle))
    for (comp, clevel), shuffle, (dtype, shape, chunks) in itertools.product(
        [("blosclz", 5), ("lz4", 1), ("lz4hc", 9), ("snappy", 5), ("zlib", 3), ("zstd", 0)],
        ["none", "byte", "bit"],
        [("f8", [1000], [300]), ("i2", [60, 70], [16, 32]), ("compound", [500], [128])])
] + [
    dict(name="array3", dtype="array3", shape=[500], chunks=[100], filter="blosc", opts=hi.blosc_opts("lz4", 5, "byte")),
    dict(name="bigcompound", dtype="bigcompound", shape=[100], chunks=[30], filter="blosc",
         opts=hi.blosc_opts("zstd", 5, "bit")),
    dict(name="u1_3d", dtype="u1", shape=[5, 6, 70], chunks=[2, 3, 64], filter="blosc",
         opts=hi.blosc_opts("blosclz", 9, "none")),
    dict(name="big_chunk", dtype="f4", shape=[1_100_000], chunks=[1_100_000], filter="blosc",
         opts=hi.blosc_opts("lz4", 5, "byte")),
]

LZF_SPECS = [
    dict(name="lzf_f8", dtype="f8", shape=[10000], chunks=[4096], filter="lzf"),
    dict(name="lzf_i2_shuffle", dtype="i2", shape=[300, 200], chunks=[64, 48], filter="lzf", hdf5_shuffle=True),
    dict(name="lzf_compound", dtype="compound", shape=[3000], chunks=[1024], filter="lzf"),
    dict(name="lzf_array3", dtype="array3", shape=[500], chunks=[100], filter="lzf"),
]

# PyTables nodes, and the h5py datasets of ours with the same dtype, chunks and options.
PYTABLES_SPECS = [
    dict(name=f"pt_{lib}", complib=f"blosc:{lib}", complevel=level, shuffle=shuffle == 1,
         bitshuffle=shuffle == 2, dtype=dtype, shape=[20000], chunks=[3000], filter="blosc",
         opts=(0, 0, 0, 0, level, shuffle, hi.COMPRESSORS[lib]), node="table" if dtype == "compound" else "carray")
    for lib, level, shuffle, dtype in [("blosclz", 5, 1, "f8"), ("lz4", 1, 2, "i2"), ("lz4hc", 9, 0, "f4"),
                                       ("snappy", 5, 1, "f8"), ("zlib", 3, 1, "compound"), ("zstd", 7, 2, "u1")]
]


def filters_block(header):
    """The FILTERS { ... } block of an `h5dump -p -H -d` output, indentation removed."""
    lines = [line.strip() for line in header.splitlines()]
    start = lines.index("FILTERS {")
    depth, block = 0, []
    for line in lines[start:]:
        block.append(line)
        depth += line.count("{") - line.count("}")
        if depth == 0:
            return block
    raise AssertionError("unterminated FILTERS block:\n" + header)


def header_without_size(header):
    lines = header.splitlines()[1:]  # the first line names the file
    return [line for line in lines if not line.strip().startswith("SIZE ")]


def dump(plugin_path, path, name):
    proc = hi.run_tool(plugin_path, ["h5dump", "-p", "-H", "-d", "/" + name, path])
    return proc.stdout.decode()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("h5dump")
    empty = d / "no-plugins"
    empty.mkdir()
    for name, specs in (("blosc", BLOSC_SPECS), ("lzf", LZF_SPECS), ("pytables", PYTABLES_SPECS)):
        (d / f"{name}.json").write_text(json.dumps(specs))
    out = {"dir": d, "empty": empty}
    runs = {
        "peer": (hi.peer_dir(), ["write", d / "blosc.json", d / "peer.h5"], "peer"),
        "ours": (hi.plugin_dir(), ["write", d / "blosc.json", d / "ours.h5"], "ours"),
        "lzf_h5py": (empty, ["write", d / "lzf.json", d / "lzf_h5py.h5"], "none"),
        "lzf_ours": (hi.plugin_dir(), ["write", d / "lzf.json", d / "lzf_ours.h5", "--unregister-lzf"], "ours"),
        "pytables": (empty, ["pytables-write", d / "pytables.json", d / "pytables.h5"], "none"),
        "pytables_ours": (hi.plugin_dir(), ["write", d / "pytables.json", d / "pytables_ours.h5"], "ours"),
    }
    for key, (plugin_path, args, side) in runs.items():
        report = hi.run_worker(plugin_path, *args)
        assert hi.classify(report["plugins"]) == side, (key, report["plugins"])
        out[key] = (args[2], plugin_path)
    return out


def pair(files, theirs, ours, name):
    (their_path, their_plugins), (our_path, our_plugins) = files[theirs], files[ours]
    return dump(their_plugins, their_path, name), dump(our_plugins, our_path, name)


@pytest.mark.parametrize("spec", BLOSC_SPECS, ids=lambda s: s["name"])
def test_blosc_same_as_hdf5_blosc(files, spec):
    theirs, ours = pair(files, "peer", "ours", spec["name"])
    assert filters_block(ours) == filters_block(theirs)
    assert header_without_size(ours) == header_without_size(theirs)
    params = " ".join(map(str, hi.expected_cd_values(spec)))
    assert filters_block(ours) == ["FILTERS {", "USER_DEFINED_FILTER {", "FILTER_ID 32001", "COMMENT blosc",
                                   f"PARAMS {{ {params} }}", "}", "}"]


@pytest.mark.parametrize("spec", PYTABLES_SPECS, ids=lambda s: s["name"])
def test_blosc_same_as_pytables(files, spec):
    theirs, ours = pair(files, "pytables", "pytables_ours", spec["name"])
    assert filters_block(ours) == filters_block(theirs)
    assert re.search(r"^\s*COMMENT blosc$", ours, re.M) and "FILTER_ID 32001" in ours


@pytest.mark.parametrize("spec", LZF_SPECS, ids=lambda s: s["name"])
def test_lzf_same_as_h5py(files, spec):
    theirs, ours = pair(files, "lzf_h5py", "lzf_ours", spec["name"])
    assert filters_block(ours) == filters_block(theirs)
    assert header_without_size(ours) == header_without_size(theirs)
    params = " ".join(map(str, hi.expected_cd_values(spec)))
    expected = ["USER_DEFINED_FILTER {", "FILTER_ID 32000", "COMMENT lzf", f"PARAMS {{ {params} }}", "}"]
    if spec.get("hdf5_shuffle"):
        expected = ["PREPROCESSING SHUFFLE"] + expected
    assert filters_block(ours) == ["FILTERS {"] + expected + ["}"]
