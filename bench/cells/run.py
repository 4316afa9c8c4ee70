#!/usr/bin/env python3
"""Cells and genes (issue 36): one cells x genes count matrix read along both axes from anndata's
CSR and CSC groups (read by anndata's own backed mode), from TileDB-SOMA's sparse X (when
tiledbsoma is installed), and from h5sparse datasets at several chunk shapes.

    bench/cells/venv                         # makes build/bench-cells/venv (PyPI + the wheel)
    build/bench-cells/venv/bin/python bench/cells/run.py            # the table, into RESULTS.md
    build/bench-cells/venv/bin/python bench/cells/run.py --quick    # 10,000 x 4,000, no section
    build/bench-cells/venv/bin/python bench/cells/run.py --cells 200000   # 4x: a section of its own

The matrix: `--cells` x `--genes` (default 50,000 x 20,000) float32 counts, 3.5% defined, gene
use skewed as in real data (each gene's share of cells drawn from a log-normal), seeded. Each
layout is written once into a directory under --dir (default /dev/shm if it has room, else
/tmp: the page cache either way, so the times are CPU, not disk; removed once measured unless
--dir is given) and then measured in a fresh process of its own (its peak RSS is that
process's), every access best of --repeat (3):

  one gene       the gene nearest 10.5% of cells, as a CSC column (scipy)
  50 genes       50 random genes in one call, as CSC
  cell band      1,024 contiguous cells, as CSR
  512 cells      512 random cells in one call, as CSR
  batches        block-shuffled batches of 256 cells over all cells (cells a second): anndata's
                 backed rows in 64-row blocks, h5sparse.RowBatches, SOMA by row blocks
  all as CSR     the whole matrix into scipy CSR
  write          from scipy CSR into a new file (the layout's own writer)

Codecs: "none" everywhere, then "same": LZF for anndata (its own choice of fast codec) and for
h5sparse (Blosc lz4 with byte shuffle too), lz4 with byte shuffle for TileDB-SOMA. Figures are
milliseconds unless said; ratios are against anndata's CSR (cells) or CSC (genes) of the same
codec, as the issue's targets are.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import results  # noqa: E402

ACCESSES = ("one gene", "50 genes", "cell band", "512 cells", "batches", "all as CSR", "write")


def make_matrix(cells, genes, density, seed):
    """A CSR matrix of float32 counts: gene j is defined in a share p_j of cells, p_j log-normal
    with mean `density` (capped at 0.95), the cells of each gene uniform."""
    import scipy.sparse
    rng = np.random.default_rng(seed)
    share = rng.lognormal(0.0, 1.5, genes)
    share = np.minimum(share * density / share.mean(), 0.95)
    counts = rng.binomial(cells, share)
    rows = np.concatenate([rng.choice(cells, n, replace=False) for n in counts]).astype(np.int32)
    cols = np.repeat(np.arange(genes, dtype=np.int32), counts)
    values = (1 + rng.geometric(0.4, len(rows))).astype(np.float32)
    return scipy.sparse.csr_matrix((values, (rows, cols)), shape=(cells, genes))


def queries(matrix, seed):
    rng = np.random.default_rng(seed + 1)
    cells, genes = matrix.shape
    per_gene = np.bincount(matrix.indices, minlength=genes)
    gene = int(np.argmin(np.abs(per_gene - 0.105 * cells)))
    return {"cells_total": cells, "gene": gene, "gene_nnz": int(per_gene[gene]),
            "genes": np.sort(rng.choice(genes, 50, replace=False)),
            "band": int(rng.integers(0, cells - 1024)),
            "cells": np.sort(rng.choice(cells, 512, replace=False))}


# ---------------------------------------------------------------- layouts: write and open

class AnnData:
    """anndata's own CSR or CSC groups, written by AnnData.write_h5ad, read in backed mode."""

    def __init__(self, form, codec):
        self.form, self.codec = form, codec

    def write(self, matrix, path):
        import anndata
        x = matrix if self.form == "csr" else matrix.tocsc()
        anndata.AnnData(X=x).write_h5ad(path, compression=None if self.codec == "none" else "lzf")

    def open(self, path):
        import anndata
        self.adata = anndata.read_h5ad(path, backed="r")
        return self.adata.X

    def gene(self, x, g):
        return x[:, [g]]

    def genes(self, x, gs):
        return x[:, gs]

    def band(self, x, a, n):
        return x[a:a + n]

    def cells(self, x, cs):
        return x[cs]

    def batch_rows(self, x, a, b):
        return x[a:b]

    def everything(self, x):
        return x.to_memory().tocsr()


class H5Sparse:
    """A sparse dataset of `chunks`, written by h5sparse.from_scipy, read by h5sparse.to_scipy."""

    def __init__(self, chunks, codec):
        self.chunks, self.codec = chunks, codec

    def filters(self):
        import h5sparse
        if self.codec == "none":
            return h5sparse.Sparse()
        if self.codec == "lzf":
            return h5sparse.Sparse(values=h5sparse.LZF())
        return h5sparse.Sparse(values=h5sparse.Blosc("lz4", 5, "byte"))

    def write(self, matrix, path):
        import h5sparse
        with h5sparse.File(path, "w") as f:
            d = f.create_dataset("X", shape=matrix.shape, dtype=matrix.dtype,
                                 chunks=tuple(min(c, n) for c, n in zip(self.chunks, matrix.shape)),
                                 **self.filters())
            h5sparse.from_scipy(d, matrix)

    def open(self, path):
        import h5sparse
        self.file = h5sparse.File(path, "r")
        return self.file["X"]

    def gene(self, x, g):
        import h5sparse
        return h5sparse.to_scipy(x, cols=[g], format="csc")

    def genes(self, x, gs):
        import h5sparse
        return h5sparse.to_scipy(x, cols=gs, format="csc")

    def band(self, x, a, n):
        import h5sparse
        return h5sparse.to_scipy(x, np.s_[a:a + n, :], format="csr")

    def cells(self, x, cs):
        import h5sparse
        return h5sparse.to_scipy(x, rows=cs, format="csr")

    def batch_rows(self, x, a, b):
        raise NotImplementedError  # RowBatches reads its own blocks

    def everything(self, x):
        import h5sparse
        return h5sparse.to_scipy(x, format="csr")


class Soma:
    """TileDB-SOMA's SparseNDArray as an experiment's X holds it: int64 dimensions, float32
    values, its default tiles; its default filters, or lz4 with byte shuffle on every column."""

    def __init__(self, codec):
        self.codec = codec

    def platform_config(self):
        if self.codec == "none":
            return {"tiledb": {"create": {"dims": {"soma_dim_0": {"filters": []}, "soma_dim_1": {"filters": []}},
                                          "attrs": {"soma_data": {"filters": []}}}}}
        lz4 = ["ByteShuffleFilter", {"_type": "LZ4Filter", "level": 5}]
        return {"tiledb": {"create": {"dims": {"soma_dim_0": {"filters": lz4}, "soma_dim_1": {"filters": lz4}},
                                      "attrs": {"soma_data": {"filters": lz4}}}}}

    def write(self, matrix, path):
        import pyarrow as pa
        import tiledbsoma
        coo = matrix.tocoo()
        with tiledbsoma.SparseNDArray.create(path, type=pa.float32(), shape=matrix.shape,
                                             platform_config=self.platform_config()) as a:
            a.write(pa.Table.from_pydict({"soma_dim_0": coo.row.astype(np.int64),
                                          "soma_dim_1": coo.col.astype(np.int64),
                                          "soma_data": coo.data}))

    def open(self, path):
        import tiledbsoma
        self.array = tiledbsoma.SparseNDArray.open(path)
        return self.array

    def _matrix(self, x, coords, row_ids, col_ids, fmt):
        import scipy.sparse
        t = x.read(coords).tables().concat()
        r = np.searchsorted(row_ids, t["soma_dim_0"].to_numpy())
        c = np.searchsorted(col_ids, t["soma_dim_1"].to_numpy())
        m = scipy.sparse.coo_matrix((t["soma_data"].to_numpy(), (r, c)), shape=(len(row_ids), len(col_ids)))
        return m.tocsc() if fmt == "csc" else m.tocsr()

    def gene(self, x, g):
        return self._matrix(x, (slice(None), [g]), np.arange(x.shape[0]), np.array([g]), "csc")

    def genes(self, x, gs):
        return self._matrix(x, (slice(None), gs), np.arange(x.shape[0]), np.asarray(gs), "csc")

    def band(self, x, a, n):
        return self._matrix(x, (slice(a, a + n - 1),), np.arange(a, a + n), np.arange(x.shape[1]), "csr")

    def cells(self, x, cs):
        return self._matrix(x, (cs,), np.asarray(cs), np.arange(x.shape[1]), "csr")

    def batch_rows(self, x, a, b):
        return self.band(x, a, b - a)

    def everything(self, x):
        return self._matrix(x, (), np.arange(x.shape[0]), np.arange(x.shape[1]), "csr")


def layouts(quick):
    chunk_shapes = [(512, 1024), (4096, 256), (1024, 512)] if not quick else [(512, 1024), (2048, 256)]
    out = {}
    for codec in ("none", "same"):
        out[f"anndata CSR / {codec}"] = AnnData("csr", codec)
        out[f"anndata CSC / {codec}"] = AnnData("csc", codec)
        out[f"TileDB-SOMA / {codec}"] = Soma(codec)
        for shape in chunk_shapes:
            name = f"h5sparse {shape[0]}x{shape[1]}"
            if codec == "none":
                out[f"{name} / none"] = H5Sparse(shape, "none")
            else:
                out[f"{name} LZF / same"] = H5Sparse(shape, "lzf")
                out[f"{name} lz4 / same"] = H5Sparse(shape, "lz4")
    return out


# ---------------------------------------------------------------- one layout, in its own process

def best(f, repeat):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3, out


def batches_rate(layout, x, n_cells, seconds=2.0):
    """Cells a second of block-shuffled batches (256 cells, 64-cell blocks, 16 blocks a buffer)."""
    rng = np.random.default_rng(7)
    t, done = time.perf_counter(), 0
    if isinstance(layout, H5Sparse):
        import h5sparse
        for batch in h5sparse.RowBatches(x, batch_size=256, block_size=64, buffer_blocks=16, seed=7):
            done += len(batch.rows)
            if time.perf_counter() - t > seconds:
                break
    else:
        starts = rng.permutation(np.arange(0, n_cells, 64))
        for i in range(0, len(starts), 16):
            parts = [layout.batch_rows(x, s, min(s + 64, n_cells)) for s in starts[i:i + 16]]
            import scipy.sparse
            buffer = scipy.sparse.vstack(parts, format="csr")
            order = rng.permutation(buffer.shape[0])
            for j in range(0, len(order), 256):
                done += buffer[order[j:j + 256]].shape[0]
            if time.perf_counter() - t > seconds:
                break
    return done / (time.perf_counter() - t)


def measure(name, path, q, matrix_path, repeat):
    layout = layouts(False).get(name) or layouts(True)[name]
    import scipy.sparse
    x = layout.open(path)
    out, got = {}, {}
    out["one gene"], got["one gene"] = best(lambda: layout.gene(x, q["gene"]), repeat)
    out["50 genes"], got["50 genes"] = best(lambda: layout.genes(x, q["genes"]), repeat)
    out["cell band"], got["cell band"] = best(lambda: layout.band(x, q["band"], 1024), repeat)
    out["512 cells"], got["512 cells"] = best(lambda: layout.cells(x, q["cells"]), repeat)
    out["batches"] = batches_rate(layout, x, q["cells_total"])
    out["all as CSR"], got["all as CSR"] = best(lambda: layout.everything(x), min(repeat, 3))
    out["peak RSS MiB"] = peak_rss_mib()  # before the check's copy
    matrix = scipy.sparse.load_npz(matrix_path).tocsr()
    expect = {"one gene": matrix[:, [q["gene"]]], "50 genes": matrix[:, q["genes"]],
              "cell band": matrix[q["band"]:q["band"] + 1024], "512 cells": matrix[q["cells"]],
              "all as CSR": matrix}
    for access, e in expect.items():
        check(name, access, got[access], e)
    return out


def peak_rss_mib():
    """This process's peak resident memory (VmHWM: ru_maxrss would carry the parent's over exec)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def check(name, access, got, expect):
    import scipy.sparse
    got = scipy.sparse.csr_matrix(got)
    expect = scipy.sparse.csr_matrix(expect)
    if got.shape != expect.shape or (got != expect).nnz:
        raise SystemExit(f"{name}: {access} read wrong data (shape {got.shape}, expected {expect.shape})")


def size_of(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def available(name):
    if name.startswith("TileDB"):
        try:
            import tiledbsoma  # noqa: F401
        except ImportError:
            return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cells", type=int, default=50_000)
    parser.add_argument("--genes", type=int, default=20_000)
    parser.add_argument("--density", type=float, default=0.035)
    parser.add_argument("--seed", type=int, default=36)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", help="layouts whose name contains this text")
    parser.add_argument("--dir", help="where the files go (default a new directory in /dev/shm or /tmp)")
    parser.add_argument("--worker", nargs=4, metavar=("NAME", "PATH", "QUERIES", "MATRIX"), help=argparse.SUPPRESS)
    results.add_argument(parser)
    args = parser.parse_args()
    if args.worker:
        name, path, qpath, mpath = args.worker
        if name.startswith("h5sparse"):
            import h5sparse  # noqa: F401 - before h5py: its HDF5 then loads the connector
        with open(qpath) as f:
            q = json.load(f)
        print(json.dumps(measure(name, path, q, mpath, args.repeat)))
        return
    import h5sparse  # noqa: F401 - before anndata's h5py: this process writes through the connector
    if args.quick:
        args.cells, args.genes = 10_000, 4_000
    import scipy.sparse
    base = args.dir or tempfile.mkdtemp(prefix="h5sparse-cells-",
                                         dir="/dev/shm" if shutil.disk_usage("/dev/shm").free > 8 << 30 else None)
    os.makedirs(base, exist_ok=True)
    t = time.perf_counter()
    matrix = make_matrix(args.cells, args.genes, args.density, args.seed)
    print(f"matrix {matrix.shape}, {matrix.nnz:,} defined, made in {time.perf_counter() - t:.1f} s", flush=True)
    mpath = os.path.join(base, "matrix.npz")
    scipy.sparse.save_npz(mpath, matrix, compressed=False)
    q = queries(matrix, args.seed)
    qpath = os.path.join(base, "queries.json")
    with open(qpath, "w") as f:
        json.dump({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in q.items()}, f)
    rows = {}
    try:
        for name, layout in layouts(args.quick).items():
            if args.only and args.only not in name or not available(name):
                continue
            path = os.path.join(base, name.replace(" ", "_").replace("/", "") + (".h5" if "SOMA" not in name else ""))
            write_ms, _ = best(lambda: (shutil.rmtree(path, True) if os.path.isdir(path) else None,
                                        layout.write(matrix, path)), 1)
            got = subprocess.run([sys.executable, os.path.abspath(__file__), "--repeat", str(args.repeat),
                                  "--worker", name, path, qpath, mpath], capture_output=True, text=True)
            if got.returncode:
                raise SystemExit(f"{name}: {got.stderr[-3000:]}")
            row = json.loads(got.stdout.strip().splitlines()[-1])
            row["write"], row["size MiB"] = write_ms, size_of(path) / 2**20
            if not args.dir:  # one layout's file at a time: the larger matrix's fill memory otherwise
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
            rows[name] = row
            print(name, {k: round(v, 1) for k, v in row.items()}, flush=True)
    finally:
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)
    report(args, matrix, q, rows)


def command_of(args):
    extra = " --quick" if args.quick else ""
    if not args.quick and (args.cells, args.genes) != (50_000, 20_000):
        extra = f" --cells {args.cells} --genes {args.genes}"
    return "build/bench-cells/venv/bin/python bench/cells/run.py" + extra


def report(args, matrix, q, rows):
    header = ["layout / codec", "one gene", "50 genes", "cell band", "512 cells", "batches (cells/s)",
              "all as CSR", "write", "size MiB", "peak RSS MiB"]
    table = []
    for name, r in rows.items():
        codec = name.split(" / ")[1]
        csr, csc = rows.get(f"anndata CSR / {codec}"), rows.get(f"anndata CSC / {codec}")

        def cell(key, against, lower_is_better=True):
            v = r[key]
            text = f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"
            if against and name not in (f"anndata CSR / {codec}", f"anndata CSC / {codec}"):
                ratio = v / against[key] if lower_is_better else against[key] / v
                text += f" ({ratio:.2g}x)"
            return text
        table.append([name, cell("one gene", csc), cell("50 genes", csc), cell("cell band", csr),
                      cell("512 cells", csr), cell("batches", csr, lower_is_better=False),
                      cell("all as CSR", csr), cell("write", csr), cell("size MiB", csr),
                      f"{r['peak RSS MiB']:,.0f}"])
    md = results.preamble("Cells and genes (issue 36)", args.quick,
                                                        command=command_of(args)) + [
          f"{matrix.shape[0]:,} cells x {matrix.shape[1]:,} genes, {matrix.nnz:,} float32 counts "
          f"({matrix.nnz / matrix.shape[0] / matrix.shape[1]:.1%}); one gene = {q['gene_nnz']:,} cells. "
          f"Milliseconds, best of {args.repeat} ({min(args.repeat, 3)} for all as CSR) in one process per layout "
          "(batches: cells a second, 2 s). "
          "In parentheses, the time over anndata CSC's (genes) or CSR's (cells and the rest) with the same codec "
          "(batches: CSR's rate over this one's); below 1 is faster.", "",
          "", results.md_table(header, table, right_from=1)]
    text = "\n".join(md)
    print(text)
    default = (args.cells, args.genes, args.density) == (50_000, 20_000, 0.035)
    name = "bench/cells/run.py" + ("" if default or args.quick else f" --cells {args.cells} --genes {args.genes}")
    results.write(args, name, text, quick=args.quick)


if __name__ == "__main__":
    main()
