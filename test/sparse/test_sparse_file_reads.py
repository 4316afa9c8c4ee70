"""Reads of many chunks (coordinate reads, and dense reads on several threads) of a file open
read-only on the sec2 driver take the stored chunks by address from the file's descriptor, on
the workers (hdf5_support/file_reads.cpp); other files are read through HDF5. Both give the
same elements, a userblock included; a file cut short after it was opened read-only fails
naming the chunk and where the file ends (HDF5's own reads fill the missing bytes with zeros,
which the checksums then refuse)."""
import os

import h5py
import numpy as np
import pytest

import h5sparse

SHAPE, CHUNKS = (300, 260), (32, 64)  # 50 chunks, edge chunks included
FILL = 0.0


def model(seed=7):
    rng = np.random.default_rng(seed)
    data = rng.normal(size=SHAPE).astype("<f4")
    data[rng.random(SHAPE) < 0.9] = FILL
    return data


def make(path, data, **file_options):
    with h5py.File(path, "w", **file_options) as f:
        f.create_dataset("d", shape=SHAPE, dtype="<f4", chunks=CHUNKS,
                         **h5sparse.Sparse(fill_is_undefined=True))
        f["d"][...] = data


def reads(d):
    """Coordinate reads of every kind (whole, a box, columns, rows, compressed rows), and dense
    ones: whole, rows and a column (parts of chunks, decoded by ranges)."""
    return {
        "all": h5sparse.read_coo(d),
        "box": h5sparse.read_coo(d, np.s_[40:250, 70:200]),
        "cols": h5sparse.to_scipy(d, cols=[259, 3, 64, 130]).toarray(),
        "rows": h5sparse.to_scipy(d, rows=[299, 0, 33, 150]).toarray(),
        "csr": h5sparse.to_scipy(d, format="csr").toarray(),
        "dense": d[...],
        "dense rows": d[[0, 33, 150, 299], :],
        "dense column": d[:, 130],
    }


def expected(data):
    defined = data != FILL
    return {
        "all": (np.argwhere(defined), data[defined]),
        "box": (np.argwhere(defined[40:250, 70:200]) + [40, 70], data[40:250, 70:200][defined[40:250, 70:200]]),
        "cols": data[:, [259, 3, 64, 130]],
        "rows": data[[299, 0, 33, 150], :],
        "csr": data,
        "dense": data,
        "dense rows": data[[0, 33, 150, 299], :],
        "dense column": data[:, 130],
    }


def same(got, want):
    for name in want:
        if isinstance(want[name], tuple):
            assert np.array_equal(got[name][0], want[name][0]), name
            assert np.array_equal(got[name][1], want[name][1]), name
        else:
            assert np.array_equal(got[name], want[name]), name


@pytest.mark.parametrize("mode, options", [
    ("r", {}),                              # by address
    ("r", {"userblock_size": 4096}),        # by address, the chunk index's addresses past the userblock
    ("r+", {}),                             # through HDF5: the file may change
    ("r", {"driver": "core"}),              # through HDF5: another driver
])
def test_reads_by_address_and_through_hdf5_agree(tmp_path, mode, options):
    path = tmp_path / "m.h5"
    data = model()
    make(path, data, **{k: v for k, v in options.items() if k == "userblock_size"})
    with h5py.File(path, mode, **{k: v for k, v in options.items() if k == "driver"}) as f:
        same(reads(f["d"]), expected(data))


def test_a_file_cut_short_after_opening_fails_naming_the_chunk(tmp_path):
    path = tmp_path / "cut.h5"
    make(path, model(3))
    with h5py.File(path, "r") as f:
        d = f["d"]
        assert f.driver == "sec2"
        h5sparse.read_coo(d)  # the chunk index is now in HDF5's metadata cache
        last = max((d.id.get_chunk_info(i) for i in range(d.id.get_num_chunks())), key=lambda c: c.byte_offset)
        os.truncate(path, last.byte_offset + last.size // 2)
        origin = ", ".join(str(o) for o in last.chunk_offset)
        with pytest.raises(h5sparse.H5SparseError) as err:
            h5sparse.read_coo(d)
        assert f"chunk at ({origin})" in str(err.value), str(err.value)
        with pytest.raises(OSError) as dense_err:
            d[...]
        assert f"chunk at ({origin})" in str(dense_err.value), str(dense_err.value)
        threads = int(os.environ.get("H5SPARSE_NTHREADS") or len(os.sched_getaffinity(0)))
        if threads > 1:  # read by address (a serial read reads through HDF5)
            for e in (err, dense_err):
                assert "the file ends" in str(e.value), str(e.value)
