"""The objects the Arkouda tests write, deterministic, and a command line to write or check
them in a process of its own (so that the h5sparse connector can be on or off per process:
HDF5 reads HDF5_VOL_CONNECTOR once, when h5py loads it).

    python3 arkouda_corpus.py write PATH STORAGE single|distribute [LOCALES [seed|arkouda]]
    python3 arkouda_corpus.py check PATH STORAGE
Both print one JSON line: the connector seen by the process and what was written / found.
"""
import functools
import json
import os
import sys

import numpy as np

import arkouda_hdf5 as ah

STORAGES = {
    "plain": lambda: ah.Storage(),
    "blosc": lambda: ah.Storage(compression="blosc", chunk_elements=4096),
    "lzf": lambda: ah.Storage(compression="lzf", chunk_elements=4096),
    "sparse": lambda: ah.Storage(sparse="auto", chunk_elements=4096),
    "sparse-blosc": lambda: ah.Storage(compression=ah.storage.h5sparse.Blosc("zstd", 5, "bit"),
                                       sparse="auto", chunk_elements=4096),
    "sparse-lzf": lambda: ah.Storage(compression="lzf", sparse="auto", chunk_elements=4096),
}

N = 8_000
SPARSE_N = 200_000
SPARSE_DEFINED = 1_000


def words(rng, n):
    alphabet = np.array(list("abcdefghij") + ["é", "ß", "東"])
    lengths = rng.integers(0, 9, size=n)
    chars = alphabet[rng.integers(0, alphabet.size, size=int(lengths.sum()))]
    return ["".join(w) for w in np.split(chars, np.cumsum(lengths)[:-1])]


def mostly_fill(rng, dtype):
    a = np.zeros(SPARSE_N, dtype=dtype)
    where = rng.choice(SPARSE_N, SPARSE_DEFINED, replace=False)
    a[where] = (rng.random(SPARSE_DEFINED) * 1000 + 1).astype(dtype)
    return a


def corpus():
    """One object of every type and variant; names are the top-level names in the file."""
    rng = np.random.default_rng(2026)
    cities = [str(c) for c in rng.choice(["Oslo", "Lima", "Pune", "Kyiv", "Nuuk"], size=N)]
    cat_grouped = ah.Categorical.from_strings(cities, grouped=True)
    ids = rng.integers(0, 50, size=N).astype(np.int64)
    tags = ah.Strings.from_list([str(t) for t in rng.choice(["x", "yy", "zzz"], size=N)])
    lists = [list(rng.integers(-5, 5, size=int(rng.integers(0, 6)))) for _ in range(3000)]
    frame = ah.DataFrame({"id": ids.copy(), "score": rng.random(N), "city": ah.Categorical.from_strings(cities),
                          "tag": tags}, ah.Index(np.arange(N, dtype=np.int64) * 10))
    objects = {
        "int64": rng.integers(-2**62, 2**62, size=N, dtype=np.int64),
        "uint64": rng.integers(0, 2**64 - 1, size=N, dtype=np.uint64),
        "float64": rng.standard_normal(N),
        "bool": rng.random(N) < 0.3,
        "empty": np.zeros(0, dtype=np.int64),
        "matrix": ah.ArrayView(rng.random((40, 25, 20))),
        "bool_cube": ah.ArrayView(rng.random((8, 8, 8)) < 0.5),
        "strings": ah.Strings.from_list(words(rng, 5000) + ["", "last"]),
        "segarray": ah.SegArray.from_lists(lists),
        "segarray_str": ah.SegArray.from_lists([words(rng, int(k)) for k in rng.integers(0, 4, size=800)], dtype=str),
        "cat": ah.Categorical.from_strings(cities),
        "cat_grouped": cat_grouped,
        "groupby": ah.GroupBy.from_keys([ids, tags, cat_grouped]),
        "groupby_bool": ah.GroupBy.from_keys([rng.random(N) < 0.5]),
        "sparse_f8": mostly_fill(rng, np.float64),
        "sparse_i8": mostly_fill(rng, np.int64),
        "frame": frame,
        "index": ah.Index(ah.Strings.from_list([f"row{i}" for i in range(1000)])),
    }
    return objects


@functools.lru_cache(maxsize=None)
def expected():
    """{top-level name: object} as a reader gets them back (DataFrames expanded)."""
    out = {}
    for name, obj in corpus().items():
        if isinstance(obj, ah.DataFrame):
            out.update(obj.columns)
            out["Index"] = obj.index.values
        elif isinstance(obj, ah.Index):
            out[name] = obj.values
        else:
            out[name] = obj
    return out


def connector():
    import h5py
    import h5sparse
    if not os.environ.get("HDF5_VOL_CONNECTOR"):
        return None
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"probe-{os.getpid()}.h5")
    with h5py.File(path, "w") as f:
        version = h5sparse.connector_version(f)
    os.remove(path)
    return version


def write(path, storage, file_type, locales=4, naming="seed"):
    import warnings
    objects = corpus()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ah.OverwriteWarning)
        first = {k: objects.pop(k) for k in ["int64", "frame"]}
        written = ah.to_hdf(path, first, file_type=file_type, locales=locales, storage=STORAGES[storage](),
                            naming=naming)
        # the rest in append mode, as a second call
        more = ah.to_hdf(path, objects, mode="append", file_type=file_type, locales=locales,
                         storage=STORAGES[storage](), naming=naming)
    return {"connector": connector(), "lzf": ah.storage.use_plugin_lzf() if "lzf" in storage else None,
            "lzf_libraries": sorted({line.split()[-1] for line in open("/proc/self/maps") if "lzf" in line}),
            "files": written.files, "writer_pids": written.writer_pids,
            "append_pids": more.writer_pids, "pid": os.getpid()}


def check(path):
    """Names whose values differ from the corpus (empty when all are equal)."""
    back = ah.read_hdf(path)
    want = expected()
    differ = sorted(n for n in want if n not in back or not ah.same(back[n], want[n]))
    extra = sorted(set(back) - set(want))
    frame = ah.read_dataframe(path, ["id", "score", "city", "tag", "Index"])
    frame_ok = ah.same(frame.index.values, want["Index"]) and list(frame.columns) == ["id", "score", "city", "tag"]
    return {"connector": connector(), "differ": differ, "extra": extra, "frame_ok": bool(frame_ok)}


if __name__ == "__main__":
    command, path, storage = sys.argv[1:4]
    if command == "write":
        result = write(path, storage, sys.argv[4], int(sys.argv[5]) if len(sys.argv) > 5 else 4, *sys.argv[6:7])
    else:
        result = check(path)
    print(json.dumps(result))
