"""Confirmation before alarm, through the real CLI on this machine's tier (issue #33).

A baseline is written from a clean run of two plug-in kernels; then the same cells run with faults: a fault
that a new process does not see again (`transient_add`: exit 0, the cell listed as flaky, every try's evidence
kept), and a result that really changed (`changed_add`: exit 1, the cell named as a confirmed regression after
three new runs).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.report.markdown.aggregate import final_cells
from harness.results import read_results
from harness.run.environment import resolve_tier

PLUGIN = Path(__file__).with_name("changing_kernels.py")
REPO = Path(__file__).resolve().parents[3]
TRANSIENT, CHANGED = "transient_add/raw/eager", "changed_add/raw/eager"

pytestmark = pytest.mark.slow


def _run(folder: Path, mode: str, name: str, kernels: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TCM_CHANGE_MODE=mode, TCM_CHANGE_DIR=str(folder))
    command = ["run", "--kernels-from", str(PLUGIN), "-k", kernels,
               "-s", "native,raw", "-p", "eager", "--tier", resolve_tier("auto"), "-n", "1",
               "-o", str(folder / f"{name}.jsonl"), *extra]
    return harness_command(command, env=env, timeout=600)


@pytest.fixture(scope="module")
def baseline_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("confirm")
    clean = _run(folder, "ok", "clean", "transient_add,changed_add", "--baseline-dir", "none")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    written = harness_command(["baseline", str(folder / "clean.jsonl"), "--dir", str(folder / "expected")])
    assert written.returncode == 0, written.stderr
    cells = final_cells(read_results(folder / "clean.jsonl"))
    assert cells[TRANSIENT].outcome == cells[CHANGED].outcome == "pass"
    return folder / "expected"


def test_a_transient_fault_is_flaky_and_does_not_fail_the_run(baseline_dir: Path, tmp_path: Path) -> None:
    """As a kernel library's CI asks it: the expected outcomes are its committed results file (--baseline-results)."""
    clean = baseline_dir.parent / "clean.jsonl"
    run = _run(tmp_path, "faults", "transient", "transient_add", "--baseline-results", str(clean))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 regressions" in run.stdout and "1 flaky" in run.stdout
    cell = final_cells(read_results(tmp_path / "transient.jsonl"))[TRANSIENT]
    assert cell.outcome == "flaky"
    confirmation = cell.detail["confirmation"]
    assert confirmation["verdict"] == "flaky" and confirmation["baseline"] == "pass"
    tries = confirmation["tries"]
    assert [attempt["outcome"] for attempt in tries] == ["fail", "pass"]  # stops at the first try that disagrees
    assert "transient by design" in tries[0]["error"] and tries[0]["traceback"]
    assert tries[1]["isolation"] == "process"


def test_a_changed_result_is_confirmed_and_fails_the_run(baseline_dir: Path, tmp_path: Path) -> None:
    run = _run(tmp_path, "faults", "both", "transient_add,changed_add", "--baseline-dir", str(baseline_dir))
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"regressions: {CHANGED}: pass -> wrong (confirmed)" in run.stdout
    assert "WRONG CONSISTENTLY in 3 new process(es)" in run.stdout
    assert f"flaky: {TRANSIENT}: pass -> fail, pass" in run.stdout  # listed apart, not a regression
    cells = final_cells(read_results(tmp_path / "both.jsonl"))
    assert cells[CHANGED].outcome == "wrong"
    assert [attempt["outcome"] for attempt in cells[CHANGED].detail["confirmation"]["tries"]] == ["wrong"] * 4
    assert cells[TRANSIENT].outcome == "flaky"
