#!/usr/bin/env python3
"""Writes from a dask cluster (issue 37): h5sparse.from_dask on a LocalCluster of 2 worker
processes against write_coo of the same blocks in one process, and against what a user does
today (the blocks gathered to the writer, which calls write_coo on each as it arrives).

    scripts/dev run python3 bench/cluster/run.py            # the table, into bench/RESULTS.md
    scripts/dev run python3 bench/cluster/run.py --quick    # small cases, no section

Cases: a 65536^2 float32 array at 1% (42.9 M elements) and a 1048576^2 one with 2*10^7, both in
16384^2 chunks with Blosc lz4 (byte shuffle, clevel 5) on the values. The array is a dask array
of pydata sparse.COO blocks, each made from its own seed where it is computed (uniform random
coordinates, float32 values): blocks of one chunk in the first case, a row of 64 chunks in the
second. Every variant makes the same blocks:

  one process   each block made and written with write_coo in turn (write_coo encodes its
                chunks on both cores)
  gather        the cluster makes the blocks; the writer takes each as it arrives (as_completed)
                and calls write_coo on it
  from_dask     the cluster makes and encodes the blocks; the writer stores their chunks

The cluster (LocalCluster, 2 worker processes of 1 thread, its scheduler) runs in a helper
process, so the measured process is the writer alone: its CPU time (user + system), the
workers' (from each worker's own getrusage), the writer's share of both, its peak RSS (VmHWM),
and wall time from the first block asked for to the file closed. Two last processes store the
from_dask file's chunk bytes again into a new dataset with H5Dwrite_chunk (h5py's
write_direct_chunk): without the connector (the per-chunk baseline), and through it as from_dask
stores them (each chunk checked by its header and checksums). Then, per element in one
process, a worker's encode rate and the writer's store rate (docs/DESIGN.md's scale on paper).
Best of --reps runs (3) by wall time, each in a fresh process; the first run checks that every
variant's file holds the one-process file's chunks, byte for byte. Files in /dev/shm.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import results  # noqa: E402
from blocks import CASES, QUICK, block_args, block_start, case_of, make_block, the_array  # noqa: E402
from machine import Quiet, back_free_memory, busy_sentence, peak_rss  # noqa: E402

VARIANTS = ("one process", "gather", "from_dask")


def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- one measurement (a process)

def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def new_dataset(f, case):
    import h5sparse
    side, _elements, chunk, _block = case_of(case)
    return f.create_dataset("x", shape=(side, side), dtype="f4", chunks=(chunk, chunk),
                            **h5sparse.Sparse(values=h5sparse.Blosc("lz4", clevel=5, shuffle="byte")))


def workers_cpu(client):
    return sum(client.run(cpu_seconds).values()) if client else 0.0


def write(job):
    """The variant's write into job["path"]: its figures."""
    import h5py
    import h5sparse
    array = the_array(job["case"])
    client = None
    if job["variant"] != "one process":
        from distributed import Client
        client = Client(job["scheduler"])
    before_workers, before = workers_cpu(client), cpu_seconds()
    start = time.perf_counter()
    with h5py.File(job["path"], "w") as f:
        d = new_dataset(f, job["case"])
        chunks = 0
        if job["variant"] == "one process":
            for location in np.ndindex(*array.numblocks):
                block = make_block(*block_args(job["case"]), block_info={None: {"chunk-location": location}})
                h5sparse.write_coo(d, block.coords.T + block_start(array, location), block.data)
        elif job["variant"] == "gather":
            from distributed import as_completed
            parts = array.to_delayed().ravel()
            locations = list(np.ndindex(*array.numblocks))
            futures = dict(zip(client.compute(list(parts)), locations))
            for future in as_completed(futures):
                block = future.result()
                h5sparse.write_coo(d, block.coords.T + block_start(array, futures[future]), block.data)
                future.release()
        else:
            chunks = h5sparse.from_dask(d, array)
    wall = time.perf_counter() - start
    writer = cpu_seconds() - before
    workers = workers_cpu(client) - before_workers
    if client:
        client.close()
    return {"wall": wall, "writer_cpu": writer, "workers_cpu": workers, "rss": peak_rss(), "chunks": chunks}


def direct_writes(job):
    """H5Dwrite_chunk of every chunk of job["path"] into a new file: without the connector, or
    through it with from_dask's DXPL (each chunk checked by its header and checksums)."""
    import h5py
    dxpl = None
    if job["variant"] == "checked store":
        from h5sparse.cluster import _encoded_chunk_writes
        dxpl = _encoded_chunk_writes()
    with h5py.File(job["path"], "r") as f:
        d = f["x"]
        offsets = []
        d.id.chunk_iter(lambda info: offsets.append(tuple(info.chunk_offset)))
        chunks = [d.id.read_direct_chunk(o)[1] for o in offsets]
    with h5py.File(job["path"] + ".direct", "w") as f:
        d = new_dataset(f, job["case"])
        start = time.perf_counter()
        for o, data in zip(offsets, chunks):
            d.id.write_direct_chunk(o, data, filter_mask=0, dxpl=dxpl)
        seconds = time.perf_counter() - start
    os.remove(job["path"] + ".direct")
    return {"per_chunk": seconds / max(1, len(offsets)), "chunks": len(offsets)}


def rates(job):
    """A worker's encode rate and the writer's store rate, per element, in one process: three
    blocks encoded (h5sparse_encode_coo), then their chunks stored as from_dask stores them."""
    import h5py
    from h5sparse import cluster
    side, _elements, _chunk, block = case_of(job["case"])
    made = [make_block(*block_args(job["case"]), block_info={None: {"chunk-location": (i, 0)}}) for i in range(4)]
    with h5py.File(job["path"], "w") as f:
        d = new_dataset(f, job["case"])
        target = cluster._Target(d, (0, 0))
        cluster._encode_job(cluster._Job(target, (0, 0), block, []), made.pop())  # imports, first calls
        n = sum(b.nnz for b in made)
        before = cpu_seconds()
        encoded = [cluster._encode_job(cluster._Job(target, (i * block[0], 0), block, []), b) for i, b in enumerate(made)]
        encode = cpu_seconds() - before
        dxpl = cluster._encoded_chunk_writes()
        start = time.perf_counter()
        for chunks in encoded:
            for offset, data in chunks:
                d.id.write_direct_chunk(offset, data, filter_mask=0, dxpl=dxpl)
        store = time.perf_counter() - start
    stored = sum(len(data) for chunks in encoded for _o, data in chunks)
    return {"encode_ns": encode / n * 1e9, "store_ns": store / n * 1e9, "bytes": stored / n}


def stored_chunks(path):
    import h5py
    with h5py.File(path, "r") as f:
        d = f["x"]
        offsets = []
        d.id.chunk_iter(lambda info: offsets.append(tuple(info.chunk_offset)))
        return {o: d.id.read_direct_chunk(o) for o in offsets}


def worker_main(job):
    if job["variant"] == "rates":
        out = rates(job)
    else:
        out = direct_writes(job) if job["variant"] in ("H5Dwrite_chunk", "checked store") else write(job)
    print(json.dumps(out))


# ---------------------------------------------------------------- the harness

QUIET = Quiet(wait=30, budget=900)  # before each measurement, up to 30 s for other processes to calm


def run_process(job, connector=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLOSC_")}
    env["BLOSC_NTHREADS"] = "1"
    if not connector:
        env.pop("HDF5_VOL_CONNECTOR", None)
    QUIET.wait()
    back_free_memory()
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "worker", json.dumps(job)], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{job['variant']} failed: {p.stderr.strip()[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


class Cluster:
    """A LocalCluster of 2 worker processes (1 thread each) in a helper process."""

    def __enter__(self):
        code = ("import sys, time\nfrom distributed import LocalCluster\n"
                "c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)\n"
                "print(c.scheduler_address, flush=True)\nsys.stdin.read()\nc.close()\n")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, os.environ.get("PYTHONPATH", "")]))
        self.p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=env)
        self.address = self.p.stdout.readline().strip()
        return self

    def __exit__(self, *exc):
        self.p.stdin.close()
        self.p.wait(timeout=60)


def measure(case, reps, workdir):
    path = os.path.join(workdir, "cluster.h5")
    best = {}
    reference = None
    with Cluster() as cluster:
        for rep in range(reps):
            for variant in VARIANTS:
                log(f"{case}: {variant}, run {rep + 1}")
                r = run_process({"case": case, "variant": variant, "path": path, "scheduler": cluster.address})
                if rep == 0:
                    got = stored_chunks(path)
                    if reference is None:
                        reference = got
                    elif got != reference:
                        raise RuntimeError(f"{case}: {variant} stored other chunks than write_coo in one process")
                if variant not in best or r["wall"] < best[variant]["wall"]:
                    best[variant] = r
                if variant == "from_dask":
                    for store in ("H5Dwrite_chunk", "checked store"):
                        d = run_process({"case": case, "variant": store, "path": path},
                                        connector=store == "checked store")
                        if store not in best or d["per_chunk"] < best[store]["per_chunk"]:
                            best[store] = d
    for _rep in range(reps):
        r = run_process({"case": case, "variant": "rates", "path": path})
        if "rates" not in best or r["encode_ns"] < best["rates"]["encode_ns"]:
            best["rates"] = r
    os.remove(path)
    return best


def report(measured, quick):
    lines = results.preamble("Writes from a dask cluster (from_dask)", quick=quick)
    if QUIET.busy["started_busy"]:
        lines += [busy_sentence(QUIET.busy), ""]
    lines += ["| case | variant | wall s | vs one process | writer CPU s | workers CPU s | writer share "
              "| writer peak RSS MiB |", "|---|---|---|---|---|---|---|---|"]
    for case, best in measured.items():
        base = best["one process"]["wall"]
        for variant in VARIANTS:
            r = best[variant]
            share = r["writer_cpu"] / (r["writer_cpu"] + r["workers_cpu"]) if r["workers_cpu"] else 1.0
            lines.append(f"| {case} | {variant} | {r['wall']:.2f} | {r['wall'] / base:.2f}x | {r['writer_cpu']:.2f} | "
                         f"{r['workers_cpu']:.2f} | {share:.0%} | {r['rss'] / 2**20:.0f} |")
    lines += ["", "Per chunk: H5Dwrite_chunk of the same bytes without the connector; the writer's store (through "
              "the connector, checked by header and checksums); all of the writer's CPU time over its chunks "
              "(dask's client included).", "",
              "| case | chunks | H5Dwrite_chunk | store | ratio | writer CPU per chunk | ratio |",
              "|---|---|---|---|---|---|---|"]
    for case, best in measured.items():
        r, d, c = best["from_dask"], best["H5Dwrite_chunk"], best["checked store"]
        per = r["writer_cpu"] / r["chunks"]
        lines.append(f"| {case} | {r['chunks']} | {d['per_chunk'] * 1e3:.3f} ms | {c['per_chunk'] * 1e3:.3f} ms | "
                     f"{c['per_chunk'] / d['per_chunk']:.2f}x | {per * 1e3:.3f} ms | {per / d['per_chunk']:.2f}x |")
    lines += ["", "Per element, in one process (three blocks): a worker's encoding (CPU time: grouping, merge, "
              "selection, lz4, checksums) and the writer's store (wall time), and the stored bytes; a fourth block, "
              "encoded first, is not counted (imports, first calls).", "",
              "| case | encode ns/element | store ns/element | ratio | stored bytes/element |", "|---|---|---|---|---|"]
    for case, best in measured.items():
        r = best["rates"]
        lines.append(f"| {case} | {r['encode_ns']:.1f} | {r['store_ns']:.2f} | {r['encode_ns'] / r['store_ns']:.0f}x | "
                     f"{r['bytes']:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "worker":
        return worker_main(json.loads(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--results-md")
    args = ap.parse_args()
    cases = QUICK if args.quick else CASES
    with tempfile.TemporaryDirectory(dir="/dev/shm") as workdir:
        measured = {case: measure(case, args.reps, workdir) for case in cases}
    markdown = report(measured, args.quick)
    print(markdown)
    if args.results_md or not args.quick:
        results.replace_section("bench/cluster/run.py", markdown, **({"path": args.results_md} if args.results_md else {}))


if __name__ == "__main__":
    main()
