"""The installed wheel in a venv with h5py from PyPI (test/wheel/run makes one per h5py): every
case runs in a fresh interpreter, with no HDF5_* variable and no PYTHONPATH, as a new user's
program would, since import order and HDF5's start-up are what is under test."""
import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEBIAN_WRITTEN = os.path.join(REPO, "test", "data", "sparse_v1.h5")  # written by the linked build


def run(code, cwd, expect_failure=False):
    """Runs `code` (dedented) in a new interpreter of this venv; its stdout, or its stderr when it failed
    (the test fails unless the outcome is the expected one)."""
    code = textwrap.dedent(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HDF5_", "H5SPARSE_")) and k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    if expect_failure:
        assert done.returncode != 0, done.stdout
        return done.stderr
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout


ONE_HDF5 = """
    import os
    def hdf5_libraries():
        with open("/proc/self/maps") as maps:
            names = {line.split()[-1] for line in maps if "/libhdf5" in line}
        return sorted(n for n in names if "_hl" not in os.path.basename(n))
"""


def test_sparse_dataset_by_slices_with_plain_h5py_code(tmp_path):
    out = run("""
        import os, warnings, numpy as np
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import h5sparse
        assert not [w for w in caught if "h5sparse" in str(w.message)], [str(w.message) for w in caught]
        import h5py
        with h5py.File("a.h5", "w") as f:
            d = f.create_dataset("x", shape=(4096, 4096), dtype="f4", chunks=(256, 256), fillvalue=np.nan,
                                 **h5sparse.Sparse(values=h5sparse.Blosc("zstd", 5, "bit"), selection=h5sparse.Deflate(6)))
            d[10:20, 30:40] = 1.0
            assert np.isnan(d[0, 0]) and d[15, 35] == 1.0
            assert h5sparse.get_defined(d).shape == (100, 2)
            h5sparse.erase(d, np.s_[10:15, :])
            assert h5sparse.get_defined(d).shape == (50, 2)
            z = f.create_dataset("z", shape=(64, 64), dtype="i4", chunks=(16, 16), **h5sparse.Sparse(fill_is_undefined=True))
            dense = np.zeros((64, 64), "i4"); dense[3, 4] = 7; dense[60, 1] = 9
            z[...] = dense
            assert h5sparse.get_defined(z).tolist() == [[3, 4], [60, 1]]
            print(h5sparse.connector_version(f))
    """, tmp_path)
    assert out.startswith("h5sparse ")


def test_coordinates_and_scipy(tmp_path):
    run("""
        import numpy as np, scipy.sparse
        import h5sparse, h5py
        rng = np.random.default_rng(5)
        coords = rng.integers(0, 1 << 20, size=(20000, 2))
        values = rng.random(20000).astype("f4")
        with h5py.File("c.h5", "w") as f:
            d = f.create_dataset("m", shape=(1 << 20, 1 << 20), dtype="f4", chunks=(1 << 14, 1 << 14),
                                 **h5sparse.Sparse(values=h5sparse.Blosc("lz4", 5, "byte")))
            h5sparse.write_coo(d, coords, values)
            got_c, got_v = h5sparse.read_coo(d)
            expect = {tuple(c): v for c, v in zip(coords.tolist(), values.tolist())}
            assert len(got_c) == len(expect)
            assert all(expect[tuple(c)] == v for c, v in zip(got_c.tolist(), got_v.tolist()))
            m = h5sparse.to_scipy(d, np.s_[0:4096, 0:4096], format="csr")
            inside = {k: v for k, v in expect.items() if k[0] < 4096 and k[1] < 4096}
            assert m.nnz == len(inside)
    """, tmp_path)


def test_variable_length_strings(tmp_path):
    run("""
        import numpy as np, h5sparse, h5py
        with h5py.File("v.h5", "w") as f:
            d = f.create_dataset("s", shape=(1000,), dtype=h5py.string_dtype(), chunks=(100,), **h5sparse.VarChunks())
            d[5:8] = ["alpha", "beta", "gamma"]
            assert [x.decode() for x in d[5:8]] == ["alpha", "beta", "gamma"]
            assert h5sparse.get_defined(d).ravel().tolist() == [5, 6, 7]
    """, tmp_path)
    run("""
        import h5py, h5sparse  # h5py first: no connector; read_direct_chunk, decoded by libh5sparse
        with h5py.File("v.h5") as f:
            assert f["s"].dtype == "V16"
            e = h5sparse.read_vl_chunks(f["s"], asstr=True)
            assert e.coords.ravel().tolist() == [5, 6, 7] and e.values == ["alpha", "beta", "gamma"], e
    """, tmp_path)


@pytest.mark.parametrize("order", ["h5sparse first", "hdf5plugin first"])
def test_blosc_and_lzf_both_ways_with_hdf5plugin(tmp_path, order):
    """Files of our filters read by hdf5plugin's alone, and the reverse (Blosc lz4 and snappy, LZF);
    both imported together."""
    write = """
        import numpy as np, h5py, {lib}
        data = np.arange(1 << 16, dtype="i4").reshape(256, 256) % 1000
        with h5py.File("{name}.h5", "w") as f:
            f.create_dataset("b", data=data, chunks=(64, 64), compression=32001, compression_opts=(0, 0, 0, 0, 5, 1, 1))
            f.create_dataset("l", data=data, chunks=(64, 64), compression="lzf")
            f.create_dataset("s", data=data, chunks=(64, 64), compression=32001, compression_opts=(0, 0, 0, 0, 5, 2, 3))
    """
    read = """
        import numpy as np, h5py, {lib}
        data = np.arange(1 << 16, dtype="i4").reshape(256, 256) % 1000
        with h5py.File("{name}.h5") as f:
            assert (f["b"][...] == data).all() and (f["l"][...] == data).all() and (f["s"][...] == data).all()
    """
    run(write.format(lib="h5sparse", name="ours"), tmp_path)
    run(write.format(lib="hdf5plugin", name="theirs"), tmp_path)
    run(read.format(lib="hdf5plugin", name="ours"), tmp_path)
    run(read.format(lib="h5sparse", name="theirs"), tmp_path)
    both = "h5sparse, hdf5plugin" if order == "h5sparse first" else "hdf5plugin, h5sparse"
    run(write.format(lib=both, name="both") + read.format(lib=both, name="both").split("\n", 1)[1]
        + read.format(lib=both, name="ours").split("\n", 1)[1], tmp_path)


def test_file_written_by_the_debian_build_and_one_hdf5(tmp_path):
    out = run(textwrap.dedent(ONE_HDF5) + textwrap.dedent(f"""
        import os, numpy as np, h5sparse, h5py, hdf5plugin
        with h5py.File({DEBIAN_WRITTEN!r}) as f:
            for name, d in f.items():
                if isinstance(d, h5py.Dataset) and h5sparse.is_sparse(d):
                    d[...]
                    h5sparse.get_defined(d)
        print(hdf5_libraries())
    """), tmp_path)
    libraries = eval(out)
    assert len(libraries) == 1 and "h5py.libs" in libraries[0], libraries


def test_h5py_imported_first(tmp_path):
    """Files opened afterwards by h5sparse.File go through the connector; plain h5py files do
    not, and the operations that need it say so."""
    err = run("""
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import numpy as np, h5py, h5sparse
        said = [str(w.message) for w in caught]
        assert any("import h5sparse before h5py, or open files with h5sparse.File" in s for s in said), said
        assert not h5sparse.connector_by_default()
        with h5sparse.File("f.h5", "w") as f:
            d = f.create_dataset("x", shape=(100,), dtype="f8", chunks=(10,), **h5sparse.Sparse())
            d[3:5] = 2.0
            assert h5sparse.get_defined(d).ravel().tolist() == [3, 4]
        with h5py.File("f.h5", "r+") as f:
            h5sparse.erase(f["x"], np.s_[3])
    """, tmp_path, expect_failure=True)
    assert "H5SparseError" in err and "connector" in err, err


def test_hdf5_variables_run_a_program_that_does_not_import_h5sparse(tmp_path):
    exports = run("""
        from h5sparse import _config
        _config.main(["--env"])
    """, tmp_path)
    env = dict(os.environ)
    for line in exports.strip().splitlines():
        key, value = line.split(" ", 1)[1].split("=", 1)
        env[key] = value.strip("'")
    code = """import numpy as np, h5py
with h5py.File("e.h5", "w") as f:
    d = f.create_dataset("x", shape=(100,), dtype="f8", chunks=(10,), compression=45100)
    d[3:5] = 2.0
"""
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, check=True, timeout=120)
    run("""
        import h5sparse, h5py
        with h5py.File("e.h5") as f:
            assert h5sparse.get_defined(f["x"]).ravel().tolist() == [3, 4]
    """, tmp_path)


def test_mpi_says_the_wheel_is_serial(tmp_path):
    err = run("import h5sparse.mpi", tmp_path, expect_failure=True)
    assert "wheel" in err and "parallel HDF5" in err, err


def test_h5sparse_tool_entry_point(tmp_path):
    """The tool inside the wheel's library: show, dump and a round trip through a dense file."""
    run("""
        import numpy as np, h5sparse, h5py
        with h5py.File("t.h5", "w") as f:
            d = f.create_dataset("x", shape=(100, 100), dtype="f4", chunks=(10, 10), **h5sparse.Sparse())
            d[5:7, 5:8] = 3
    """, tmp_path)
    tool = os.path.join(os.path.dirname(sys.executable), "h5sparse-tool")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HDF5_", "H5SPARSE_"))}

    def h5sparse_tool(*args):
        return subprocess.run([tool, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    shown = h5sparse_tool("show", "t.h5")
    assert shown.returncode == 0 and "DEFINED_ELEMENTS 6 OF 10000" in shown.stdout, shown.stderr
    assert h5sparse_tool("repack", "--to", "dense", "t.h5", "d.h5").returncode == 0
    assert h5sparse_tool("repack", "--to", "sparse", "d.h5", "s.h5").returncode == 0
    dumped = h5sparse_tool("dump", "s.h5")
    assert "DEFINED_SPARSE_DATA BLOCK (5,5)-(6,7)" in dumped.stdout, dumped.stderr
    missing = h5sparse_tool("show", "missing.h5")
    assert missing.returncode == 1 and "missing.h5: no such file" in missing.stderr


@pytest.mark.parametrize("plugin_path", [False, True])
def test_a_second_hdf5_in_the_process_is_never_called(tmp_path, plugin_path):
    """netCDF4's wheel brings its own HDF5 into the process beside h5py's: each keeps working,
    and ours stay bound to h5py's; with our plugins on HDF5_PLUGIN_PATH, netCDF4's HDF5 loading
    them is refused (it then lacks the filter, and says so), nothing crashes."""
    code = textwrap.dedent(ONE_HDF5) + textwrap.dedent("""
        import numpy as np, h5sparse, h5py, netCDF4
        with h5py.File("two.h5", "w") as f:
            d = f.create_dataset("x", shape=(100,), dtype="f4", chunks=(10,), **h5sparse.Sparse())
            d[3:5] = 2.0
            assert h5sparse.get_defined(d).ravel().tolist() == [3, 4]
        with netCDF4.Dataset("two.nc", "w") as n:
            n.createDimension("t", 100)
            n.createVariable("v", "f4", ("t",), zlib=True)[:] = np.arange(100)
        with netCDF4.Dataset("two.nc") as n:
            assert n["v"][7] == 7
        try:
            with netCDF4.Dataset("two.h5") as n:
                n["x"][:]
            print("read")
        except RuntimeError as e:
            print("refused:", e)
        print(len(hdf5_libraries()))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HDF5_", "H5SPARSE_")) and k != "PYTHONPATH"}
    if plugin_path:
        plugins = run("from h5sparse import _config; _config.main(['--plugin-path'])", tmp_path).strip()
        env["HDF5_PLUGIN_PATH"] = plugins
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    refused, libraries = done.stdout.split("\n")[:2]
    assert refused.startswith("refused: ") and "filter" in refused, done.stdout
    assert libraries == "2", done.stdout
    if plugin_path:
        assert "refusing a second HDF5" in done.stderr, done.stderr
