"""h5sparse.write_h5ad / read_h5ad: AnnData files whose X is a sparse dataset. anndata comes from
PyPI: test/wheel/run runs this in the wheel's venvs (the Debian toolchains have no anndata)."""
import h5py
import numpy as np
import pytest
import scipy.sparse

import h5sparse

anndata = pytest.importorskip("anndata")
pd = pytest.importorskip("pandas")


def cells(n_obs=600, n_vars=300, seed=4):
    rng = np.random.default_rng(seed)
    x = scipy.sparse.random(n_obs, n_vars, density=0.05, format="csr", dtype="f4", random_state=seed)
    x.data[:] = rng.integers(1, 30, x.nnz)
    a = anndata.AnnData(X=x, obs=pd.DataFrame({"batch": rng.integers(0, 3, n_obs).astype(str)},
                                              index=[f"cell{i}" for i in range(n_obs)]),
                        var=pd.DataFrame(index=[f"gene{i}" for i in range(n_vars)]))
    a.layers["counts"] = x.copy()
    a.obsm["pca"] = rng.random((n_obs, 5)).astype("f4")
    return a


def test_round_trip_and_the_rest_as_anndata_writes_it(tmp_path):
    a = cells()
    path = tmp_path / "c.h5ad"
    h5sparse.write_h5ad(a, path, values=h5sparse.Blosc("lz4", 5, "byte"), chunks=(128, 64))
    with h5py.File(path, "r") as f:
        assert f["X"].attrs["encoding-type"] == "h5sparse-matrix" and f["X"].chunks == (128, 64)
        assert f["layers/counts"].attrs["encoding-type"] == "csr_matrix"  # anndata's own
    b = h5sparse.read_h5ad(path)
    assert isinstance(b.X, scipy.sparse.csr_matrix) and (b.X != a.X).nnz == 0
    assert b.obs.equals(a.obs) and list(b.var_names) == list(a.var_names)
    assert (b.layers["counts"] != a.layers["counts"]).nnz == 0
    assert np.array_equal(b.obsm["pca"], a.obsm["pca"])


def test_backed_reads_both_axes(tmp_path):
    a = cells()
    path = tmp_path / "c.h5ad"
    h5sparse.write_h5ad(a, path, chunks=(128, 64))
    b = h5sparse.read_h5ad(path, backed="r")
    genes = ["gene3", "gene200", "gene77"]
    got = b[:, genes].X.compute()
    assert isinstance(got, scipy.sparse.csr_matrix)
    assert np.array_equal(got.toarray(), a[:, genes].X.toarray())
    picked = ["cell5", "cell599", "cell300"]
    assert np.array_equal(b[picked].X.compute().toarray(), a[picked].X.toarray())
    assert b.X[100:228, :].compute().nnz == a.X[100:228, :].nnz


def test_plain_anndata_refuses_the_file_naming_h5sparse(tmp_path):
    path = tmp_path / "c.h5ad"
    h5sparse.write_h5ad(cells(), path)
    with pytest.raises(Exception, match="h5sparse-matrix"):
        anndata.read_h5ad(path)


def test_dense_x_and_bad_arguments(tmp_path):
    a = cells()
    a.X = a.X.toarray()
    path = tmp_path / "d.h5ad"
    h5sparse.write_h5ad(a, path)  # a dense X is anndata's business
    assert np.array_equal(anndata.read_h5ad(path).X, a.X)
    with pytest.raises(ValueError, match="chunks"):
        h5sparse.write_h5ad(cells(), tmp_path / "e.h5ad", chunks=(0, 5))
    with pytest.raises(ValueError, match="backed"):
        h5sparse.read_h5ad(path, backed="r+")
