"""Unmodified h5py with the h5sparse connector on gives the same results as without it.

HDF5 reads HDF5_VOL_CONNECTOR once, when the library initialises, so each scenario of
scenarios.py runs in two child processes: with HDF5_VOL_CONNECTOR="h5sparse under_vol=0;
under_info={}" and the build's plugin directory, and without the variable and without the VOL
plugin on the plugin path (native HDF5, same filter plugins). The two runs must report
identical observations: values, dtypes and HDF5 types, shapes, layouts and storage properties,
links, iteration orders, attributes, exception types and messages, and a canonical description
of every file the scenario left behind.

Each run also proves which connector served it: for every probed object, H5VLget_connector_name
(through ctypes on the HDF5 library h5py loaded) says "h5sparse" and the connector's own file
operation "h5sparse.connector_version" answers "h5sparse 0.1.0" in the connector run, while the
native run sees "native" and cannot even find that operation. After each scenario nothing may
stay open: H5Fget_obj_count(H5F_OBJ_ALL, files|groups|datasets|attributes) is 0, the datatype
IDs are as many as natively, and the references the connector held on the connector below are
all given back.
"""
import os
import sys

import pytest

import connector_support as cs

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "scenarios.py")
NAMES = ["files", "groups", "links", "iteration", "attributes", "numeric", "types", "references",
         "resize", "layouts", "fillvalues", "direct_chunk", "close_handles", "reopen", "objects"]


def test_scenario_list_is_complete():
    sys.path.insert(0, HERE)
    import scenarios
    assert sorted(scenarios.SCENARIOS) == sorted(NAMES)


def run_both(name, tmp_path):
    native, native_err = cs.run_python([SCRIPT, "run", name, str(tmp_path / "native")], connector=False)
    conn, conn_err = cs.run_python([SCRIPT, "run", name, str(tmp_path / "connector")], connector=True)
    return native, native_err, conn, conn_err


@pytest.mark.parametrize("name", NAMES)
def test_same_results_with_and_without_connector(name, tmp_path):
    native, native_err, conn, conn_err = run_both(name, tmp_path)

    # same observations, same files
    diffs = cs.differences(native["result"], conn["result"])
    assert not diffs, f"scenario {name}: results differ (native != connector):\n  " + "\n  ".join(diffs)

    # the connector served every probed object of the connector run, and none of the native run
    assert conn["probes"] and [p["what"] for p in conn["probes"]] == [p["what"] for p in native["probes"]]
    for p in conn["probes"]:
        assert (p["object"], p["file"], p["version"]) == ("h5sparse", "h5sparse", cs.CONNECTOR_VERSION), p
    for p in native["probes"]:
        assert (p["object"], p["file"], p["version"]) == ("native", "native", None), p
    refs = conn["vol_refs_before"].get("h5sparse", 0)
    assert (refs == "registered" or refs >= 1) and "h5sparse" not in native["vol_refs_before"]

    assert sorted(native["files"]) == sorted(conn["files"])
    diff = cs.first_difference(native["files"], conn["files"])
    assert diff is None, f"scenario {name}: written files differ (native != connector) at {diff}"

    # nothing left open, no references of the connector below kept
    for run, label in ((native, "native"), (conn, "connector")):
        assert run["open_objects"] == 0 and run["open_objects_final"] == 0, (label, run["ids"])
        assert run["vol_refs_after"] == run["vol_refs_before"], (label, run["vol_refs_before"], run["vol_refs_after"])
    assert conn["ids"] == native["ids"]
    assert "HDF5-DIAG" not in conn_err and "HDF5-DIAG" not in native_err, conn_err[-3000:]


def test_connector_plugin_on_the_path_is_neutral(tmp_path):
    """Only HDF5_VOL_CONNECTOR turns the connector on: with libh5sparse_vol.so on the plugin path
    (as for every user of the project's filter plugins) but the variable unset, h5py must behave
    exactly as without the plugin. HDF5 loads every VOL plugin of the path when a file fails to
    open, so the plugin's init and probe callbacks run even then."""
    baseline, _ = cs.run_python([SCRIPT, "run", "files", str(tmp_path / "without_plugin")], connector=False)
    with_plugin, _ = cs.run_python([SCRIPT, "run", "files", str(tmp_path / "with_plugin")], connector=False,
                                   plugins=cs.plugin_dir())
    assert all(p["object"] == "native" for p in with_plugin["probes"])
    diffs = cs.differences(baseline["result"], with_plugin["result"])
    assert not diffs, "libh5sparse_vol.so on HDF5_PLUGIN_PATH changes native results:\n  " + "\n  ".join(diffs)
