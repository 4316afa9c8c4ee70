"""h5sparse-tool of a wheel install: the tool's code runs inside the wheel's libh5sparse, bound
to h5py's HDF5 and its high-level library (a source or Debian install has the program itself)."""
import ctypes
import os
import sys


def main():
    import h5py  # first: the tool reads stored chunks on the native connector, as the program does
    import h5sparse
    from h5sparse import _bundle
    if not _bundle.series:
        sys.exit("h5sparse-tool: this h5sparse is not a wheel; run the h5sparse-tool program of its build")
    lib = h5sparse.library()
    lib.h5sparse_bind_hdf5_high_level.restype = ctypes.c_char_p
    problem = lib.h5sparse_bind_hdf5_high_level()
    if problem:
        sys.exit(f"h5sparse-tool: {problem.decode(errors='replace')} (h5py {h5py.version.version})")
    os.environ.setdefault("H5SPARSE_PLUGIN_DIR", _bundle.plugin_dir())
    args = [b"h5sparse-tool"] + [os.fsencode(a) for a in sys.argv[1:]]
    argv = (ctypes.c_char_p * (len(args) + 1))(*args, None)
    lib.h5sparse_tool_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    sys.stdout.flush()
    sys.exit(lib.h5sparse_tool_main(len(args), argv))


if __name__ == "__main__":
    main()
