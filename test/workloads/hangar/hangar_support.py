"""Running the hangar_store example program and poking at its files from the tests."""
import json
import os
import pathlib
import struct
import subprocess
import sys

CONNECTOR = "h5sparse under_vol=0;under_info={}"
_SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
STORE = os.environ.get("H5SPARSE_HANGAR_STORE") or os.path.join(
    os.environ.get("H5SPARSE_BIN_DIR", os.path.join(_SOURCE, "build", "bin")), "hangar_store")


def store_env(connector=True):
    env = dict(os.environ)
    if connector:
        env["HDF5_VOL_CONNECTOR"] = CONNECTOR
    else:
        env.pop("HDF5_VOL_CONNECTOR", None)
    return env


def run_store(*args, connector=True, expect=0):
    """Runs hangar_store; returns (summary dict or None, stderr) after checking the exit status."""
    p = subprocess.run([STORE, *map(str, args)], capture_output=True, text=True, env=store_env(connector), timeout=900)
    assert p.returncode == expect, f"exit {p.returncode}, expected {expect}\nstdout: {p.stdout}\nstderr: {p.stderr}"
    return (json.loads(p.stdout) if p.returncode == 0 else None), p.stderr


def records_of(path):
    return [line for line in open(path).read().splitlines() if line]


def chunk_location(h5py, path, dataset, index):
    """(file offset, size) of the stored chunk holding row `index` of collection `dataset`."""
    with h5py.File(path, "r") as f:
        info = f[str(dataset)].id.get_chunk_info_by_coord((index, 0))
        return info.byte_offset, info.size


def flip_byte(path, offset):
    with open(path, "r+b") as fh:
        fh.seek(offset)
        b = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([b[0] ^ 0x5A]))


def section_sizes(path, offset, size):
    """(header size, stored sizes of sections 0 and 1) of the structured chunk of `size` bytes at
    `offset`, parsed by the benchmarks' independent reader of docs/FORMAT.md."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "bench" / "sparse"))
    import chunkfmt
    with open(path, "rb") as fh:
        fh.seek(offset)
        raw = fh.read(size)
    s0, s1 = chunkfmt.parse_chunk(raw)
    return size - s0.stored_size - s1.stored_size, s0.stored_size, s1.stored_size
