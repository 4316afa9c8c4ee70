"""Sparse datasets on MPI-IO files (parallel flavour): the parallel model test with 1, 2, 4 and
8 ranks, unchanged h5py-mpi and C programs, and the refusals. Each MPI job runs under mpirun
(oversubscribed, with a time limit so that a hang fails the test); what the jobs wrote is then
re-read serially: serial HDF5 and h5py, without MPI, with only the serial plugin directory
(no connector), and through the serial connector for the defined elements."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGINS = os.environ["H5SPARSE_PLUGIN_DIR"]                # parallel flavour
SERIAL_PLUGINS = os.environ["H5SPARSE_SERIAL_PLUGIN_DIR"]  # serial flavour
CONNECTOR = "h5sparse under_vol=0;under_info={}"
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_btl": "self,sm", "OMPI_MCA_pml": "ob1",  # shared memory only: no network needed
    "OMPI_MCA_hwloc_base_binding_policy": "none",
}


@pytest.fixture(scope="module", autouse=True)
def serial_plugins_built():
    assert os.path.exists(os.path.join(SERIAL_PLUGINS, "libh5sparse_structured.so")), (
        f"the serial build's plugins are needed for the serial re-read ({SERIAL_PLUGINS})")


def mpirun(n, args, plugins=PLUGINS, connector=True, timeout=300, check=True):
    env = {k: v for k, v in os.environ.items() if k not in ("HDF5_VOL_CONNECTOR",)}
    env.update(MPI_ENV, HDF5_PLUGIN_PATH=plugins)
    if connector:
        env["HDF5_VOL_CONNECTOR"] = CONNECTOR
    r = subprocess.run(["mpirun", "--oversubscribe", "-n", str(n), *args], env=env, capture_output=True, text=True,
                       timeout=timeout)
    if check:
        assert r.returncode == 0, f"mpirun -n {n} {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}"
    return r


def serial_python(code, connector=False):
    """Runs code in a serial python3 (serial h5py, serial plugins, no MPI anywhere)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "HDF5_VOL"))}
    env.update(HDF5_PLUGIN_PATH=SERIAL_PLUGINS, H5SPARSE_LIBRARY=os.path.join(SERIAL_PLUGINS, "..", "lib",
                                                                               "libh5sparse.so"))
    if connector:
        env["HDF5_VOL_CONNECTOR"] = CONNECTOR
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, f"serial reader failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


SERIAL_CHECK = """
    import sys, h5py, numpy as np
    model = np.load(sys.argv[1] + ".model.npz") if len(sys.argv) > 1 else None
    path = {path!r}
    model = np.load(path + ".model.npz")
    with h5py.File(path, "r") as f:
        assert h5py.get_config().mpi is False
        for name in f:
            assert np.array_equal(f[name][...], model[name + "_values"]), name
            if {connector}:
                import h5sparse
                assert h5sparse.connector_version(f)
                coords = h5sparse.get_defined(f[name])
                assert np.array_equal(coords, np.argwhere(model[name + "_defined"]).astype(np.uint64)), name
    print("serial ok")
"""


@pytest.mark.parametrize("ranks,steps", [(1, 30), (2, 30), (4, 25), (8, 12)])
def test_parallel_model(tmp_path, ranks, steps):
    path = str(tmp_path / f"model{ranks}.h5")
    out = mpirun(ranks, [sys.executable, os.path.join(HERE, "mpi_model.py"), path, str(100 + ranks), str(steps)])
    assert out.stdout.count("steps checked") == ranks
    # The file is an ordinary sparse file: serial HDF5 reads it with the filter plugin alone...
    assert "serial ok" in serial_python(SERIAL_CHECK.format(path=path, connector=False))
    # ...and the serial connector sees exactly the defined elements of the model.
    assert "serial ok" in serial_python(SERIAL_CHECK.format(path=path, connector=True), connector=True)


H5PY_PROGRAM = """
    import sys, numpy as np, h5py, h5sparse
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank, n = comm.rank, comm.size
    with h5py.File(sys.argv[1], "w", driver="mpio", comm=comm) as f:
        d = f.create_dataset("grid", shape=(64, 48), dtype="f4", chunks=(16, 16),
                             **h5sparse.Sparse(values=h5sparse.Blosc()))
        with d.collective:
            d[rank * 8:(rank + 1) * 8, :] = rank + 1       # disjoint slabs
            d[40:44, 10 * rank:10 * rank + 12] = 100 + rank  # overlapping boxes: the higher rank wins
            d[50, rank] = 0.0                               # a defined zero
        comm.Barrier()
        if rank == n - 1:
            print("read", float(d[41, 10 * rank]), float(d[0, 0]))
"""


def test_h5py_mpi_unchanged(tmp_path):
    """Ordinary h5py-mpi code: collective writes from every rank, overlapping ones too."""
    path = str(tmp_path / "h5py.h5")
    script = tmp_path / "h5py_program.py"
    script.write_text(textwrap.dedent(H5PY_PROGRAM))
    out = mpirun(4, [sys.executable, str(script), path])
    assert "read 103.0 1.0" in out.stdout
    expect = np.zeros((64, 48), dtype=bool)
    values = np.zeros((64, 48), dtype="f4")
    for r in range(4):
        values[r * 8:(r + 1) * 8, :] = r + 1
        expect[r * 8:(r + 1) * 8, :] = True
    for r in range(4):
        values[40:44, 10 * r:10 * r + 12] = 100 + r
        expect[40:44, 10 * r:10 * r + 12] = True
    for r in range(4):
        values[50, r] = 0
        expect[50, r] = True
    np.savez(path + ".model.npz", grid_values=values, grid_defined=expect)
    assert "serial ok" in serial_python(SERIAL_CHECK.format(path=path, connector=False))
    assert "serial ok" in serial_python(SERIAL_CHECK.format(path=path, connector=True), connector=True)


@pytest.mark.parametrize("mode", [[], ["collective-metadata"]], ids=["default", "collective_metadata"])
def test_c_program(tmp_path, mode):
    """A C program (H5Pset_fapl_mpio, collective H5Dwrite, h5sparse_derase, h5sparse_dget_defined);
    also with collective metadata operations, where one rank then reads its own rows alone."""
    path = str(tmp_path / "c.h5")
    out = mpirun(4, [os.environ["H5SPARSE_MPI_C_PROGRAM"], path, *mode], timeout=120)
    assert out.stdout.count("mpi_sparse ok") == 4, out.stdout
    code = """
        import h5py, numpy as np
        with h5py.File({path!r}, "r") as f:
            d = f["values"][...]
        expect = np.zeros((40, 30), dtype="i4")
        for r in range(4):
            expect[r * 10:(r + 1) * 10, :] = np.arange(30) + 1 + 1000 * r
        expect[:, 0] = 0  # erased by every rank
        assert np.array_equal(d, expect)
        print("serial ok")
    """.format(path=path)
    assert "serial ok" in serial_python(code)


REFUSALS = """
    import sys, numpy as np, h5py, h5sparse
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rank = comm.rank
    case = sys.argv[2]
    def expect_failure(what, action, message):
        try:
            action()
        except Exception as e:
            text = str(e) + " " + repr(e.__cause__ or "")
            assert message in text, (what, text)
            print(rank, what, "refused")
            return
        raise AssertionError(what + " was not refused")
    with h5py.File(sys.argv[1], "w", driver="mpio", comm=comm) as f:
        d = f.create_dataset("x", shape=(20, 20), dtype="f4", chunks=(10, 10), **h5sparse.Sparse())
        with d.collective:
            d[rank, :] = 1.0
        if case == "independent":
            def independent():
                d[rank, 0] = 5.0  # no 'with d.collective'
            expect_failure("independent write", independent, "must be collective")
        elif case == "direct_chunk":
            expect_failure("H5Dwrite_chunk", lambda: d.id.write_direct_chunk((0, 0), b"x" * 60),
                           "MPI-IO")
        elif case == "bad_rank":
            dxpl = h5py.h5p.create(h5py.h5p.DATASET_XFER)
            dxpl.set_dxpl_mpio(h5py.h5fd.MPIO_COLLECTIVE)
            fs = d.id.get_space()
            ms = h5py.h5s.create_simple((1,))
            if rank == 1:
                fs.select_elements(np.array([[99, 0]], dtype=np.uint64))  # outside the extent
            else:
                fs.select_elements(np.array([[rank, 5]], dtype=np.uint64))
            expect_failure("write with a bad selection on rank 1",
                           lambda: d.id.write(ms, fs, np.full(1, 7.0, "f4"), dxpl=dxpl),
                           "rank 1" if rank != 1 else "outside")
        elif case == "bad_coo":
            coords = [[99, 0]] if rank == 1 else [[rank, 5]]  # rank 1's lies outside the extent
            expect_failure("write_coo with a coordinate outside the extent on rank 1",
                           lambda: h5sparse.write_coo(d, coords, [7.0]), "rank 1" if rank != 1 else "outside")
            expect_failure("erase_coo likewise", lambda: h5sparse.erase_coo(d, coords),
                           "rank 1" if rank != 1 else "outside")
        comm.Barrier()
        # Whatever was refused, nothing of the data already stored was lost.
        assert np.array_equal(d[0:comm.size, :], np.ones((comm.size, 20), "f4")), "stored data changed"
        assert len(h5sparse.get_defined(d)) == comm.size * 20
    print(rank, "done")
"""


@pytest.mark.parametrize("case", ["independent", "direct_chunk", "bad_rank", "bad_coo"])
def test_refusals(tmp_path, case):
    """Unsupported combinations fail with a clear error on every rank, never a hang or a loss."""
    script = tmp_path / "refusals.py"
    script.write_text(textwrap.dedent(REFUSALS))
    out = mpirun(2, [sys.executable, str(script), str(tmp_path / "r.h5"), case], timeout=120)
    refusals = 2 if case == "bad_coo" else 1  # on each of the 2 ranks
    assert out.stdout.count("refused") == 2 * refusals and out.stdout.count("done") == 2, out.stdout + out.stderr


MIXED = """
    import sys, h5py, h5sparse
    try:
        with h5py.File(sys.argv[1], "w", **({"driver": "mpio", "comm": __import__("mpi4py.MPI").MPI.COMM_WORLD}
                                           if h5py.get_config().mpi else {})) as f:
            f.create_dataset("x", shape=(8,), dtype="f4", chunks=(4,), **h5sparse.Sparse())
    except Exception as e:
        print("refused:", e)
    else:
        print("created")
"""


def test_serial_plugins_refused_by_parallel_hdf5(tmp_path):
    """h5py-mpi with the serial plugin directory: the plugins refuse to load (two HDF5
    libraries in one process), so no sparse dataset is created and the reason is printed."""
    script = tmp_path / "mixed.py"
    script.write_text(textwrap.dedent(MIXED))
    out = mpirun(1, [sys.executable, str(script), str(tmp_path / "m.h5")], plugins=SERIAL_PLUGINS, connector=False)
    assert "refused:" in out.stdout and "created" not in out.stdout, out.stdout
    assert "refusing to load" in out.stderr and "h5plugin-config" in out.stderr, out.stderr


def test_parallel_plugins_refused_by_serial_hdf5(tmp_path):
    script = tmp_path / "mixed.py"
    script.write_text(textwrap.dedent(MIXED))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "HDF5_VOL"))}
    env["HDF5_PLUGIN_PATH"] = PLUGINS
    r = subprocess.run([sys.executable, str(script), str(tmp_path / "s.h5")], env=env, capture_output=True, text=True,
                       timeout=120)
    assert "refused:" in r.stdout and "created" not in r.stdout, r.stdout + r.stderr
    assert "refusing to load" in r.stderr, r.stderr


def test_h5plugin_config_tells_the_flavours_apart():
    tool = os.path.join(os.environ["H5SPARSE_BIN_DIR"], "h5plugin-config")
    run = lambda *a: subprocess.run([tool, *a], capture_output=True, text=True, check=True).stdout.strip()
    assert run("--parallel", "--flavour") == "openmpi"
    assert os.path.samefile(run("--parallel", "--plugin-path"), PLUGINS)
    assert run("--flavour") == "serial"  # the serial build beside this one
    assert os.path.samefile(run("--plugin-path"), SERIAL_PLUGINS)
    assert PLUGINS in run("--parallel", "--env")


SHARED = """
    import sys, numpy as np, h5sparse
    from h5sparse import mpi
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    total = 1000
    lo, hi = total * comm.rank // comm.size, total * (comm.rank + 1) // comm.size
    block = np.arange(lo, hi, dtype="i8") * (np.arange(lo, hi) % 3 != 0)  # every third one zero
    if comm.rank == comm.size - 1:
        block = block[:0]  # the last rank has nothing: it must still take part
    mpi.write_blocks(sys.argv[1], "ints", total, lo, block, comm, chunks=(64,),
                     **h5sparse.Sparse(values=h5sparse.LZF(), fill_is_undefined=True))
    print("shared ok", comm.rank)
"""


def test_single_shared_file_helper(tmp_path):
    """h5sparse.mpi.write_blocks: every rank writes its block of one dataset in one file,
    a rank with an empty block included (h5py alone would skip its H5Dwrite and hang)."""
    script = tmp_path / "shared.py"
    script.write_text(textwrap.dedent(SHARED))
    path = str(tmp_path / "shared.h5")
    out = mpirun(3, [sys.executable, str(script), path], timeout=120)
    assert out.stdout.count("shared ok") == 3, out.stdout + out.stderr
    values = np.zeros(1000, dtype="i8")
    lo, hi = 0, 1000 * 2 // 3
    values[lo:hi] = np.arange(lo, hi) * (np.arange(lo, hi) % 3 != 0)
    np.savez(path + ".model.npz", ints_values=values, ints_defined=values != 0)
    assert "serial ok" in serial_python(SERIAL_CHECK.format(path=path, connector=True), connector=True)


CORRUPT_READ = """
    import sys, numpy as np, h5py
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    with h5py.File(sys.argv[1], "r", driver="mpio", comm=comm) as f:
        d = f["x"]
        def attempt(what, selection):
            try:
                with d.collective:
                    got = d[selection]
            except Exception as e:
                print(comm.rank, what, "error:", str(e).replace(chr(10), " "))
            else:
                print(comm.rank, what, "values:", int(got.sum()))
        attempt("all", np.s_[...])
        attempt("own chunk", np.s_[comm.rank * 10:(comm.rank + 1) * 10])
    print(comm.rank, "done")
"""


def test_collective_read_of_a_corrupted_chunk(tmp_path):
    """A collective read that meets a corrupted chunk fails on the ranks whose selection holds it,
    with the checksum error, and the others get their data: no hang, no wrong values."""
    path = str(tmp_path / "corrupt.h5")
    code = """
        import h5py, numpy as np, h5sparse
        with h5py.File({path!r}, "w") as f:
            d = f.create_dataset("x", shape=(20,), dtype="i4", chunks=(10,), **h5sparse.Sparse())
            d[...] = np.arange(20)
            info = d.id.get_chunk_info_by_coord((10,))
        with open({path!r}, "r+b") as raw:  # one byte of the second chunk's values
            raw.seek(info.byte_offset + info.size - 3)
            byte = raw.read(1)
            raw.seek(-1, 1)
            raw.write(bytes([byte[0] ^ 0x40]))
        print("serial ok")
    """.format(path=path)
    assert "serial ok" in serial_python(code, connector=True)
    script = tmp_path / "corrupt_read.py"
    script.write_text(textwrap.dedent(CORRUPT_READ))
    out = mpirun(2, [sys.executable, str(script), path], timeout=120)
    lines = out.stdout.splitlines()
    assert out.stdout.count("done") == 2, out.stdout + out.stderr
    for rank in (0, 1):
        [whole] = [line for line in lines if line.startswith(f"{rank} all ")]
        assert "error:" in whole and "checksum" in whole, whole
    [own0] = [line for line in lines if line.startswith("0 own chunk ")]
    assert own0 == "0 own chunk values: 45", own0  # 0 + 1 + ... + 9
    [own1] = [line for line in lines if line.startswith("1 own chunk ")]
    assert "error:" in own1 and "checksum" in own1, own1
