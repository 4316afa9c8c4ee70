"""The hangar_store example (C++, workloads/hangar): 10,000 samples of random shapes and dtypes
written and read back in both storage modes with every digest verified, corruption caught (by
the structured chunk's section checksum first in sparse mode, by the digest otherwise), a reader
process following the writer through SWMR, and bad input refused with a clear message.

This process runs without the connector; the example runs with it (store_env)."""
import collections
import subprocess
import time

import h5py
import numpy as np
import pytest

from h5sparse import hangar
from hangar_support import (STORE, chunk_location, flip_byte, records_of, run_store, section_sizes,
                            store_env)

MODES = ["dense", "sparse"]


@pytest.mark.parametrize("mode", MODES)
def test_10000_samples_of_random_shapes_and_dtypes(tmp_path, mode):
    rec = tmp_path / "records.txt"
    common = ("--dtypes", "all", "--max-shape", "64,64,3", "--dist", "uniform", "--seed", 7)
    w, _ = run_store("write", tmp_path, "--mode", mode, "--samples", 10000, "--records", rec, *common)
    records = [hangar.parse_record(r) for r in records_of(rec)]
    assert w["samples"] == len(records) == 10000
    assert len({(r.uid, r.dataset, r.index) for r in records}) == 10000       # every sample its own row
    assert len({r.uid for r in records}) == w["files"] == 11                  # one store per dtype
    assert len({r.shape for r in records}) > 5000                             # really random shapes
    assert all(len(r.shape) == 3 and 1 <= min(r.shape) and max(r.shape) <= 64 for r in records)

    # The example verifies every digest and compares each sample with what the writer generated.
    r, _ = run_store("read", tmp_path, "--records", rec, *common)
    assert (r["samples"], r["bytes"]) == (10000, w["bytes"])
    # ... also without the connector (plugin path only), as any HDF5 program would read the files.
    r, _ = run_store("read", tmp_path, "--records", rec, *common, connector=False)
    assert r["samples"] == 10000

    # Independently of the C++ code: h5py reads the rows, Hangar's xxh64_hexdigest matches.
    files = {}
    for record in records[::25]:
        f = files.setdefault(record.uid, h5py.File(tmp_path / f"{record.uid}.hdf5", "r", swmr=True, libver="latest"))
        assert f.attrs["storage_mode"].decode() == mode
        n = int(np.prod(record.shape))
        row = f[str(record.dataset)][record.index]
        sample = row[:n].reshape(record.shape)
        assert hangar.xxh64_hexdigest(sample) == record.digest
        assert not row[n:].any()  # padding (dense) and undefined elements (sparse) read as zero
    for f in files.values():
        f.close()


def test_sparse_files_are_never_larger_than_padded(tmp_path):
    sizes = {}
    for mode in MODES:
        d = tmp_path / mode
        d.mkdir()
        w, _ = run_store("write", d, "--mode", mode, "--samples", 500, "--dtypes", "u1", "--dist", "skewed",
                         "--compression", "none", "--records", d / "r.txt")
        sizes[mode] = w["file_bytes"]
    assert sizes["sparse"] * 2 < sizes["dense"], sizes


@pytest.mark.parametrize("mode,index,maxrows", [("dense", None, 250), ("sparse", None, None),
                                                 ("dense", "extensible", None), ("sparse", "fixed", 250)])
def test_chunk_index_follows_the_mode_unless_chosen(tmp_path, mode, index, maxrows):
    # Dense keeps Hangar's fixed maximum shape; sparse defaults to an unlimited collection axis
    # (an extensible-array chunk index). The extent, and so what readers see, is Hangar's.
    rec = tmp_path / "records.txt"
    w, _ = run_store("write", tmp_path, "--mode", mode, *(("--index", index) if index else ()), "--samples", 300,
                     "--dtypes", "u1", "--dist", "skewed", "--records", rec, "--collection-size", 250)
    assert w["index"] == (index or {"dense": "fixed", "sparse": "extensible"}[mode])
    r, _ = run_store("read", tmp_path, "--records", rec, connector=False)  # digests verified
    assert r["samples"] == 300 and r["bytes"] == w["bytes"]
    (path,) = tmp_path.glob("*.hdf5")
    with h5py.File(path, "r", swmr=True, libver="latest") as f:
        for name in ("0", "1", "99"):  # written, partly written, never written
            assert f[name].shape == (250, 64 * 64 * 3)
            assert f[name].maxshape == (maxrows, 64 * 64 * 3)
        assert not f["1"][50:].any()


def test_random_values_round_trip_and_do_not_compress(tmp_path):
    # The benchmark's check that its conclusions do not hinge on compressible sample values.
    rec = tmp_path / "records.txt"
    common = ("--dtypes", "u1,f8", "--dist", "full", "--max-shape", "16,16,3", "--values", "random", "--seed", 5)
    w, _ = run_store("write", tmp_path, "--mode", "dense", "--samples", 100, "--records", rec, *common)
    assert w["file_bytes"] > w["bytes"]  # Blosc (Hangar's default) cannot shrink random bytes
    r, _ = run_store("read", tmp_path, "--records", rec, *common)  # regenerated and compared exactly
    assert r["bytes"] == w["bytes"]
    _, err = run_store("write", tmp_path, "--values", "noise", expect=1)
    assert "unknown sample values 'noise'" in err, err


def _write_small(tmp_path, mode, compression):
    rec = tmp_path / "records.txt"
    run_store("write", tmp_path, "--mode", mode, "--samples", 20, "--dtypes", "u1", "--dist", "large",
              "--compression", compression, "--records", rec)
    return rec, records_of(rec)


def test_dense_corruption_is_caught_by_the_digest(tmp_path):
    rec, records = _write_small(tmp_path, "dense", "none")
    r = hangar.parse_record(records[5])
    path = tmp_path / f"{r.uid}.hdf5"
    offset, _ = chunk_location(h5py, path, r.dataset, r.index)
    flip_byte(path, offset + 3)  # raw bytes: HDF5 has nothing to check, the digest does
    _, err = run_store("read", tmp_path, "--records", rec, expect=2)
    assert f"DATA CORRUPTION: checksum" in err and records[5] in err, err


def test_sparse_corruption_is_caught_by_the_section_checksum_first(tmp_path):
    rec, records = _write_small(tmp_path, "sparse", "")  # Hangar's default: blosc:lz4hc 5 byte
    r = hangar.parse_record(records[5])
    path = tmp_path / f"{r.uid}.hdf5"
    offset, size = chunk_location(h5py, path, r.dataset, r.index)
    header, s0, s1 = section_sizes(path, offset, size)
    assert 17 <= header <= 57
    flip_byte(path, offset + header + s0 + s1 // 2)  # inside the compressed values (section 1)
    _, err = run_store("read", tmp_path, "--records", rec, expect=1)
    print(err)  # the HDF5 error stack, as a user sees it
    assert "HDF5 error stack" in err and "DATA CORRUPTION" not in err, err
    assert f"dataset '/{r.dataset}', chunk at ({r.index}, 0)" in err and "checksum" in err, err
    # Without the connector the filter refuses the chunk too (HDF5 only says the filter failed).
    _, err = run_store("read", tmp_path, "--records", rec, connector=False, expect=1)
    assert "filter" in err.lower() and "DATA CORRUPTION" not in err, err


@pytest.mark.parametrize("mode", MODES)
def test_edit_that_bypasses_hdf5_checks_is_caught_by_the_digest(tmp_path, mode):
    rec, records = _write_small(tmp_path, mode, "")
    r = hangar.parse_record(records[7])
    with h5py.File(tmp_path / f"{r.uid}.hdf5", "r+") as f:  # a valid HDF5 write: checksums follow it
        d = f[str(r.dataset)]
        d[r.index, 0] = d[r.index, 0] ^ 1
    _, err = run_store("read", tmp_path, "--records", rec, expect=2)
    assert "DATA CORRUPTION" in err and records[7] in err, err


@pytest.mark.parametrize("mode", MODES)
def test_reader_process_reads_while_the_writer_writes(tmp_path, mode):
    rec = tmp_path / "records.txt"
    n = 600
    common = ("--dtypes", "u1,f4", "--seed", 3, "--dist", "uniform")
    writer = subprocess.Popen([STORE, *map(str, ("write", tmp_path, "--mode", mode, "--samples", n, "--records", rec,
                                                 "--delay-ms", 4, "--collection-size", 100, *common))],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=store_env())
    deadline = time.time() + 60
    while not (rec.exists() and rec.stat().st_size > 0):  # the first sample is flushed
        assert writer.poll() is None and time.time() < deadline, writer.communicate()
        time.sleep(0.01)
    reader = subprocess.Popen([STORE, *map(str, ("read", tmp_path, "--records", rec, "--follow", n, "--timeout", 120,
                                                 *common))],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=store_env())
    w_out, w_err = writer.communicate(timeout=300)
    r_out, r_err = reader.communicate(timeout=300)
    assert writer.returncode == 0, w_err
    assert reader.returncode == 0, r_err
    import json
    w, r = json.loads(w_out), json.loads(r_out)
    assert r["samples"] == n and r["bytes"] == w["bytes"]
    assert r["first_read_at"] < w["finished_at"], (r, w)  # it really read while the writer was writing
    assert len(collections.Counter(hangar.parse_record(x).dataset for x in records_of(rec))) >= 3


def test_bad_input_is_refused_with_a_clear_message(tmp_path):
    _, err = run_store("write", tmp_path, "--compression", "complib=blosc:lz4,complevel=12", expect=1)
    assert "complevel" in err and "0" in err, err
    _, err = run_store("write", tmp_path, "--compression", "complib=snappy", expect=1)
    assert "complib" in err, err
    _, err = run_store("write", tmp_path, "--index", "btree", expect=1)
    assert "unknown chunk index 'btree'" in err and "extensible" in err, err
    _, err = run_store("write", tmp_path, "--mode", "packed", expect=1)
    assert "dense, sparse" in err, err
    bad = tmp_path / "bad.txt"
    bad.write_text("00:abc:xyz:0:0:1 2\n")
    _, err = run_store("read", tmp_path, "--records", bad, expect=1)
    assert "checksum is not 16 lowercase hex digits" in err, err
    bad.write_text("00:nofile:0123456789abcdef:0:0:1 2\n")
    _, err = run_store("read", tmp_path, "--records", bad, expect=1)
    assert "nofile.hdf5" in err and "HDF5 error stack" in err, err
