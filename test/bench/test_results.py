"""bench/results.py: a script's section is replaced between its markers and nowhere else."""
import argparse
import os
import sys

import pytest

SOURCE = os.environ.get("H5SPARSE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SOURCE, "bench"))
import results  # noqa: E402

BEFORE = """# Benchmark results

Intro.

<!-- bench/a.py begin -->
### A

old a
<!-- bench/a.py end -->

<!-- bench/b.py begin -->
### B

old b
<!-- bench/b.py end -->
"""


def test_replace_keeps_every_other_byte(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(BEFORE)
    results.replace_section("bench/a.py", "### A\n\nnew a\nsecond line\n", str(path))
    assert path.read_text() == BEFORE.replace("old a\n", "new a\nsecond line\n")


def test_new_section_is_appended_and_then_replaced(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(BEFORE)
    results.replace_section("bench/c.py", "### C\n\none\n", str(path))
    assert path.read_text() == BEFORE + "\n<!-- bench/c.py begin -->\n### C\n\none\n<!-- bench/c.py end -->\n"
    results.replace_section("bench/c.py", "### C\n\ntwo", str(path))
    assert path.read_text() == BEFORE + "\n<!-- bench/c.py begin -->\n### C\n\ntwo\n<!-- bench/c.py end -->\n"


def test_names_are_literal(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text(BEFORE)
    results.replace_section("bench/a.py (x)", "z", str(path))   # no regex meaning, no match with bench/a.py
    assert path.read_text().startswith(BEFORE)


@pytest.mark.parametrize("quick, given, expected", [(False, None, results.RESULTS_MD), (True, None, None),
                                                    (True, "/x.md", "/x.md"), (False, "/x.md", "/x.md")])
def test_quick_runs_write_only_where_told(quick, given, expected):
    parser = argparse.ArgumentParser()
    results.add_argument(parser)
    args = parser.parse_args(["--results-md", given] if given else [])
    assert results.target(args, quick) == expected


def test_preamble_has_the_command_and_machine(monkeypatch):
    monkeypatch.setattr(sys, "argv", [os.path.join(results.REPO, "bench", "x.py"), "--quick", "a b"])
    lines = results.preamble("Title", quick=True)
    assert lines[0] == "### Title"
    assert lines[3].endswith("scripts/dev run python3 bench/x.py --quick 'a b'")
    assert "UTC" in lines[6] and "a --quick or partial run" in lines[6]
