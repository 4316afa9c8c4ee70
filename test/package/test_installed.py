"""An h5sparse install used the usual ways. `cmake --install` of this build into a prefix that
is then moved (both package files must follow it); a downstream C program (downstream/) built
against it with find_package(h5sparse CONFIG) and with `pkg-config --cflags --libs h5sparse`,
run with the install's plugin environment: it writes and reads a sparse dataset through the
client library. The Python packages installed with `pip install --no-build-isolation --no-index`
from the source tree into a venv (system site packages: Debian's h5py and numpy), imported with
no PYTHONPATH, H5SPARSE_LIBRARY or plugin path: they find libh5sparse.so in the venv's prefix
(a CMake install beside them) or through the system's library search."""
import os
import shutil
import subprocess

import pytest

SOURCE = os.environ["H5SPARSE_SOURCE_DIR"]
BUILD = os.environ["H5SPARSE_BUILD_DIR"]
WORK = os.path.join(BUILD, "package-test")
DOWNSTREAM = os.path.join(SOURCE, "test", "package", "downstream")
VERSION = open(os.path.join(SOURCE, "VERSION")).read().strip()
# What the children must not inherit: they find everything from the install alone.
SOURCE_TREE_VARIABLES = ("PYTHONPATH", "H5SPARSE_LIBRARY", "HDF5_PLUGIN_PATH", "HDF5_VOL_CONNECTOR",
                         "H5SPARSE_PLUGIN_DIR", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in SOURCE_TREE_VARIABLES}
    env.update(extra)
    return env


def run(args, **kwargs):
    kwargs.setdefault("env", clean_env())
    out = subprocess.run(args, capture_output=True, text=True, **kwargs)
    assert out.returncode == 0, f"{args} failed:\n{out.stdout}\n{out.stderr}"
    return out.stdout


def cmake_install(prefix):
    run([os.environ["H5SPARSE_CMAKE"], "--install", BUILD, "--prefix", prefix])


def with_plugin_env(prefix, args):
    """`args` run with the plugin environment the install's h5plugin-config gives."""
    config = os.path.join(prefix, "bin", "h5plugin-config")
    return ["sh", "-c", f'eval "$("{config}" --env)" && exec "$@"', "sh", *args]


@pytest.fixture(scope="module")
def prefix():
    """An install moved after `cmake --install`: nothing may point back to where it was made."""
    os.makedirs(WORK, exist_ok=True)
    made, moved = os.path.join(WORK, "installed-here"), os.path.join(WORK, "prefix")
    for path in (made, moved):
        shutil.rmtree(path, ignore_errors=True)
    cmake_install(made)
    os.rename(made, moved)
    return moved


def libdir_of(prefix):
    """The one directory of `prefix` holding libh5sparse.so (lib, lib64 or lib/<multiarch>; a
    venv's lib64 is a link to its lib)."""
    candidates = ["lib", "lib64"] + [os.path.join("lib", d) for d in os.listdir(os.path.join(prefix, "lib"))]
    found = {os.path.realpath(os.path.join(prefix, d)) for d in candidates
             if os.path.exists(os.path.join(prefix, d, "libh5sparse.so"))}
    assert len(found) == 1, found
    return found.pop()


def run_downstream(prefix, program, name):
    data = os.path.join(WORK, name + ".h5")
    out = run(with_plugin_env(prefix, [program, data]))
    assert out.strip() == f"h5sparse {VERSION}: 3 elements written and read back"
    # The file is an ordinary sparse file: the install's tool reads the three elements back.
    dump = run([os.path.join(prefix, "bin", "h5sparse-tool"), "dump", data, "--sparse-data"])
    assert "1.5" in dump and "-2" in dump and "3.25" in dump, dump


def test_find_package_config(prefix):
    build = os.path.join(WORK, "cmake-downstream")
    shutil.rmtree(build, ignore_errors=True)
    cmake = os.environ["H5SPARSE_CMAKE"]
    run([cmake, "-S", DOWNSTREAM, "-B", build, "-G", os.environ["H5SPARSE_CMAKE_GENERATOR"],
         f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_C_COMPILER={os.environ['H5SPARSE_C_COMPILER']}"])
    run([cmake, "--build", build])
    run_downstream(prefix, os.path.join(build, "downstream"), "cmake-downstream")


def test_find_package_refuses_another_minor_version(prefix):
    build = os.path.join(WORK, "cmake-wrong-version")
    shutil.rmtree(build, ignore_errors=True)
    os.makedirs(build)
    with open(os.path.join(build, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.25)\nproject(p LANGUAGES C)\n"
                "find_package(h5sparse 99.0 CONFIG REQUIRED)\n")
    out = subprocess.run([os.environ["H5SPARSE_CMAKE"], "-S", build, "-B", os.path.join(build, "b"),
                          f"-DCMAKE_PREFIX_PATH={prefix}"], capture_output=True, text=True, env=clean_env())
    assert out.returncode != 0
    assert f"version: {VERSION}" in out.stderr, out.stderr


def test_pkg_config(prefix):
    pkg_config = os.environ["H5SPARSE_PKG_CONFIG"]
    env = clean_env(PKG_CONFIG_PATH=os.path.join(libdir_of(prefix), "pkgconfig"))
    assert run([pkg_config, "--modversion", "h5sparse"], env=env).strip() == VERSION
    libdir = run([pkg_config, "--variable=libdir", "h5sparse"], env=env).strip()
    assert os.path.samefile(libdir, libdir_of(prefix))
    plugindir = run([pkg_config, "--variable=plugindir", "h5sparse"], env=env).strip()
    assert os.path.exists(os.path.join(plugindir, "libh5sparse_vol.so"))
    flags = run([pkg_config, "--cflags", "--libs", "h5sparse"], env=env).split()
    program = os.path.join(WORK, "pkg-config-downstream")
    run([os.environ["H5SPARSE_C_COMPILER"], os.path.join(DOWNSTREAM, "downstream.c"), *flags,
         f"-Wl,-rpath,{libdir}", "-o", program], env=env)
    run_downstream(prefix, program, "pkg-config-downstream")


def pip_installed_venv(name):
    """A venv on the system's packages with the Python packages pip-installed into it from the
    source tree (offline: --no-index; numpy and h5py come from the system)."""
    path = os.path.join(WORK, name)
    shutil.rmtree(path, ignore_errors=True)
    run([os.environ["H5SPARSE_PYTHON"], "-m", "venv", "--system-site-packages", "--without-pip", path])
    run([os.path.join(path, "bin", "python"), "-m", "pip", "install", "--no-build-isolation", "--no-index", SOURCE],
        cwd=WORK)
    return path


SHOW_LIBRARY = "import h5sparse, os; print(h5sparse.__file__); print(h5sparse.library()._name)"


def test_pip_install_finds_the_library_in_its_prefix():
    venv = pip_installed_venv("venv")
    python = os.path.join(venv, "bin", "python")
    out = subprocess.run([python, "-c", SHOW_LIBRARY], capture_output=True, text=True, env=clean_env(), cwd=WORK)
    assert out.returncode != 0 and "set H5SPARSE_LIBRARY" in out.stderr, "no library installed yet"
    cmake_install(venv)  # the C library and plugins into the same prefix
    package, library = run([python, "-c", SHOW_LIBRARY], cwd=WORK).split()
    assert package.startswith(os.path.join(venv, "lib")), package  # the installed copy, not the source tree
    assert os.path.samefile(library, os.path.join(libdir_of(venv), "libh5sparse.so"))
    # In use, with that install's plugin environment: a sparse dataset and its defined elements.
    script = ("import h5py, numpy as np, h5sparse, arkouda_hdf5\n"
              "with h5py.File('venv-use.h5', 'w') as f:\n"
              "    d = f.create_dataset('x', shape=(64, 64), dtype='f4', chunks=(8, 8), **h5sparse.Sparse())\n"
              "    d[3, 4:6] = 1\n"
              "    print(h5sparse.connector_version(f), h5sparse.get_defined(d).tolist())\n")
    out = run(with_plugin_env(venv, [python, "-c", script]), cwd=WORK)
    assert out.strip() == f"h5sparse {VERSION} [[3, 4], [3, 5]]"


def test_pip_install_finds_the_library_through_the_system_search(prefix):
    python = os.path.join(pip_installed_venv("venv-system-search"), "bin", "python")
    env = clean_env(LD_LIBRARY_PATH=libdir_of(prefix))
    show = SHOW_LIBRARY + "; print(open('/proc/self/maps').read())"
    out = run([python, "-c", show], env=env, cwd=WORK)
    assert out.split()[1] == "libh5sparse.so"  # ctypes.util.find_library's answer, loaded by dlopen's search
    assert os.path.join(libdir_of(prefix), "libh5sparse.so") in out
