"""Arkouda's HDF5 schema through python/arkouda_hdf5: files written with and without the
h5sparse connector follow the schema (arkouda_validator.py, written independently of the
writer), read back to the values written, and read with plain h5py (only HDF5_PLUGIN_PATH);
distributed files come from one process per locale; append mode refuses taken names; legacy
files are read by the seed's inference rule. Strings components are named as the seed states
(<name>/<name>_values) by default, as Arkouda's server does (<name>/values) with
naming="arkouda"; both are written, validated and read, with and without the connector.

This process runs without the connector (CTest unsets HDF5_VOL_CONNECTOR); writes and reads
through the connector run in child processes (arkouda_corpus.py)."""
import json
import os
import shutil
import subprocess
import sys
import warnings

import h5py
import numpy as np
import pytest

import arkouda_hdf5 as ah
import h5sparse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import arkouda_corpus as corpus  # noqa: E402
import arkouda_validator as validator  # noqa: E402

CONNECTOR = "h5sparse under_vol=0;under_info={}"
# First filter of a mostly-fill pdarray and of a Strings' bytes, per storage option.
FILTERS = {"plain": (None, None), "blosc": (32001, 32001), "lzf": (32000, 32000), "sparse": (45100, None),
           "sparse-blosc": (45100, 32001), "sparse-lzf": (45100, 32000)}
CASES = ([(s, True, "seed") for s in sorted(FILTERS)] + [(s, False, "seed") for s in ("plain", "lzf", "sparse-blosc")]
         + [("sparse-lzf", True, "arkouda"), ("blosc", False, "arkouda")])
# Where a Strings object's bytes are, per naming.
STRINGS_VALUES = {"seed": "strings/strings_values", "arkouda": "strings/values"}


def child(args, connector):
    env = {k: v for k, v in os.environ.items() if k != "HDF5_VOL_CONNECTOR"}
    if connector:
        env["HDF5_VOL_CONNECTOR"] = CONNECTOR
    out = subprocess.run([sys.executable, os.path.join(HERE, "arkouda_corpus.py"), *map(str, args)],
                         env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_this_process_is_plain_h5py():
    assert "HDF5_VOL_CONNECTOR" not in os.environ
    assert os.environ.get("HDF5_PLUGIN_PATH")


def assert_reads_back(path):
    back = ah.read_hdf(path)
    want = corpus.expected()
    assert sorted(back) == sorted(want)
    for name in want:
        assert ah.same(back[name], want[name]), name
    # a few values decoded independently of the module's own comparison
    with h5py.File(ah.files_of(path)[0], "r") as f:
        assert f["bool"].dtype == np.uint8 and f["bool"].attrs["isBool"] == 1


def first_filter(dset):
    plist = dset.id.get_create_plist()
    return plist.get_filter(0)[0] if plist.get_nfilters() else None


@pytest.mark.parametrize("storage,connector,naming", CASES,
                         ids=[f"{s}-{'connector' if c else 'native'}-{n}" for s, c, n in CASES])
def test_single_file_follows_schema_and_reads_back(tmp_path, storage, connector, naming):
    path = tmp_path / "corpus.h5"
    wrote = child(["write", path, storage, "single", 4, naming], connector)
    assert wrote["connector"] == ("h5sparse 0.1.0" if connector else None)
    if storage == "lzf":  # our LZF plugin, not h5py's built-in one
        assert wrote["lzf"] == "plugin"
        assert "libh5sparse_lzf.so" in [os.path.basename(p) for p in wrote["lzf_libraries"]]
    assert validator.validate_file(path, naming=naming) == []
    if naming == "arkouda":  # the seed's naming is the default, the server's only on request
        assert "strings: component strings_values is missing" in "\n".join(validator.validate_file(path))
    assert_reads_back(path)  # plain h5py, HDF5_PLUGIN_PATH only
    assert child(["check", path, storage], connector) == {
        "connector": wrote["connector"], "differ": [], "extra": [], "frame_ok": True}
    with h5py.File(path, "r") as f:
        assert (first_filter(f["sparse_f8"]), first_filter(f[STRINGS_VALUES[naming]])) == FILTERS[storage]
        assert first_filter(f["empty"]) is None  # zero-sized: contiguous


def test_sparse_pdarrays_store_only_their_defined_elements(tmp_path):
    dense, sparse = tmp_path / "dense.h5", tmp_path / "sparse.h5"
    x = corpus.mostly_fill(np.random.default_rng(1), np.float64)
    ah.to_hdf(dense, {"x": x})
    script = ("import sys, h5py, numpy as np, arkouda_hdf5 as ah, h5sparse\n"
              "x = np.load(sys.argv[2])\n"
              "ah.to_hdf(sys.argv[1], {'x': x}, storage=ah.Storage(compression='blosc', sparse='auto'))\n"
              "with h5py.File(sys.argv[1], 'r') as f:\n"
              "    print(len(h5sparse.get_defined(f['x'])), h5sparse.connector_version(f))\n")
    np.save(tmp_path / "x.npy", x)
    env = dict(os.environ, HDF5_VOL_CONNECTOR=CONNECTOR)
    out = subprocess.run([sys.executable, "-c", script, str(sparse), str(tmp_path / "x.npy")], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(np.count_nonzero(x)), "h5sparse", "0.1.0"]
    assert validator.validate_file(sparse) == []
    assert ah.same(ah.read_hdf(sparse, "x"), x)
    with h5py.File(sparse, "r") as f:
        stored, logical = f["x"].id.get_storage_size(), x.nbytes
    assert stored < logical / 20, (stored, logical)  # 0.5% defined


@pytest.mark.parametrize("storage,connector,naming", [("plain", False, "seed"), ("sparse-blosc", True, "seed"),
                                                      ("lzf", True, "arkouda")])
def test_distributed_files_from_four_writer_processes(tmp_path, storage, connector, naming):
    path = tmp_path / "dist.h5"
    wrote = child(["write", path, storage, "distribute", 4, naming], connector)
    names = [f"dist_LOCALE{i:04d}.h5" for i in range(4)]
    assert [os.path.basename(f) for f in wrote["files"]] == names
    assert sorted(os.listdir(tmp_path)) == names
    for pids in (wrote["writer_pids"], wrote["append_pids"]):
        assert len(set(pids)) == 4 and wrote["pid"] not in pids  # one process per locale
    assert validator.validate_locale_files(path, expected_locales=4, naming=naming) == []
    with h5py.File(wrote["files"][3], "r") as f:
        assert STRINGS_VALUES[naming] in f
    # every locale holds its block of every object
    want = corpus.expected()
    for i, f in enumerate(wrote["files"]):
        piece = ah.read_hdf(f, ["int64", "strings", "groupby"])
        assert ah.same(piece["int64"], ah.part(want["int64"], i, 4))
        assert ah.same(piece["strings"], ah.part(want["strings"], i, 4))
        assert ah.same(piece["groupby"], ah.part(want["groupby"], i, 4))
        assert 0 < len(piece["int64"]) < len(want["int64"])
    assert_reads_back(path)
    assert child(["check", path, storage], connector)["differ"] == []


def test_append_refuses_taken_names_before_writing_anything(tmp_path):
    path = tmp_path / "a.h5"
    ah.to_hdf(path, {"x": np.arange(5), "s": ah.Strings.from_list(["a"])})
    ah.to_hdf(path, np.arange(3.0), name="y", mode="append")
    with pytest.raises(ah.ObjectExistsError, match=r"cannot append 'x'.*already in the file"):
        ah.to_hdf(path, {"new": np.ones(2), "x": np.zeros(9)}, mode="append")
    back = ah.read_hdf(path)
    assert sorted(back) == ["s", "x", "y"]  # "new" was not written either
    assert ah.same(back["x"], np.arange(5))
    assert validator.validate_file(path) == []
    # append creates a missing file
    ah.to_hdf(tmp_path / "fresh.h5", np.arange(2), name="z", mode="append")
    assert list(ah.read_hdf(tmp_path / "fresh.h5")) == ["z"]


def test_append_refusal_in_distributed_files(tmp_path):
    path = tmp_path / "d.h5"
    ah.to_hdf(path, {"x": np.arange(100)}, file_type="distribute", locales=4)
    with pytest.raises(ah.ObjectExistsError, match="d_LOCALE0000.h5: cannot append 'x'"):
        ah.to_hdf(path, {"x": np.arange(8)}, mode="append", file_type="distribute", locales=4)
    with pytest.raises(ah.ObjectExistsError, match="4 exist"):
        ah.to_hdf(path, {"y": np.arange(8)}, mode="append", file_type="distribute", locales=3)
    ah.to_hdf(path, {"y": np.arange(8)}, mode="append", file_type="distribute", locales=4)
    assert ah.same(ah.read_hdf(path)["x"], np.arange(100))
    assert ah.same(ah.read_hdf(path)["y"], np.arange(8))


def test_truncate_warns_and_replaces(tmp_path):
    path = tmp_path / "t.h5"
    ah.to_hdf(path, {"x": np.arange(3)})
    with pytest.warns(ah.OverwriteWarning, match="t.h5"):
        ah.to_hdf(path, {"y": np.arange(2)})
    assert list(ah.read_hdf(path)) == ["y"]
    # a narrower distributed write leaves no stale locale file behind
    ah.to_hdf(tmp_path / "d.h5", {"x": np.arange(9)}, file_type="distribute", locales=4)
    with pytest.warns(ah.OverwriteWarning, match="d_LOCALE0003.h5"):
        ah.to_hdf(tmp_path / "d.h5", {"x": np.arange(9)}, file_type="distribute", locales=2)
    assert len(ah.files_of(tmp_path / "d.h5")) == 2
    assert ah.same(ah.read_hdf(tmp_path / "d.h5", "x"), np.arange(9))


def test_legacy_files_without_objtype(tmp_path):
    path = tmp_path / "legacy.h5"
    raw = b"ab\0\0cde\0"
    with h5py.File(path, "w") as f:
        g = f.create_group("words")  # legacy Strings: group with a uint8 "values", no ObjType
        g["values"] = np.frombuffer(raw, np.uint8)
        g["segments"] = np.array([0, 3, 4], np.int64)
        f.create_group("no_offsets")["values"] = np.frombuffer(raw, np.uint8)
        f["nums"] = np.arange(4, dtype=np.int64)  # legacy pdarray
        f.create_group("other")["values"] = np.arange(3, dtype=np.int64)  # not uint8: not Strings
        f.create_group("seedish")["seedish_values"] = np.frombuffer(raw, np.uint8)  # seed naming, no ObjType
    assert ah.read_hdf(path, "words").to_list() == ["ab", "", "cde"]
    assert ah.read_hdf(path, "seedish").to_list() == ["ab", "", "cde"]
    assert ah.read_hdf(path, "no_offsets").to_list() == ["ab", "", "cde"]
    assert ah.same(ah.read_hdf(path, "nums"), np.arange(4, dtype=np.int64))
    with pytest.raises(ah.SchemaError, match="not a legacy Strings group"):
        ah.read_hdf(path, "other")
    problems = validator.validate_file(path)
    assert any("words: attribute ObjType is missing" in p for p in problems)


STRINGS_LINKS = {  # every Strings group of layout_file() and the members each naming gives it
    "seed": {"s": ["s_segments", "s_values"], "seg/values": ["values_segments", "values_values"],
             "cat/categories": ["categories_segments", "categories_values"],
             "gb/KEY_0": ["KEY_0_segments", "KEY_0_values"]},
    "arkouda": {"s": ["segments", "values"], "seg/values": ["segments", "values"],
                "cat/categories": ["segments", "values"], "gb/KEY_0": ["segments", "values"]},
}


def layout_objects():
    s = ah.Strings.from_list(["Oslo", "", "Lima", "Oslo"])
    return {"s": s, "seg": ah.SegArray.from_lists([["a", "b"], [], ["c"]], dtype=str),
            "cat": ah.Categorical.from_strings(s.to_list()), "gb": ah.GroupBy.from_keys([s])}


@pytest.mark.parametrize("naming", ["seed", "arkouda"])
def test_strings_component_names(tmp_path, naming):
    """The exact link names, nested Strings included; each naming reads back and validates only
    under its own name in the validator."""
    path = tmp_path / f"{naming}.h5"
    ah.to_hdf(path, layout_objects(), naming=naming)
    with h5py.File(path, "r") as f:
        assert {g: sorted(f[g]) for g in STRINGS_LINKS[naming]} == STRINGS_LINKS[naming]
        assert sorted(f["seg"]) == ["segments", "values"] and "codes" in f["cat"]  # not Strings: unchanged
    back, want = ah.read_hdf(path), layout_objects()
    assert all(ah.same(back[n], want[n]) for n in want)
    assert validator.validate_file(path, naming=naming) == []
    other = "arkouda" if naming == "seed" else "seed"
    problems = validator.validate_file(path, naming=other)
    for g, members in STRINGS_LINKS[other].items():
        assert f"{path}:/{g}: component {members[1]} is missing" in problems, problems
    out = subprocess.run([sys.executable, os.path.join(HERE, "arkouda_validator.py"), str(path)]
                         + (["--arkouda-naming"] if naming == "arkouda" else []), capture_output=True, text=True)
    assert (out.returncode, out.stdout.strip()) == (0, "ok")


def test_reader_prefers_the_seed_naming(tmp_path):
    path = tmp_path / "both.h5"
    ah.to_hdf(path, {"s": ah.Strings.from_list(["seed", "named"])})
    with h5py.File(path, "a") as f:  # the server's names beside them, other content
        f["s/values"] = np.frombuffer(b"server\0", np.uint8)
        f["s/segments"] = np.zeros(1, np.int64)
    assert ah.read_hdf(path, "s").to_list() == ["seed", "named"]
    with h5py.File(path, "a") as f:
        del f["s/s_values"], f["s/s_segments"]
    assert ah.read_hdf(path, "s").to_list() == ["server"]
    with h5py.File(path, "a") as f:
        f.move("s/values", "s/bytes")
    with pytest.raises(ah.SchemaError, match=r"/s: a Strings group holds no values dataset \('s_values' or 'values'\)"):
        ah.read_hdf(path, "s")


def test_reader_rejects_bad_objects(tmp_path):
    path = tmp_path / "bad.h5"
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(3)
        f["x"].attrs["ObjType"] = 9
        f.create_group("g").attrs["ObjType"] = 1  # a pdarray stored as a group
        f["v"] = np.arange(6)
        f["v"].attrs["ObjType"] = 0
        f["v"].attrs["Rank"] = 2
        f["v"].attrs["Shape"] = np.array([2, 3, 1])
    for name, message in [("x", "unknown ObjType 9"), ("g", "PDARRAY is stored as a dataset"),
                          ("v", "Rank 2 but Shape has 3")]:
        with pytest.raises(ah.SchemaError, match=message):
            ah.read_hdf(path, name)


def test_bad_input_is_refused_before_any_file_changes(tmp_path):
    path = tmp_path / "keep.h5"
    ah.to_hdf(path, {"x": np.arange(4)})
    before = path.read_bytes()
    cases = [
        (ValueError, "mode must be", dict(mode="overwrite")),
        (ValueError, "file_type must be", dict(file_type="cluster")),
        (ValueError, "locales must be at least 1", dict(file_type="distribute", locales=0)),
        (ValueError, "compression must be one of", dict(storage_args={"compression": "zip"})),
        (ValueError, "sparse must be", dict(storage_args={"sparse": "yes"})),
        (ValueError, "naming must be 'seed' or 'arkouda'", dict(naming="server")),
    ]
    for error, message, kwargs in cases:
        storage_args = kwargs.pop("storage_args", None)
        with pytest.raises(error, match=message):
            storage = ah.Storage(**storage_args) if storage_args else None
            ah.to_hdf(path, {"y": np.arange(3)}, storage=storage, **kwargs)
    with pytest.raises(TypeError, match="cannot write str"):
        ah.to_hdf(path, {"y": "text"}, mode="append")
    with pytest.raises(ValueError, match="may not contain NUL"):
        ah.Strings.from_list(["a\0b"])
    with pytest.raises(ValueError, match="one-dimensional"):
        ah.to_hdf(path, np.ones((2, 2)), name="m", mode="append")
    with pytest.raises(TypeError, match="integer, float or bool"):
        ah.ArrayView(np.array(["a"]))
    with pytest.raises(ValueError, match="both permutation and segments"):
        ah.Categorical([0], ah.Strings.from_list(["a"]), [0], permutation=[0])
    assert path.read_bytes() == before
    assert ah.same(ah.read_hdf(path, "x"), np.arange(4))


def mutate(path, edit):
    with h5py.File(path, "a") as f:
        edit(f)


MUTATIONS = {
    "file_version as float64": (lambda f: f["int64"].attrs.create("file_version", np.float64(2.0)),
                                "int64: file_version must be a 32-bit real"),
    "file_version 1.0": (lambda f: f["int64"].attrs.modify("file_version", np.float32(1.0)),
                         "file_version is 1.0, expected 2.0"),
    "no ObjType": (lambda f: f["strings"].attrs.__delitem__("ObjType"), "strings: attribute ObjType is missing"),
    "ObjType as float": (lambda f: f["cat"].attrs.create("ObjType", 4.0), "cat: attribute ObjType must be an integer"),
    "isBool 2": (lambda f: f["bool"].attrs.modify("isBool", np.int64(2)), "bool: attribute isBool is 2"),
    "isBool 1 on float64": (lambda f: f["float64"].attrs.modify("isBool", np.int64(1)),
                            "isBool is 1: boolean values are stored as 8-bit unsigned"),
    "no isBool on a key": (lambda f: f["groupby/KEY_0"].attrs.__delitem__("isBool"),
                           "groupby/KEY_0: attribute isBool is missing"),
    "arkouda_version missing": (lambda f: f["segarray/segments"].attrs.__delitem__("arkouda_version"),
                                "segarray/segments: attribute arkouda_version is missing"),
    "arkouda_version space padded": (lambda f: f["matrix"].attrs.create("arkouda_version", np.bytes_(b"v1")),
                                     "matrix: arkouda_version must be a null-terminated C string"),
    "Shape of wrong rank": (lambda f: f["matrix"].attrs.create("Shape", np.array([40, 500])),
                            "matrix: Shape has 2 entries but Rank is 3"),
    "Strings without null": (lambda f: f["strings/strings_values"].__setitem__(-1, 65),
                             "strings/strings_values: Strings values must end with a null byte"),
    "segments off": (lambda f: f["strings/strings_segments"].__setitem__(1, 0), "segments are not the starts"),
    # Link names of Strings components: the seed's <name>_values / <name>_segments
    "Strings values named as the server does": (lambda f: f.move("strings/strings_values", "strings/values"),
                                                "strings: component strings_values is missing"),
    "Strings segments misnamed": (lambda f: f.move("strings/strings_segments", "strings/strings_offsets"),
                                  "strings: unexpected member strings_offsets"),
    "categories values misnamed": (lambda f: f.move("cat/categories/categories_values", "cat/categories/cat_values"),
                                   "cat/categories: component categories_values is missing"),
    "Strings key segments of another name": (lambda f: f.move("groupby/KEY_1/KEY_1_segments", "groupby/KEY_1/segments"),
                                             "groupby/KEY_1: unexpected member segments"),
    "KEY gap": (lambda f: f.move("groupby/KEY_1", "groupby/KEY_7"), "keys must be numbered KEY_0 .. KEY_2"),
    "NA_Codes missing": (lambda f: f["cat"].__delitem__("NA_Codes"), "cat: component NA_Codes is missing"),
    "permutation alone": (lambda f: f["cat_grouped"].__delitem__("segments"),
                          "permutation and segments are stored together"),
    "codes as int32": (lambda f: (f["cat"].__delitem__("codes"), f["cat"].create_dataset("codes", data=np.zeros(3, np.int32))),
                       "cat/codes: codes must be int64"),
    "bool as h5py enum": (lambda f: (f.__delitem__("bool"), f.create_dataset("bool", data=np.ones(3, bool)),
                                     [f["bool"].attrs.create(k, v) for k, v in f["int64"].attrs.items()],
                                     f["bool"].attrs.modify("isBool", 1)),
                          "bool: a pdarray must have element type 'iuf', got bool"),
}


@pytest.fixture(scope="module")
def good_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("good") / "good.h5"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ah.OverwriteWarning)
        corpus.write(path, "plain", "single")
    assert validator.validate_file(path) == []
    return path


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_validator_reports_each_violation(tmp_path, good_file, mutation):
    edit, message = MUTATIONS[mutation]
    path = tmp_path / "bad.h5"
    shutil.copy(good_file, path)
    mutate(path, edit)
    problems = validator.validate_file(path)
    assert any(message in p for p in problems), problems


def test_optional_attributes_are_optional_for_readers(tmp_path, good_file):
    """The seed marks file_version and arkouda_version optional, and isBool required only on
    boolean data: without them the file is still readable (and minimal-valid), not complete."""
    path = tmp_path / "minimal.h5"
    shutil.copy(good_file, path)

    def strip(f):
        def visit(_, obj):
            for name in ("file_version", "arkouda_version"):
                obj.attrs.pop(name, None)
            if obj.attrs.get("isBool", 1) == 0:
                del obj.attrs["isBool"]
        f.visititems(visit)
    mutate(path, strip)
    assert validator.validate_file(path, complete=False) == []
    assert any("attribute isBool is missing" in p for p in validator.validate_file(path))
    assert any("attribute file_version is missing" in p for p in validator.validate_file(path))
    back, want = ah.read_hdf(path), corpus.expected()
    assert all(ah.same(back[n], want[n]) for n in want)


def test_split_and_merge_are_inverse():
    want = corpus.expected()
    for n in (1, 3, 4, 7):
        for name, obj in want.items():
            assert ah.same(ah.merge(ah.split(obj, n)), obj), (name, n)


def test_read_hdf_takes_lists_and_globs_as_arkouda_does(tmp_path):
    ah.to_hdf(tmp_path / "d.h5", {"x": np.arange(10)}, file_type="distribute", locales=3)
    locale_files = [str(tmp_path / f"d_LOCALE000{i}.h5") for i in range(3)]
    assert ah.files_of(tmp_path / "d.h5") == locale_files
    assert ah.same(ah.read_hdf(locale_files, "x"), np.arange(10))                       # a list, in its order
    assert ah.same(ah.read_hdf(locale_files[::-1], "x")[:4], np.arange(6, 10))
    assert ah.same(ah.read_hdf(str(tmp_path / "d_LOCALE*"), "x"), np.arange(10))        # a glob, sorted by name
    assert ah.same(ah.read_hdf([str(tmp_path / "d_LOCALE000[12].h5")], "x"), np.arange(3, 10))  # one-element list: globbed
    assert ah.same(ah.read_hdf(locale_files[1], "x"), np.arange(3, 6))                  # a single file
    with pytest.raises(FileNotFoundError, match=r"no file matches the pattern .*e_LOCALE\*"):
        ah.read_hdf(str(tmp_path / "e_LOCALE*"))
    with pytest.raises(FileNotFoundError, match=r"no file .*missing.h5"):
        ah.read_hdf([locale_files[0], str(tmp_path / "missing.h5")])
    with pytest.raises(ValueError, match="list of files is empty"):
        ah.read_hdf([])
