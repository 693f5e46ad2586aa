"""The harness's long-lived Pythons end without Python's last full collection, with their exit code and atexit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REPORTS_FREEZE = "import atexit, gc; atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0)); "


def _python(code: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *argv], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_the_exit_code_and_atexit_stay_and_the_heap_is_frozen_before_teardown():
    ended = _python(REPORTS_FREEZE + "from harness.process_exit import exit_without_final_collection; "
                    "exit_without_final_collection(3)")
    assert (ended.returncode, ended.stdout.strip()) == (3, "frozen at exit: True"), ended.stderr


def test_python_m_harness_ends_through_it(tmp_path):
    results = tmp_path / "empty.jsonl"
    results.write_text("")
    ended = _python(REPORTS_FREEZE + "import runpy, sys; sys.argv = ['harness', *sys.argv[1:]]; "
                    "runpy.run_module('harness', run_name='__main__')", "report", str(results))
    assert ended.stdout.strip().endswith("frozen at exit: True"), ended.stdout[-2000:] + ended.stderr[-2000:]
    assert ended.returncode == 2  # an empty results file is bad input: the command's own exit code comes through


def _pytest_freezes(*arguments: str) -> bool:
    ended = _python(REPORTS_FREEZE + "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))",
                    "--collect-only", "-q", "-p", "no:cacheprovider", *arguments)
    assert ended.returncode == 0, ended.stdout[-2000:] + ended.stderr[-2000:]
    return ended.stdout.strip().endswith("frozen at exit: True")


def test_a_matrix_pytest_freezes_its_heap_before_pytests_last_collections_and_another_pytest_does_not():
    """pytest collects garbage five times after `pytest_unconfigure` (unraisable exceptions); the plugin freezes the
    heap first in a process that runs the matrix, and stays inert elsewhere."""
    assert _pytest_freezes("matrix", "--matrix-tier", "cpu", "--matrix-kernel", "add", "--matrix-pipeline", "eager")
    assert not _pytest_freezes("tests/unit/test_tolerance.py")
