"""A file written with the h5sparse connector is a plain HDF5 file, readable without it, and a
file written without it is readable with it.

The whole h5py corpus of scenarios.py is written three times under a frozen clock (preload.c,
so the object times HDF5 stores are the same): once with the connector and twice without (the
second native run shows the corpus is deterministic). Then:

* every file (and every other file the scenarios leave, such as external raw data) written with
  the connector is byte for byte the file written without it;
* both corpora read back the same, with and without the connector: the canonical description of
  connector_support.describe_file (every object, type, layout, value, attribute and link) is
  the same in all four combinations;
* h5dump -p prints the same for every file in all four combinations.
"""
import concurrent.futures
import hashlib
import os

import pytest

import connector_support as cs

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "scenarios.py")


def all_files(root):
    out = {}
    for d, _, names in os.walk(root):
        for n in names:
            p = os.path.join(d, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = hashlib.sha256(f.read()).hexdigest()
    return out


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    root = tmp_path_factory.mktemp("interop")
    dirs = {"with": str(root / "with"), "without": str(root / "without"), "without_again": str(root / "again")}
    reports = {}
    for label, d in dirs.items():
        reports[label], _ = cs.run_python([SCRIPT, "corpus", d], connector=(label == "with"), frozen=True)
    return dirs, reports


def test_written_through_connector(corpora):
    _, reports = corpora
    assert reports["with"]["probes"] == [["h5sparse", "h5sparse", cs.CONNECTOR_VERSION]]
    assert reports["without"]["probes"] == [["native", "native", None]]
    assert reports["with"]["written"] == reports["without"]["written"]
    assert reports["with"]["open_objects"] == 0 and reports["without"]["open_objects"] == 0


def test_byte_for_byte_identical(corpora):
    dirs, _ = corpora
    with_, without, again = (all_files(dirs[k]) for k in ("with", "without", "without_again"))
    assert without == again, "the native corpus is not deterministic: " + \
        str(sorted(k for k in without if without[k] != again.get(k)))
    assert sorted(with_) == sorted(without)
    differ = sorted(k for k in without if with_[k] != without[k])
    assert not differ, f"written differently with the connector: {differ}"
    assert sum(1 for k in without if k.endswith(".h5")) >= 30


@pytest.mark.parametrize("written", ["with", "without"])
def test_readable_both_ways(corpora, written):
    dirs, _ = corpora
    reference, _ = cs.run_python([SCRIPT, "describe", dirs["without"]], connector=False)
    assert len(reference["files"]) >= 30
    assert not [k for k, v in reference["files"].items() if "error" in v]
    for connector in (False, True):
        got, _ = cs.run_python([SCRIPT, "describe", dirs[written]], connector=connector)
        diff = cs.first_difference(reference["files"], got["files"])
        side = "with" if connector else "without"
        assert diff is None, f"files written {written} the connector, read {side} it, differ at {diff}"
        assert got["open_objects"] == 0


def test_h5dump_identical(corpora):
    dirs, _ = corpora
    files = sorted(k for k in all_files(dirs["without"]) if k.endswith(".h5"))
    combos = [(w, c) for w in ("with", "without") for c in (False, True)]

    def dump(job):
        written, connector, rel = job
        path = os.path.join(dirs[written], rel)
        # relative name and the file's directory as working directory: the header line and the
        # resolution of external files are the same for both corpora
        rc, out, err, _ = cs.run_tool(["h5dump", "-p", os.path.basename(path)], connector, cwd=os.path.dirname(path))
        return job, (rc, out, err)

    jobs = [(w, c, rel) for rel in files for w, c in combos]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = dict(pool.map(dump, jobs))
    differ = []
    for rel in files:
        ref = results[("without", False, rel)]
        assert ref[0] == 0, (rel, ref[2][-2000:])
        for w, c in combos:
            if results[(w, c, rel)] != ref:
                differ.append(f"{rel} written {w} the connector, dumped {'with' if c else 'without'} it")
    assert not differ, differ[:20]
