"""Running h5sparse-tool in the tests: with neither the connector nor a plugin path (it reads
stored chunks itself), and reading what it prints."""
import os
import re
import subprocess

TOOL = os.path.join(os.environ["H5SPARSE_BIN_DIR"], "h5sparse-tool")
# The tool runs without the connector and without a plugin path: it reads stored chunks itself.
BARE_ENV = {k: v for k, v in os.environ.items() if k not in ("HDF5_VOL_CONNECTOR", "HDF5_PLUGIN_PATH")}
# Other readers (h5py, h5dump, h5diff) get the plugin path only.
PLAIN_ENV = {k: v for k, v in os.environ.items() if k != "HDF5_VOL_CONNECTOR"}


def tool(*args, check=True):
    result = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, env=BARE_ENV)
    if check and result.returncode != 0:
        raise AssertionError(f"h5sparse-tool {args} failed:\n{result.stderr}")
    return result


def parse_dataset_blocks(text):
    """{dataset path: block text} of a DDL-style output."""
    blocks = {}
    for match in re.finditer(r'^DATASET "([^"]+)" \{\n(.*?)^\}\n', text, re.M | re.S):
        blocks[match.group(1)] = match.group(2)
    return blocks


def expect_failure(result, *fragments):
    """A failed run whose stderr holds the tool's error record and every fragment."""
    assert result.returncode != 0
    assert "h5sparse-DIAG" in result.stderr and "major: Command-line tool" in result.stderr, result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)
