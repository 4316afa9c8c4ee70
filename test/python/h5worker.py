#!/usr/bin/env python3
"""The other side of an interop test, run in its own process so that its HDF5 sees exactly the
HDF5_PLUGIN_PATH the test chose. Prints one JSON report as its last stdout line.

  h5worker.py write SPECS.json FILE [--unregister-lzf]
      h5py writes the datasets of SPECS (see h5interop.make_array), then reports their
      filter pipelines and chunk storage.
  h5worker.py direct-write SPECS.json FILE [--unregister-lzf]
      h5py creates datasets with verbatim pipelines and stores raw chunks in them
      (h5interop.h5py_direct_write), then reports their metadata.
  h5worker.py read FILE OUT.npz NAME... [--unregister-lzf]
      h5py reads the named datasets (a fresh open, no chunk cache) into OUT.npz.
  h5worker.py pytables-write SPECS.json FILE
      PyTables writes SPECS with its built-in Blosc.
  h5worker.py pytables-read FILE OUT.npz NAME...
      PyTables reads the named nodes.
  h5worker.py both-blosc SPECS.json FILE OURS.so PEER.so
      Both Blosc plugins in this one process: h5py registers each library's filter class in
      turn (H5PLget_plugin_info, as HDF5 loads a plugin) and, alternating, writes every spec
      into /ours and /peer (no chunk cache: each chunk goes through the filter registered at
      that moment); then each plugin reads all of them back. Reports "correct" (reader ->
      dataset -> values came back) and "tasks" (this process's threads before anything and
      after our plugin's first write: c-blosc's global pool keeps its threads).

--unregister-lzf removes h5py's built-in LZF filter (32000) first, so any LZF chunk must be
decoded by a plugin found on HDF5_PLUGIN_PATH. Every report has "plugins": the filter plugin
libraries mapped into this process once the files were written or read, and "plugins_before":
those mapped before any file was touched ("lzf_registered_after" is asked last, because
H5Zfilter_avail itself loads plugins).
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h5interop as hi  # noqa: E402


def both_blosc(specs_path, path, libs):
    import ctypes

    import h5py

    classes = {}
    for side, lib in libs.items():
        info = ctypes.CDLL(lib).H5PLget_plugin_info
        info.restype = ctypes.c_void_p
        classes[side] = info()
        assert classes[side], f"{lib} gave no filter class"
    specs = json.load(open(specs_path))
    tasks = [len(os.listdir("/proc/self/task"))]
    with h5py.File(path, "w", rdcc_nbytes=0) as f:
        for i, spec in enumerate(specs):
            for side in ("ours", "peer") if i % 2 == 0 else ("peer", "ours"):
                h5py.h5z.register_filter(classes[side])
                hi.h5py_write(f.require_group(side), spec)
                if len(tasks) == 1 and side == "ours":
                    tasks.append(len(os.listdir("/proc/self/task")))
    correct = {}
    for reader in ("peer", "ours"):
        h5py.h5z.register_filter(classes[reader])
        with h5py.File(path, "r", rdcc_nbytes=0) as f:
            correct[reader] = {f"{side}/{s['name']}": f[side][s["name"]][()].tobytes() == hi.make_array(s).tobytes()
                               for side in ("ours", "peer") for s in specs}
    return {"correct": correct, "tasks": tasks}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["write", "direct-write", "read", "pytables-write", "pytables-read",
                                            "both-blosc"])
    parser.add_argument("args", nargs="+")
    parser.add_argument("--unregister-lzf", action="store_true")
    opts = parser.parse_args()
    assert "hdf5plugin" not in sys.modules
    report = {"hdf5_plugin_path": os.environ.get("HDF5_PLUGIN_PATH")}

    if opts.command == "both-blosc":
        specs_path, path, ours, peer = opts.args
        report.update(both_blosc(specs_path, path, {"ours": ours, "peer": peer}))
    elif opts.command.startswith("pytables"):
        import tables  # registers PyTables' own Blosc

        report["plugins_before"] = hi.mapped_plugins()
        if opts.command == "pytables-write":
            specs = json.load(open(opts.args[0]))
            hi.pytables_write(opts.args[1], specs)
        else:
            path, out, *names = opts.args
            arrays = {}
            with tables.open_file(path, "r") as f:
                for name in names:
                    arrays[name] = f.get_node("/" + name).read()
            np.savez(out, **arrays)
    else:
        import h5py

        if opts.unregister_lzf:
            assert h5py.h5z.unregister_filter(hi.FILTER_LZF), "h5py's LZF could not be unregistered"
        report["search_path"] = [os.fsdecode(h5py.h5pl.get(i)) for i in range(h5py.h5pl.size())]
        report["plugins_before"] = hi.mapped_plugins()
        if opts.command in ("write", "direct-write"):
            specs = json.load(open(opts.args[0]))
            write = hi.h5py_write if opts.command == "write" else hi.h5py_direct_write
            with h5py.File(opts.args[1], "w") as f:
                for spec in specs:
                    write(f, spec)
            with h5py.File(opts.args[1], "r") as f:
                report["datasets"] = {s["name"]: hi.h5py_metadata(f[s["name"]]) for s in specs}
        else:
            path, out, *names = opts.args
            arrays = {}
            with h5py.File(path, "r", rdcc_nbytes=0) as f:
                for name in names:
                    arrays[name] = f[name][()]
                report["datasets"] = {name: hi.h5py_metadata(f[name]) for name in names}
            np.savez(out, **arrays)
        report["plugins"] = hi.mapped_plugins()
        # Asked only now: H5Zfilter_avail itself loads a plugin from the search path.
        report["lzf_registered_after"] = bool(h5py.h5z.filter_avail(hi.FILTER_LZF))

    report.setdefault("plugins", hi.mapped_plugins())
    print(json.dumps(report))


if __name__ == "__main__":
    main()
