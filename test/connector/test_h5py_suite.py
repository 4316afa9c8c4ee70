"""h5py's own test suite gives the same outcome for every test with and without the h5sparse
connector (HDF5_VOL_CONNECTOR), on whichever h5py and HDF5 the toolchain has.

The connector run is traced (preload.c): files really went through h5sparse."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import h5py

import connector_support as cs


def h5py_tests_dir():
    # h5py/_hl's sibling; on Debian that is h5py/_debian_h5py_serial/tests.
    return os.path.join(os.path.dirname(os.path.dirname(h5py._hl.__file__)), "tests")


def outcomes(tmp_path, connector):
    """{test id: outcome} of one run of h5py's suite, and the connector trace of that run."""
    label = "connector" if connector else "native"
    report = tmp_path / f"{label}.xml"
    trace = tmp_path / f"{label}.trace"
    env = cs.env(connector)
    env["LD_PRELOAD"] = cs.preload_lib()
    env["H5SPARSE_VOL_TRACE"] = str(trace)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}",
                    h5py_tests_dir()], env=env, cwd=tmp_path, capture_output=True, timeout=1200)
    result = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        outcome = next((k for k in ("error", "failure", "skipped") if k in kinds), "passed")
        result[case.get("classname") + "::" + case.get("name")] = outcome
    return result, cs.read_trace(str(trace))


def test_h5py_suite_same_with_and_without_connector(tmp_path):
    native, native_trace = outcomes(tmp_path, False)
    conn, conn_trace = outcomes(tmp_path, True)
    passed = sum(1 for v in native.values() if v == "passed")
    print(f"h5py {h5py.version.version} on HDF5 {h5py.version.hdf5_version}: {len(native)} tests, "
          f"{passed} passed natively; with the connector: {sum(1 for v in conn.values() if v == 'passed')} passed")
    assert passed >= 700, native  # h5py 3.13: 777 of 789, 3.16: 896 of 912
    differ = {k: (native.get(k), conn.get(k)) for k in set(native) | set(conn) if native.get(k) != conn.get(k)}
    assert not differ, differ
    # preload.c counts the application's H5Dread/H5Dwrite calls made on h5sparse objects
    assert native_trace.get("top_dread", 0) + native_trace.get("top_dwrite", 0) == 0, native_trace
    assert conn_trace.get("top_dread", 0) >= 100 and conn_trace.get("top_dwrite", 0) >= 100, conn_trace
