"""h5plugin-config answers correctly from the source tree, the build tree and an install, and
the environment it prints really turns the plugins and the connector on."""
import os
import shutil
import subprocess
import sys

import pytest

SOURCE = os.environ["H5SPARSE_SOURCE_DIR"]
BIN = os.environ["H5SPARSE_BIN_DIR"]
BUILD = os.path.dirname(BIN)
PLUGINS = {"libh5sparse_blosc.so", "libh5sparse_lzf.so", "libh5sparse_structured.so", "libh5sparse_vol.so"}


def run(cmd, env=None, check=True):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HDF5_", "H5SPARSE_"))}
    clean.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=clean, check=check)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    run(["cmake", "--install", BUILD, "--prefix", str(prefix)])
    return prefix


def locations(installed):
    return {
        "source": ([os.path.join(SOURCE, "h5plugin-config")], {"H5SPARSE_BUILD_DIR": BUILD}),
        "build": ([os.path.join(BIN, "h5plugin-config")], {}),
        "install": ([str(installed / "bin" / "h5plugin-config")], {}),
    }


@pytest.mark.parametrize("where", ["source", "build", "install"])
def test_plugin_path_version_and_filters(installed, where):
    cmd, env = locations(installed)[where]
    plugin_dir = run(cmd + ["--plugin-path"], env).stdout.strip()
    assert PLUGINS <= set(os.listdir(plugin_dir))
    if where == "install":
        assert plugin_dir.startswith(str(installed))
    version = open(os.path.join(SOURCE, "VERSION")).read().strip()
    assert run(cmd + ["--version"], env).stdout.strip() == version
    filters = run(cmd + ["--filters"], env).stdout.splitlines()
    assert filters[0].split("\t") == ["ID", "NAME", "OPTIONS"]
    assert {tuple(line.split("\t")[:2]) for line in filters[1:]} == {
        ("32001", "blosc"), ("32000", "lzf"), ("45100", "h5sparse structured chunk")}
    assert run(cmd + ["--vol-connector"], env).stdout.strip() == "h5sparse under_vol=0;under_info={}"


def test_env_turns_plugins_and_connector_on(installed, tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(
        "import ctypes, re, h5py, numpy as np\n"
        "hdf5 = next(line.split()[-1] for line in open('/proc/self/maps')\n"
        "            if re.search(r'/libhdf5(_serial)?\\.so\\.[0-9]+', line))\n"
        "with h5py.File('probe.h5', 'w') as f:\n"
        "    d = f.create_dataset('x', data=np.arange(1000), chunks=(100,),\n"
        "                         compression=32001, compression_opts=(0, 0, 0, 0, 5, 1, 1))\n"
        "    buf = ctypes.create_string_buffer(64)\n"
        "    ctypes.CDLL(hdf5).H5VLget_connector_name(\n"
        "        ctypes.c_int64(f.id.id), buf, ctypes.c_size_t(64))\n"
        "    assert (d[...] == np.arange(1000)).all()\n"
        "    print(buf.value.decode())\n")
    exports = run([str(installed / "bin" / "h5plugin-config"), "--env"]).stdout
    out = run(["bash", "-c", f'{exports}\ncd "{tmp_path}" && {sys.executable} {script}']).stdout
    assert out.strip() == "h5sparse"
    # Without the exports the same program runs on the native connector.
    plain = run(["bash", "-c", f'cd "{tmp_path}" && {sys.executable} {script}'])
    assert plain.stdout.strip() == "native"


def test_unknown_option_fails_with_usage():
    result = run([os.path.join(BIN, "h5plugin-config"), "--bogus"], check=False)
    assert result.returncode != 0
    assert "Usage" in result.stderr


def test_missing_plugins_are_reported(tmp_path):
    lone = tmp_path / "bin"
    lone.mkdir()
    shutil.copy(os.path.join(SOURCE, "h5plugin-config"), lone)
    result = run([str(lone / "h5plugin-config"), "--plugin-path"], {"H5SPARSE_BUILD_DIR": str(tmp_path)}, check=False)
    assert result.returncode != 0
    assert "no h5sparse plugins found" in result.stderr


def test_hdf5_names_the_build_and_check_compares_with_h5py(installed):
    import h5py
    cmd = [str(installed / "bin" / "h5plugin-config")]
    assert run(cmd + ["--hdf5"]).stdout.strip() == h5py.version.hdf5_version + " serial"
    result = run(cmd + ["--check"])
    assert "python3's h5py " + h5py.version.hdf5_version in result.stdout


def test_check_and_env_refuse_another_hdf5_series(installed, tmp_path):
    """An h5dump of the other series first on PATH: --check and --env say so and fail."""
    import h5py
    other = "2.2.0" if h5py.version.hdf5_version.startswith("1.") else "1.14.5"
    fake = tmp_path / "h5dump"
    fake.write_text(f"#!/bin/sh\necho 'h5dump: Version {other}'\n")
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}:{os.environ['PATH']}"}
    cmd = [str(installed / "bin" / "h5plugin-config")]
    for option in ("--check", "--env"):
        result = run(cmd + [option], env, check=False)
        assert result.returncode == 1, option
        assert f"h5dump uses HDF5 {other}" in result.stderr
        assert "export" not in result.stdout
    assert run(cmd + ["--env"], dict(env, H5PLUGIN_CONFIG_NO_CHECK="1")).stdout.startswith("export")
