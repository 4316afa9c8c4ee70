"""Run inside a root where the h5sparse package is installed (scripts/dev's install test), with no
HDF5_PLUGIN_PATH and no PYTHONPATH: unmodified clients read Blosc, LZF and sparse datasets, and
HDF5_VOL_CONNECTOR=h5sparse alone turns the connector on.

    python3 packaging/check_clients.py DIR

Files go to DIR. Each check prints one line; the first failure raises. netCDF-C (ncdump,
netCDF4-python, xarray's netcdf4 engine) replaces HDF5's default plugin path with its own, so
those run with HDF5_PLUGIN_PATH set to what `h5plugin-config --plugin-path` prints, the one
setting the README gives; that they fail without it is checked too, so the README stays true.
"""
import os
import re
import subprocess
import sys

import numpy as np

assert "HDF5_PLUGIN_PATH" not in os.environ and "PYTHONPATH" not in os.environ, "the test needs a clean environment"

import h5py  # noqa: E402
import h5sparse  # noqa: E402  (from dist-packages: no PYTHONPATH)

FILL = -1.0
# 4000-byte chunks that compress: Blosc stores chunks under 128 bytes raw, and HDF5 then skips
# the (optional) filter on read, so a small chunk would test no plugin at all.
SHAPE, CHUNKS = (40, 50), (20, 25)
EXPECTED_SPARSE = np.full(SHAPE, FILL)
EXPECTED_SPARSE[2:4, 3:5] = 7.0
DENSE = (np.arange(np.prod(SHAPE), dtype="f8") // SHAPE[1]).reshape(SHAPE)
CONNECTOR = {"HDF5_VOL_CONNECTOR": "h5sparse"}


def env(**extra):
    e = dict(os.environ)
    e.update(extra)
    return e


def run(cmd, **extra):
    return subprocess.run(cmd, env=env(**extra), capture_output=True, text=True)


def with_dims(f, name, data, **kwargs):
    """A dataset with dimension scales, so that netCDF clients see named dimensions."""
    for i, n in enumerate(data.shape if hasattr(data, "shape") else kwargs["shape"]):
        if f"dim{i}" not in f:
            f[f"dim{i}"] = np.arange(n, dtype="i4")
            f[f"dim{i}"].make_scale(f"dim{i}")
    d = f.create_dataset(name, data=data, **kwargs) if data is not None else f.create_dataset(name, **kwargs)
    for i in range(len(d.shape)):
        d.dims[i].attach_scale(f[f"dim{i}"])
    return d


def write_files(top):
    """blosc.h5 and lzf.h5 through the installed plugins; sparse.h5 through the connector."""
    with h5py.File(f"{top}/blosc.h5", "w") as f:
        with_dims(f, "v", DENSE, chunks=CHUNKS, compression=32001, compression_opts=(0, 0, 0, 0, 5, 1, 1))
    with h5py.File(f"{top}/lzf.h5", "w") as f:
        with_dims(f, "v", DENSE, chunks=CHUNKS, compression="lzf")
    for name in ("blosc", "lzf"):  # every chunk went through the filter (none stored raw)
        with h5py.File(f"{top}/{name}.h5") as f:
            masks = [f["v"].id.get_chunk_info(i).filter_mask for i in range(f["v"].id.get_num_chunks())]
            assert masks == [0] * 4, f"{name}: chunks stored unfiltered: {masks}"
    code = f"""
import h5py, numpy as np, h5sparse
with h5py.File("{top}/sparse.h5", "w") as f:
    f["dim0"] = np.arange({SHAPE[0]}, dtype="i4"); f["dim0"].make_scale("dim0")
    f["dim1"] = np.arange({SHAPE[1]}, dtype="i4"); f["dim1"].make_scale("dim1")
    d = f.create_dataset("v", shape={SHAPE}, dtype="f8", chunks={CHUNKS}, fillvalue={FILL},
                         **h5sparse.Sparse(values=h5sparse.Blosc("zstd", 5, "bit")))
    d.dims[0].attach_scale(f["dim0"]); d.dims[1].attach_scale(f["dim1"])
    assert h5sparse.connector_version(d), "the connector is not on"
    d[0:4, 3:5] = 7.0                                   # define-by-write
    assert len(h5sparse.get_defined(d)) == 8
    h5sparse.erase(d, np.s_[0:2, :])                    # erase
    h5sparse.write_coo(d, np.array([[5, 7]]), np.array([9.0]))   # coordinate I/O
    coords, values = h5sparse.read_coo(d)
    assert coords.tolist()[-1] == [5, 7] and values.tolist()[-1] == 9.0, (coords, values)
    h5sparse.erase_coo(d, np.array([[5, 7]]))
    assert h5sparse.get_defined(d).tolist() == [[2, 3], [2, 4], [3, 3], [3, 4]]
"""
    p = run([sys.executable, "-c", code], **CONNECTOR)
    assert p.returncode == 0, f"h5py with HDF5_VOL_CONNECTOR=h5sparse: define-by-write, get-defined, erase, coordinate I/O\n{p.stderr}"
    print("ok  h5py + HDF5_VOL_CONNECTOR=h5sparse: define-by-write, get_defined, erase, write_coo/read_coo/erase_coo")


def check_one_plugin_per_id(top):
    """The diversion at work: reading Blosc and LZF loads our plugins, never Debian's (h5py's own
    LZF filter, registered at import, is unregistered first so that HDF5 looks for a plugin)."""
    code = f"""
import h5py
h5py.h5z.unregister_filter(32000)
for name in ("blosc", "lzf"):
    h5py.File("{top}/" + name + ".h5")["v"][()]
print(open("/proc/self/maps").read())
"""
    p = run([sys.executable, "-c", code])
    assert p.returncode == 0, p.stderr
    loaded = set(re.findall(r"/([^/\s]+\.so)\s*$", p.stdout, re.M))
    assert {"libh5sparse_blosc.so", "libh5sparse_lzf.so"} <= loaded, sorted(loaded)
    assert not {"libH5Zblosc.so", "liblzf_filter.so"} & loaded, sorted(loaded)
    print("ok  HDF5 loads h5sparse's Blosc and LZF plugins, not Debian's (diverted)")


def expected(name):
    return EXPECTED_SPARSE if name == "sparse" else DENSE


def numbers_after_data(text):
    """The numbers of an h5dump/ncdump/h5ls data block (after its 'DATA {', 'v =' or 'Data:')."""
    body = re.split(r"DATA \{|\bv =|Data:", text, maxsplit=1)[-1]
    body = re.sub(r"\(\d+(,\d+)*\):", " ", body)  # h5dump/h5ls element positions
    return np.array([float(x) for x in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", body)][: np.prod(SHAPE)])


def check_tool(label, cmd, name, **extra):
    p = run(cmd, **extra)
    assert p.returncode == 0, f"{label} on {name}: exit {p.returncode}\n{p.stdout[-2000:]}{p.stderr[-2000:]}"
    got = numbers_after_data(p.stdout)
    assert np.array_equal(got, expected(name).ravel()), f"{label} on {name}: read {got}"


def check_python(label, code, name, **extra):
    p = run([sys.executable, "-c", code], **extra)
    assert p.returncode == 0, f"{label} on {name}: {p.stderr[-2000:]}"
    got = np.array([float(x) for x in p.stdout.split()])
    assert np.array_equal(got, expected(name).ravel()), f"{label} on {name}: read {got}"


def readers(top, name):
    """(label, netcdf-c?, function running one client on top/name.h5 with extra variables)."""
    path = f"{top}/{name}.h5"
    out = f"{top}/{name}.repacked.h5"
    dump = "import sys, numpy as np; np.savetxt(sys.stdout, np.asarray({}, dtype='f8').ravel())"
    return [
        ("h5py", False, lambda **e: check_python("h5py", dump.format(f"__import__('h5py').File('{path}')['v'][()]"), name, **e)),
        ("h5dump", False, lambda **e: check_tool("h5dump", ["h5dump", "-d", "/v", "-w", "0", path], name, **e)),
        ("h5ls", False, lambda **e: check_tool("h5ls", ["h5ls", "-d", "-S", f"{path}/v"], name, **e)),
        ("h5repack", False, lambda **e: repack(path, out, name, **e)),
        ("PyTables", False, lambda **e: check_python("PyTables", dump.format(
            f"__import__('tables').open_file('{path}').get_node('/v').read()"), name, **e)),
        ("xarray h5netcdf", False, lambda **e: check_python("xarray h5netcdf", dump.format(
            f"__import__('xarray').open_dataset('{path}', engine='h5netcdf', mask_and_scale=False)['v'].values"), name, **e)),
        ("ncdump", True, lambda **e: check_tool("ncdump", ["ncdump", "-v", "v", path], name, **e)),
        ("netCDF4", True, lambda **e: check_python("netCDF4", dump.format(
            f"__import__('netCDF4').Dataset('{path}')['v'][:].filled({FILL})"), name, **e)),
        ("xarray netcdf4", True, lambda **e: check_python("xarray netcdf4", dump.format(
            f"__import__('xarray').open_dataset('{path}', engine='netcdf4', mask_and_scale=False)['v'].values"), name, **e)),
    ]


def repack(path, out, name, **extra):
    """h5repack decodes through the plugins; the result, without filters, is read back by h5py."""
    p = run(["h5repack", "-f", "NONE", path, out], **extra)
    assert p.returncode == 0, f"h5repack on {name}: {p.stderr[-2000:]}"
    with h5py.File(out) as f:
        assert not f["v"]._filters and np.array_equal(f["v"][()], expected(name)), f"h5repack on {name}"
    os.remove(out)


def main(top):
    os.makedirs(top, exist_ok=True)
    write_files(top)
    check_one_plugin_per_id(top)
    plugin_path = subprocess.run(["h5plugin-config", "--plugin-path"], capture_output=True, text=True,
                                 check=True).stdout.strip()
    netcdf_setting = {"HDF5_PLUGIN_PATH": plugin_path}
    for name in ("blosc", "lzf", "sparse"):
        for label, netcdf_c, read in readers(top, name):
            for connector in ({}, CONNECTOR):
                if netcdf_c:
                    try:  # the measured netCDF-C behaviour the README documents
                        read(**connector)
                    except AssertionError:
                        pass
                    else:
                        raise AssertionError(f"{label} read {name} without HDF5_PLUGIN_PATH: README needs updating")
                    read(**connector, **netcdf_setting)
                else:
                    read(**connector)
            how = f"HDF5_PLUGIN_PATH=$(h5plugin-config --plugin-path) [{plugin_path}]" if netcdf_c else "no variables"
            print(f"ok  {label:15s} reads {name:6s} with {how}, also with HDF5_VOL_CONNECTOR=h5sparse")


if __name__ == "__main__":
    main(sys.argv[1])
