"""Bad input on sparse datasets gets a clear HDF5 error, never a crash or wrong data, and loses
nothing already stored: corrupted chunks (every byte position), selections outside the extent
or of mismatched size, invalid creation options, unsupported types."""
import os
import re
import subprocess
import sys

import h5py
import numpy as np
import pytest

import h5sparse

FILL = -7


def make(path, **kwargs):
    f = h5py.File(path, "w")
    d = f.create_dataset("grp/data", shape=(64, 64), dtype="<i4", chunks=(16, 16), fillvalue=FILL,
                         **h5sparse.Sparse(values=h5sparse.Blosc("lz4", 5, "byte"), selection=h5sparse.Deflate(5)),
                         **kwargs)
    d[3:9, 2:30] = np.arange(6 * 28).reshape(6, 28)
    return f, d


def expected():
    e = np.full((64, 64), FILL, "<i4")
    e[3:9, 2:30] = np.arange(6 * 28).reshape(6, 28)
    return e


def store_chunk_natively(path, name, offset, payload):
    """Stores `payload` as a chunk without the connector, as a corrupting writer could: through
    the connector, H5Dwrite_chunk refuses bytes that are not a structured chunk."""
    env = {k: v for k, v in os.environ.items() if k != "HDF5_VOL_CONNECTOR"}
    script = ("import sys, h5py\n"
              "with h5py.File(sys.argv[1], 'r+') as f:\n"
              "    f[sys.argv[2]].id.write_direct_chunk(eval(sys.argv[3]), bytes.fromhex(sys.argv[4]))\n")
    subprocess.run([sys.executable, "-c", script, str(path), name, repr(tuple(offset)), payload.hex()],
                   env=env, check=True)


def test_every_flipped_byte_is_an_error_naming_dataset_and_chunk(tmp_path):
    path = tmp_path / "flip.h5"
    f, d = make(path)
    with f:
        offset = (0, 16)
        filter_mask, good = d.id.read_direct_chunk(offset)
        assert good[:1] == b"\x02" and filter_mask == 0  # format version 2
        info = d.id.get_chunk_info_by_coord(offset)
        assert info.size == len(good)
        f.flush()
        rng = np.random.default_rng(0)
        trials = int(os.environ.get("H5SPARSE_FLIP_TRIALS", "10000"))
        positions = rng.integers(0, len(good), trials)
        flips = rng.integers(1, 256, trials)
        # Flip bytes of the stored chunk in the file itself (HDF5 keeps no raw chunk bytes in
        # memory; a chunk that fails to decode never enters the chunk cache).
        fd = os.open(path, os.O_RDWR)
        try:
            for pos, flip in zip(positions, flips):
                at = info.byte_offset + int(pos)
                os.pwrite(fd, bytes([good[pos] ^ int(flip)]), at)
                with pytest.raises(OSError) as err:
                    d[0:16, 16:32]
                message = str(err.value)
                assert "dataset '/grp/data', chunk at (0, 16)" in message, message
                os.pwrite(fd, good[pos:pos + 1], at)
        finally:
            os.close(fd)
        assert np.array_equal(d[...], expected())


def test_truncated_and_garbage_chunks(tmp_path):
    path = tmp_path / "trunc.h5"
    f, d = make(path)
    with f:
        _, good = d.id.read_direct_chunk((0, 0))
    for bad in (good[:10], good[:59], good[:-1], b"\0", b"\0" * 200, good + b"x"):
        store_chunk_natively(path, "grp/data", (0, 0), bad)
        with h5py.File(path, "r+") as f:
            d = f["grp/data"]
            with pytest.raises(OSError, match=r"chunk at \(0, 0\)"):
                d[0:4, 0:4]
            # A write into the corrupt chunk must refuse too, not replace what is there.
            with pytest.raises(OSError, match=r"chunk at \(0, 0\)"):
                d[0, 0] = 1
            assert d.id.read_direct_chunk((0, 0))[1] == bad
    with h5py.File(path, "r+") as f:
        f["grp/data"].id.write_direct_chunk((0, 0), good)
        assert np.array_equal(f["grp/data"][...], expected())


def test_selections_outside_extent_or_of_wrong_size(tmp_path):
    f, d = make(tmp_path / "sel.h5")
    with f:
        fspace = d.id.get_space()
        fspace.select_hyperslab((60, 60), (8, 8))
        mspace = h5py.h5s.create_simple((8, 8))
        with pytest.raises(OSError, match="outside the dataset's extent"):
            d.id.write(mspace, fspace, np.ones((8, 8), "<i4"))
        fspace.select_hyperslab((0, 0), (2, 3))
        with pytest.raises(OSError, match="memory selection has 64 elements, file selection 6"):
            d.id.write(mspace, fspace, np.ones((8, 8), "<i4"))
        other = h5py.h5s.create_simple((10, 10))
        with pytest.raises(OSError, match="differs from the dataset's"):
            d.id.write(h5py.h5s.create_simple((1,)), other, np.ones(1, "<i4"))
        assert np.array_equal(d[...], expected())
    with h5py.File(tmp_path / "sel.h5", "r") as f:
        assert np.array_equal(f["grp/data"][...], expected())


@pytest.mark.parametrize("opts, message", [
    ((0, 1, 307, 0, 0), "section filter 307 is not supported"),
    ((0, 0, 1, 1, 0, 1, 12), "deflate level must be 0-9"),
    ((4,), "unknown structured-chunk option bits"),
    ((0, 0, 1, 32001, 1, 7, 0, 0, 0, 0, 5, 3, 1), "blosc shuffle must be"),
    ((0, 1, 1, 0), "end before"),
])
def test_invalid_creation_options(tmp_path, opts, message):
    with h5py.File(tmp_path / "opts.h5", "w") as f:
        f["keep"] = np.arange(5)
        with pytest.raises(ValueError, match=re.escape(message)):
            f.create_dataset("x", shape=(10,), dtype="i4", chunks=(5,), compression=45100, compression_opts=opts)
        assert "x" not in f
    with h5py.File(tmp_path / "opts.h5", "r") as f:
        assert list(f["keep"][...]) == [0, 1, 2, 3, 4]


def test_nested_variable_length_types_are_refused_at_create(tmp_path):
    """Strings, sequences and compounds of them are stored (test_sparse_vl.py); sequences of
    sequences cannot be described in a structured chunk."""
    with h5py.File(tmp_path / "vlen.h5", "w") as f:
        with pytest.raises(ValueError, match="nested variable-length"):
            f.create_dataset("v", shape=(10,), dtype=h5py.vlen_dtype(h5py.vlen_dtype("i4")), chunks=(5,),
                             **h5sparse.Sparse())
        assert "v" not in f


def test_dense_datasets_all_defined_and_erase_refused(tmp_path):
    """RFC: get-defined on a dense dataset returns the selection itself; erase is an error."""
    with h5py.File(tmp_path / "dense.h5", "w") as f:
        d = f.create_dataset("d", data=np.arange(10), chunks=(5,))
        assert np.array_equal(h5sparse.get_defined(d).ravel(), np.arange(10))
        assert np.array_equal(h5sparse.get_defined(d, np.s_[2:4]).ravel(), [2, 3])
        with pytest.raises(h5sparse.H5SparseError, match="erase failed on /d: .*not sparse"):
            h5sparse.erase(d)
        assert list(d[...]) == list(range(10))


def test_changes_to_a_read_only_file_fail_as_hdf5_does(tmp_path):
    """Writes, erases and extent changes of a file opened read-only: HDF5's "no write intent"
    error for each, and the stored data unchanged."""
    path = tmp_path / "ro.h5"
    f, d = make(path, maxshape=(None, 64))
    f.close()
    with h5py.File(path, "r") as f:
        d = f["grp/data"]
        with pytest.raises(OSError, match="no write intent"):
            d[0:16, 0:16] = np.ones((16, 16), "<i4")
        with pytest.raises(OSError, match="no write intent"):
            d[...] = np.zeros((64, 64), "<i4")
        with pytest.raises(h5sparse.H5SparseError, match="erase failed on /grp/data: .*no write intent"):
            h5sparse.erase(d, np.s_[3:5, 2:4])
        with pytest.raises(RuntimeError, match="no write intent"):  # h5py's type for dense too
            d.resize((8, 64))
        assert np.array_equal(d[...], expected())
    with h5py.File(path, "r") as f:
        assert np.array_equal(f["grp/data"][...], expected())


def test_error_records_carry_code_file_and_line(tmp_path):
    """Our records on HDF5's stack say which stable code failed and where in our source, under
    HDF5's own records of the same failure."""
    path = tmp_path / "ro.h5"
    make(path)[0].close()
    with h5py.File(path, "r") as f:
        with pytest.raises(h5sparse.H5SparseError) as caught:
            h5sparse.erase(f["grp/data"], np.s_[3:5, 2:4])
    found = [r for r in caught.value.records if r["class"] == "h5sparse" and "no write intent" in r["message"]]
    assert found, caught.value.records
    assert found[0]["minor"] == "invalid argument"
    assert re.fullmatch(r"(connector|core|hdf5_support)/[a-z_/]+\.(cpp|hpp)", found[0]["file"]), found[0]
    assert found[0]["line"] > 0
    client = [r for r in caught.value.records if r["class"] == "h5sparse" and r["minor"] == "HDF5 call failed"]
    assert client and client[0]["file"].startswith("client/"), caught.value.records  # the C API's own record

    with h5py.File(tmp_path / "dense.h5", "w") as f:
        d = f.create_dataset("d", data=np.arange(10), chunks=(5,))
        with pytest.raises(h5sparse.H5SparseError) as caught:
            h5sparse.erase(d)
    ours = [r for r in caught.value.records if r["class"] == "h5sparse"]
    assert ours and all(r["line"] > 0 and r["file"].endswith(".cpp") for r in ours), caught.value.records
