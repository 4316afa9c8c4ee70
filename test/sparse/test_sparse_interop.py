"""The Python ecosystem's sparse types on real files through the connector: scipy.sparse COO,
CSR and CSC, pydata sparse.COO with the dataset's fill value, and dask arrays of sparse.COO
blocks whose reductions equal numpy's on the dense data."""
import dask.array as da
import h5py
import numpy as np
import pytest
import scipy.sparse
import sparse

import h5sparse


def test_scipy_round_trips(tmp_path):
    m = scipy.sparse.random(300, 200, density=0.05, format="csr", random_state=4, dtype=np.float64)
    with h5py.File(tmp_path / "s.h5", "w") as f:
        d = f.create_dataset("x", shape=(1000, 500), dtype="f8", chunks=(64, 64),
                             **h5sparse.Sparse(values=h5sparse.Blosc("lz4")))
        h5sparse.from_scipy(d, m, offset=(100, 250))
        for fmt, cls in (("coo", scipy.sparse.coo_array), ("csr", scipy.sparse.csr_array),
                         ("csc", scipy.sparse.csc_array)):
            got = h5sparse.to_scipy(d, np.s_[100:400, 250:450], format=fmt)
            assert isinstance(got, cls) and got.shape == (300, 200)
            np.testing.assert_array_equal(got.toarray(), m.toarray())
        whole = h5sparse.to_scipy(d, format="csr")
        assert whole.shape == (1000, 500) and whole.nnz == m.nnz
        np.testing.assert_array_equal(whole.toarray()[100:400, 250:450], m.toarray())
        part = h5sparse.to_scipy(d, np.s_[150:160, :])
        np.testing.assert_array_equal(part.toarray(), d[150:160, :])
        with pytest.raises(TypeError, match="step 1"):
            h5sparse.to_scipy(d, np.s_[::2, :])
        with pytest.raises(IndexError, match="outside the extent"):
            h5sparse.from_scipy(d, m, offset=(900, 0))
        with pytest.raises(IndexError, match="outside the extent"):
            h5sparse.from_scipy(d, m, offset=(0, -1))
        assert h5sparse.to_scipy(d).nnz == m.nnz  # nothing written by the refused call


def test_scipy_arrays_come_from_the_library_in_compressed_rows(tmp_path):
    with h5py.File(tmp_path / "r.h5", "w") as f:
        d = f.create_dataset("x", shape=(70, 90), dtype="i2", chunks=(16, 8), **h5sparse.Sparse())
        m = scipy.sparse.random(70, 90, density=0.1, format="csr", random_state=7, dtype=np.int16)
        h5sparse.from_scipy(d, m)
        csr = h5sparse.to_scipy(d, np.s_[3:60, 11:80], format="csr")
        assert csr.indices.dtype == csr.indptr.dtype == np.int32 and csr.data.dtype == np.int16
        assert csr.has_sorted_indices  # row-major from the library, nothing sorted after
        np.testing.assert_array_equal(csr.toarray(), m.toarray()[3:60, 11:80])
        assert h5sparse.to_scipy(d, np.s_[5:5, :], format="csr").shape == (0, 90)
        assert h5sparse.to_scipy(d, np.s_[:, 89:89]).nnz == 0
        wide = f.create_dataset("wide", shape=(3, 2**33), dtype="f4", chunks=(2, 4096), **h5sparse.Sparse())
        h5sparse.write_coo(wide, [[0, 2**33 - 1], [2, 5], [2, 2**32]], [1, 2, 3])
        csr = h5sparse.to_scipy(wide, format="csr")  # columns beyond 2^31: int64 indices
        assert csr.indices.dtype == np.int64
        assert csr.indptr.tolist() == [0, 1, 1, 3] and csr.indices.tolist() == [2**33 - 1, 5, 2**32]
        strings = f.create_dataset("s", shape=(4, 4), dtype=h5py.string_dtype(), chunks=(2, 2),
                                   **h5sparse.Sparse())
        with pytest.raises(TypeError, match="variable-length"):
            h5sparse.to_scipy(strings)


def test_scipy_arrays_of_row_and_column_lists(tmp_path):
    m = scipy.sparse.random(300, 260, density=0.2, format="csr", random_state=5, dtype=np.float32)
    with h5py.File(tmp_path / "l.h5", "w") as f:
        for name, values in (("plain", None), ("lzf", h5sparse.LZF())):
            d = f.create_dataset(name, shape=m.shape, dtype="f4", chunks=(64, 128), **h5sparse.Sparse(values=values))
            h5sparse.from_scipy(d, m)
            genes, cells = [250, 3, 7, 8, 9, 3, -1], [299, 0, 64, 65, 1, 128]
            for fmt in ("csr", "csc", "coo"):
                got = h5sparse.to_scipy(d, cols=genes, format=fmt)
                assert got.format == fmt and got.shape == (300, len(genes))
                np.testing.assert_array_equal(got.toarray(), m.toarray()[:, genes])
            got = h5sparse.to_scipy(d, rows=cells, format="csr")
            assert got.has_sorted_indices
            np.testing.assert_array_equal(got.toarray(), m.toarray()[cells])
            got = h5sparse.to_scipy(d, rows=cells, cols=genes)
            np.testing.assert_array_equal(got.toarray(), m.toarray()[np.ix_(cells, genes)])
            assert h5sparse.to_scipy(d, rows=[], format="csr").shape == (0, 260)
        with pytest.raises(IndexError, match="outside a dimension of 260"):
            h5sparse.to_scipy(d, cols=[260])
        with pytest.raises(TypeError, match="integer indices"):
            h5sparse.to_scipy(d, rows=[0.5])
        with pytest.raises(TypeError, match="not both"):
            h5sparse.to_scipy(d, np.s_[0:3, :], rows=[1])


def test_matrix_chunks_serve_rows_and_columns_alike(tmp_path):
    # About 16,384 defined elements a chunk, square in elements, powers of two, within the matrix.
    assert h5sparse.matrix_chunks((50_000, 20_000), 35_000_000) == (512, 1024)
    assert h5sparse.matrix_chunks((1000, 10), 5000) == (1000, 10)
    assert h5sparse.matrix_chunks((2**40, 2**40), 10**10) == (8192, 8192)  # at most 2^26 elements
    rows, cols = h5sparse.matrix_chunks((10**6, 10**6), 10**9)
    assert rows <= cols <= 2 * rows and 0.5 <= rows * cols * 1e-3 / 16384 <= 2
    with pytest.raises(ValueError, match="2-D"):
        h5sparse.matrix_chunks((10,), 5)
    with pytest.raises(TypeError, match="nnz"):
        h5sparse.Sparse(chunks="auto")
    m = scipy.sparse.random(3000, 2000, density=0.03, format="csr", random_state=2, dtype=np.float32)
    with h5py.File(tmp_path / "a.h5", "w") as f:
        d = f.create_dataset("x", shape=m.shape, dtype="f4", **h5sparse.Sparse(chunks="auto", shape=m.shape, nnz=m.nnz))
        assert d.chunks == h5sparse.matrix_chunks(m.shape, m.nnz) == (512, 1024)
        h5sparse.from_scipy(d, m)
        np.testing.assert_array_equal(h5sparse.to_scipy(d, cols=[5, 1500]).toarray(), m.toarray()[:, [5, 1500]])


def test_scipy_matrices_are_written_a_band_of_chunk_rows_at_a_time(tmp_path, monkeypatch):
    import h5sparse.interop as interop
    monkeypatch.setattr(interop, "_BAND_ENTRIES", 500)
    calls = []
    write = interop.write_coo
    monkeypatch.setattr(interop, "write_coo", lambda d, c, v: (calls.append(c.copy()), write(d, c, v)))
    rng = np.random.default_rng(3)
    m = scipy.sparse.random(1000, 300, density=0.02, format="coo", random_state=rng, dtype=np.float32)
    dup = scipy.sparse.coo_array((np.ones(50, np.float32), (m.row[:50], m.col[:50])), shape=m.shape)
    with h5py.File(tmp_path / "b.h5", "w") as f:
        d = f.create_dataset("x", shape=(1100, 400), dtype="f4", chunks=(32, 64), **h5sparse.Sparse())
        h5sparse.from_scipy(d, (m + dup).tocoo(), offset=(13, 7))  # COO with duplicates: summed
        assert len(calls) > 4
        chunk_rows = [set(np.unique(c[:, 0] // 32).tolist()) for c in calls]
        for i in range(len(chunk_rows)):
            for j in range(i):
                assert not chunk_rows[i] & chunk_rows[j], "a row of chunks written by two calls"
        expected = np.zeros((1100, 400), np.float32)
        expected[13:1013, 7:307] = (m + dup).toarray()
        np.testing.assert_array_equal(d[...], expected)
        assert h5sparse.to_scipy(d).nnz == (m + dup).tocsr().nnz
        calls.clear()
        h5sparse.from_scipy(d, scipy.sparse.csc_array((1000, 300), dtype=np.float32))  # empty: no call
        assert calls == []
        h5sparse.from_scipy(d, scipy.sparse.csc_array(m), offset=(100, 93))
        expected[100:1100, 93:393] = np.where(m.toarray() != 0, m.toarray(), expected[100:1100, 93:393])
        np.testing.assert_array_equal(d[...], expected)
        with pytest.raises(h5sparse.H5SparseError, match="convert"):
            h5sparse.from_scipy(d, scipy.sparse.random(10, 10, density=0.5, format="csr", dtype=np.complex64))
        np.testing.assert_array_equal(d[...], expected)


def test_pydata_sparse_round_trips_with_the_fill_value(tmp_path):
    s = sparse.random((20, 30, 40), density=0.02, random_state=2, fill_value=-1.5)
    with h5py.File(tmp_path / "p.h5", "w") as f:
        d = f.create_dataset("x", shape=(20, 30, 40), dtype="f8", chunks=(8, 8, 8), fillvalue=-1.5,
                             **h5sparse.Sparse())
        h5sparse.from_sparse(d, s)
        got = h5sparse.to_sparse(d)
        assert got.fill_value == -1.5 and got.nnz == s.nnz
        np.testing.assert_array_equal(got.todense(), s.todense())
        np.testing.assert_array_equal(got.todense(), d[...])
        box = h5sparse.to_sparse(d, np.s_[3:9, :, 10:20])
        np.testing.assert_array_equal(box.todense(), d[3:9, :, 10:20])
        with pytest.raises(ValueError, match="fill value"):
            h5sparse.from_sparse(d, sparse.random((2, 2, 2), density=0.5, fill_value=0.0))
        small = sparse.random((4, 5, 6), density=0.3, random_state=3, fill_value=-1.5)
        before = small.coords.copy()
        e = f.create_dataset("e", shape=(20, 30, 40), dtype="f8", chunks=(8, 8, 8), fillvalue=-1.5,
                             **h5sparse.Sparse())
        h5sparse.from_sparse(e, small, offset=(16, 25, 34))
        np.testing.assert_array_equal(small.coords, before)  # the caller's array is left alone
        np.testing.assert_array_equal(h5sparse.to_sparse(e, np.s_[16:20, 25:30, 34:40]).todense(), small.todense())
        assert h5sparse.to_sparse(e).nnz == small.nnz
        line = f.create_dataset("line", shape=(50,), dtype="f8", chunks=(8,), fillvalue=-1.5, **h5sparse.Sparse())
        one_d = sparse.random((10,), density=0.5, random_state=1, fill_value=-1.5)
        before = one_d.coords.copy()
        h5sparse.from_sparse(line, one_d, offset=(40,))  # coords.T is contiguous: still not changed
        np.testing.assert_array_equal(one_d.coords, before)
        np.testing.assert_array_equal(line[40:], one_d.todense())
        assert h5sparse.to_sparse(line).nnz == one_d.nnz


@pytest.mark.parametrize("fill", [0.0, 2.0])
def test_dask_reductions_equal_numpys(tmp_path, fill):
    rng = np.random.default_rng(6)
    path = tmp_path / "d.h5"
    with h5py.File(path, "w") as f:
        d = f.create_dataset("x", shape=(500, 300), dtype="f4", chunks=(64, 32), fillvalue=fill,
                             **h5sparse.Sparse())
        coords = np.stack([rng.integers(0, 500, 4000), rng.integers(0, 300, 4000)], axis=1)
        h5sparse.write_coo(d, coords, rng.normal(size=4000).astype("f4"))
        dense = d[...]
    with h5py.File(path, "r") as f:
        x = h5sparse.to_dask(f["x"])
        assert x.chunks[0][0] == 64 and x.chunks[1][0] == 32
        block = x.blocks[0, 0].compute()
        assert isinstance(block, sparse.COO) and block.fill_value == fill
        np.testing.assert_allclose(x.max(axis=0).compute().todense(), dense.max(axis=0))
        np.testing.assert_array_equal(x[100:200, 17:99].compute().todense(), dense[100:200, 17:99])
        if fill == 0:  # pydata sparse combines partial sums only when their fill values agree
            np.testing.assert_allclose(scalar(x.sum().compute()), dense.sum(dtype="f8"), rtol=1e-5)
            y = h5sparse.to_dask(f["x"], chunks=(100, 300))
            assert y.numblocks == (5, 1)
            np.testing.assert_allclose(scalar(y.mean().compute()), dense.mean(dtype="f8"), rtol=1e-5)


def scalar(reduced):
    """A full reduction's value: pydata sparse 0.16 gives a NumPy scalar, later ones a 0-d COO."""
    return reduced.todense() if isinstance(reduced, sparse.SparseArray) else reduced


def test_dask_graphs_of_huge_extents_stay_small(tmp_path):
    with h5py.File(tmp_path / "h.h5", "w") as f:
        d = f.create_dataset("x", shape=(2**31, 2**31), dtype="f4", chunks=(1024, 1024), **h5sparse.Sparse())
        h5sparse.write_coo(d, [[5, 7], [2**31 - 1, 2**30]], [1.0, 2.0])
    with h5py.File(tmp_path / "h.h5", "r") as f:
        x = h5sparse.to_dask(f["x"])
        assert np.prod(x.numblocks) <= 4096
        assert x.sum().compute() == 3.0
