"""Stripes on real files: sparse datasets written one file each (by from_dask) and joined by a
virtual dataset read as the one-file dataset reads, through unmodified h5py (values) and through
the connector (get_defined, read_coo, to_scipy, to_dask answered from the sources); what a
virtual dataset cannot answer is refused with a clear error."""
import dask
import dask.array as da
import h5py
import numpy as np
import pytest
import sparse

import h5sparse
from cluster_files import dataset as _dataset, random_coo as _random_coo


def test_stripes_joined_by_a_virtual_dataset_answer_as_the_one_file_does(tmp_path):
    """Three writers, a file each (two stripes of rows, one a box of the last rows' right half),
    joined by a virtual dataset in a fourth file: h5py's dense reads, get_defined, read_coo,
    to_scipy and to_dask equal the one-file dataset's, regions across stripes included."""
    coo = _random_coo((300, 260), 0.04, seed=21)
    stripes = [np.s_[0:96, :], np.s_[96:224, :], np.s_[224:300, 128:260]]
    inside = np.zeros(coo.shape, bool)
    for s in stripes:
        inside[s] = True
    keep = inside[tuple(coo.coords)]
    coo = sparse.COO(coo.coords[:, keep], coo.data[keep], shape=coo.shape)  # what the stripes hold
    files = []
    for k, region in enumerate(stripes):
        f = h5py.File(tmp_path / f"stripe{k}.h5", "w")
        files.append(f)
        d = _dataset(f, "x")
        part = coo[region]
        start = [s.indices(n)[0] for s, n in zip(region, coo.shape)]
        h5sparse.from_dask(d, da.from_array(part, chunks=(64, 128), asarray=False), offset=start)
    with h5py.File(tmp_path / "one.h5", "w") as one, h5py.File(tmp_path / "joined.h5", "w") as j:
        expected = _dataset(one, "x")
        h5sparse.write_coo(expected, coo.coords.T, coo.data)
        v = h5sparse.join_stripes(j, "x", [(f["x"], region) for f, region in zip(files, stripes)])
        for f in files:
            f.close()
        assert v.is_virtual
        for region in (np.s_[:, :], np.s_[50:250, 100:200], np.s_[90:100, :]):
            np.testing.assert_array_equal(v[region], expected[region])
            for got, want in zip(h5sparse.read_coo(v, region), h5sparse.read_coo(expected, region)):
                np.testing.assert_array_equal(got, want)
            assert (h5sparse.to_scipy(v, region, format="csr") != h5sparse.to_scipy(expected, region, format="csr")).nnz == 0
            np.testing.assert_array_equal(h5sparse.get_defined(v, region), h5sparse.get_defined(expected, region))
        path = j.filename
    with h5py.File(path, "r") as j:
        x = h5sparse.to_dask(j["x"])
        assert x.chunks[0][0] == 32
        with dask.config.set(scheduler="sync"):
            np.testing.assert_allclose(x.sum(axis=1).compute().todense(), coo.sum(axis=1).todense(), rtol=1e-5)
        with pytest.raises(h5sparse.H5SparseError, match="virtual dataset is written through its sources"):
            h5sparse.write_coo(j["x"], [[0, 0]], [1.0])


def test_a_joined_virtual_dataset_refuses_what_it_cannot_answer(tmp_path):
    with h5py.File(tmp_path / "s.h5", "w") as f:
        s = _dataset(f, "x", shape=(64, 64), chunks=(32, 32))
        h5sparse.write_coo(s, [[1, 1]], [2.0])
        dense = f.create_dataset("dense", data=np.ones((64, 64), "f4"))
        with pytest.raises(ValueError, match="chunk boundaries"):
            h5sparse.join_stripes(f, "bad", [(s, np.s_[0:40, :])])
        layout = h5py.VirtualLayout(shape=(64, 64), dtype="f4")
        layout[0:32, :] = h5py.VirtualSource(s)[0:32, :]
        layout[32:64, :] = h5py.VirtualSource(dense)[32:64, :]
        v = f.create_virtual_dataset("mixed", layout, fillvalue=0)
        defined = {tuple(c) for c in h5sparse.get_defined(v).tolist()}  # the sparse source's one element,
        assert len(defined) == 1 + 32 * 64 and (1, 1) in defined and (2, 2) not in defined  # the dense box whole
        np.testing.assert_array_equal(h5sparse.read_coo(v, np.s_[0:32, :])[0], [[1, 1]])
        with pytest.raises(h5sparse.H5SparseError, match="'/dense' .* is not sparse"):
            h5sparse.read_coo(v)
