#!/usr/bin/env python3
"""Direct chunk copy of a sparse dataset against read + write through the API.

    scripts/dev run python3 bench/sparse/chunk_copy.py            # 4096 x 4096 float32, ~1 minute
    scripts/dev run python3 bench/sparse/chunk_copy.py --quick    # 1024 x 1024

The source: 4096 x 4096 float32 in 256 x 256 chunks, values through Blosc lz4 + byte shuffle,
the selection through Deflate(6), fill value NaN, random elements defined at each density.
Each method copies it into a new dataset of the same creation properties in a new file
(/dev/shm), file close included, and the copy is checked (values, defined elements; stored
bytes for the direct methods):

  struct    h5sparse.struct_chunks + read_struct_chunk + write_struct_chunk (sections; every
            write is verified by decoding its sections, as the format's checksums need)
  native    h5py read_direct_chunk + write_direct_chunk (whole structured chunks, verified by
            decoding on write)
  struct C  the same as struct in C (build/bin/chunk_copy_bench, its own process, which
            times itself from opening the source to closing the copy)
  native C  the same as native in C
  points  the RFC's API copy: get_defined, then H5Dread + H5Dwrite of those points
  dense   dst[...] = src[...] into a fill_is_undefined dataset (exact only because no defined
          value is NaN)

Best of --reps in one process, the methods interleaved per repetition; times are indicative
on a shared machine. Markdown to stdout, bench/sparse/results/chunk_copy.md and (not --quick)
this script's section of bench/RESULTS.md (--results-md PATH: of another file; a --quick run or
one of other --densities writes a section only there).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

import h5sparse

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import results  # noqa: E402
C_BENCH = os.path.join(os.environ.get("H5SPARSE_BUILD_DIR", os.path.join(REPO, "build")), "bin", "chunk_copy_bench")


def kwargs(fill_is_undefined=False):
    return dict(dtype="<f4", fillvalue=np.nan,
                **h5sparse.Sparse(values=h5sparse.Blosc("lz4", 5, "byte"), selection=h5sparse.Deflate(6),
                                  fill_is_undefined=fill_is_undefined))


def make_source(path, n, chunk, density, seed=7):
    rng = np.random.default_rng(seed)
    data = np.full((n, n), np.nan, "<f4")
    mask = rng.random((n, n)) < density
    data[mask] = rng.standard_normal(int(mask.sum())).astype("<f4")
    with h5py.File(path, "w") as f:
        f.create_dataset("x", shape=(n, n), chunks=(chunk, chunk), **kwargs(fill_is_undefined=True))[...] = data
    return int(mask.sum())


def copy_struct(src, dst):
    for info in h5sparse.struct_chunks(src):
        info, sections = h5sparse.read_struct_chunk(src, info.offset, info)
        h5sparse.write_struct_chunk(dst, info.offset, sections, info)


def copy_native(src, dst):
    offsets = []
    src.id.chunk_iter(lambda s: offsets.append(s.chunk_offset))
    for offset in offsets:
        mask, raw = src.id.read_direct_chunk(offset)
        dst.id.write_direct_chunk(offset, raw, filter_mask=mask)


def copy_points(src, dst):
    coords = h5sparse.get_defined(src)
    if len(coords) == 0:
        return
    space = src.id.get_space()
    space.select_elements(coords)
    mem = h5py.h5s.create_simple((len(coords),))
    buf = np.empty(len(coords), "<f4")
    src.id.read(mem, space, buf)
    dst.id.write(mem, space, buf)


def copy_dense(src, dst):
    dst[...] = src[...]


METHODS = {"struct": (copy_struct, False), "native": (copy_native, False), "struct C": ("struct", False),
           "native C": ("native", False), "points": (copy_points, False), "dense": (copy_dense, True)}


def run_copy(method, src_path, dst_path, n, chunk):
    fn, fill_is_undefined = METHODS[method]
    if isinstance(fn, str):  # the C program, which times itself
        out = subprocess.run([C_BENCH, src_path, dst_path, fn], check=True, capture_output=True, text=True)
        return float(out.stdout)
    t0 = time.perf_counter()
    with h5py.File(src_path, "r") as fs, h5py.File(dst_path, "w") as fd:
        src = fs["x"]
        dst = fd.create_dataset("x", shape=(n, n), chunks=(chunk, chunk), **kwargs(fill_is_undefined))
        fn(src, dst)
    return time.perf_counter() - t0


def check_copy(method, src_path, dst_path):
    with h5py.File(src_path, "r") as fs, h5py.File(dst_path, "r") as fd:
        a, b = fs["x"], fd["x"]
        assert np.array_equal(a[...], b[...], equal_nan=True), method
        assert np.array_equal(h5sparse.get_defined(a), h5sparse.get_defined(b)), method
        if method.startswith(("struct", "native")):
            for info in h5sparse.struct_chunks(a):
                assert a.id.read_direct_chunk(info.offset) == b.id.read_direct_chunk(info.offset), method


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--densities", default="0.001,0.01,0.1")
    results.add_argument(ap)
    args = ap.parse_args()
    partial = args.quick or args.densities != ap.get_default("densities")
    head = results.preamble("Direct chunk copy", partial)
    n, chunk = (1024, 256) if args.quick else (4096, 256)
    if h5sparse.connector_version(h5py.File(tempfile.mktemp(dir="/dev/shm"), "w")) is None:
        sys.exit("the h5sparse connector is not active (run through scripts/dev run)")
    rows = []
    with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        for density in [float(d) for d in args.densities.split(",")]:
            src = os.path.join(tmp, "src.h5")
            defined = make_source(src, n, chunk, density)
            with h5py.File(src, "r") as f:
                stored = sum(i.size for i in h5sparse.struct_chunks(f["x"]))
            best = {m: float("inf") for m in METHODS}
            for _ in range(args.reps):
                for m in METHODS:
                    dst = os.path.join(tmp, f"{m.replace(' ', '_')}.h5")
                    best[m] = min(best[m], run_copy(m, src, dst, n, chunk))
            for m in METHODS:
                check_copy(m, src, os.path.join(tmp, f"{m.replace(' ', '_')}.h5"))
            rows.append((density, defined, stored, best))
            print(f"[chunk-copy] {density}: " + ", ".join(f"{m} {t * 1e3:.1f} ms" for m, t in best.items()),
                  file=sys.stderr)
    lines = [f"A {n} x {n} float32 sparse dataset in {chunk} x {chunk} chunks (values Blosc lz4 + byte shuffle, "
             "selection Deflate(6), random elements defined) copied into a new dataset of the same properties, file "
             "close included, each copy checked (values, defined elements, and stored bytes for the direct methods). "
             "Direct: `struct` = `struct_chunks` + `read_struct_chunk` + `write_struct_chunk`, `native` = h5py "
             "`read_direct_chunk` + `write_direct_chunk` (both decode each chunk once on write, to verify it). "
             "Through the API: `points` = `get_defined`, then `H5Dread` + `H5Dwrite` of those points (exact for any "
             "values); `dense` = `dst[...] = src[...]` into a fill-is-undefined dataset (exact here only because no "
             "defined value is NaN). `struct C` / `native C`: the same in C (`bench/sparse/chunk_copy_bench.c`, "
             "timed inside its own process from opening the source to closing the copy).",
             "",
             f"{n} x {n} float32, {chunk} x {chunk} chunks ({(n // chunk) ** 2} chunks), best of {args.reps}, ms:",
             "",
             "| density | defined | stored MiB | struct | native | struct C | native C | points (API) | dense (API) "
             "| points / struct C | dense / struct C | dense / native C |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for density, defined, stored, b in rows:
        ms = " | ".join(f"{b[m] * 1e3:.1f}" for m in METHODS)
        lines.append(f"| {density:.1%} | {defined:,} | {stored / 2**20:.2f} | {ms} | "
                     f"{b['points'] / b['struct C']:.1f}x | {b['dense'] / b['struct C']:.1f}x | "
                     f"{b['dense'] / b['native C']:.1f}x |")
    text = "\n".join(lines)
    print(text)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "chunk_copy.md"), "w") as f:
        f.write(text + "\n")
    results.write(args, "bench/sparse/chunk_copy.py", "\n".join(head + [text]), quick=partial)


if __name__ == "__main__":
    main()
