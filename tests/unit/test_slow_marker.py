"""The `slow` marker means something: `-m "not slow"` deselects every test that runs cells, and a test left without
the marker fails when it is not quick (tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from suite_rules import LONGEST_FIRST, QUICK_LIMIT_S, slow_marker_problem, start_order

REPO = Path(__file__).resolve().parents[2]


def test_a_long_test_without_the_marker_is_a_problem():
    assert "mark it @pytest.mark.slow" in slow_marker_problem(False, QUICK_LIMIT_S + 1)


def test_a_quick_test_or_a_marked_one_is_not():
    assert slow_marker_problem(False, 0.5) is None
    assert slow_marker_problem(True, 10 * QUICK_LIMIT_S) is None


def test_the_longest_modules_start_first_then_the_slow_ones():
    assert start_order(LONGEST_FIRST[0], True) < start_order(LONGEST_FIRST[-1], True) < start_order("tests/x.py", True)
    assert start_order("tests/x.py", True) < start_order("tests/y.py", False)
    assert all((REPO / path).is_file() for path in LONGEST_FIRST)


def test_xdist_hands_out_the_modules_in_that_order(pytestconfig):
    """Its loadscope scheduler otherwise sorts modules by their number of tests (tests/conftest.py)."""
    assert pytestconfig.option.loadscopereorder is False


def test_not_slow_deselects_the_tests_that_run_cells():
    completed = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "not slow", "-p", "no:xdist",
                                "tests/integration"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert completed.returncode in (0, 5), completed.stdout[-2000:] + completed.stderr[-2000:]
    collected = [line for line in completed.stdout.splitlines() if "::" in line]
    quick = {line.split("::")[0] for line in collected}
    # What stays in the quick loop from tests/integration runs no cell: they check what a run would be asked.
    for path in ("tests/integration/test_default_selection.py", "tests/integration/test_cpu_tier.py",
                 "tests/integration/test_call_sites.py", "tests/integration/test_export_roundtrip.py"):
        assert path not in quick, f"{path} runs cells but is left in the quick loop"
