"""--repeat N: each cell runs N times; differing outcomes make it `flaky`, with every run's outcome and the first failure kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.results import CellResult, read_results
from harness.run.repeat import RepeatError, combine_runs, parse_repeat

REPO = Path(__file__).resolve().parents[2]
FLAKY_KERNELS = REPO / "tests" / "integration" / "faults" / "flaky_kernels.py"


def run(outcome: str, duration: float = 1.0, error: str | None = None) -> CellResult:
    return CellResult(id="add/raw/eager", kernel="add", style="raw", pipeline="eager", outcome=outcome,
                      stage=None if outcome == "pass" else "run", error_type=error and "RuntimeError", error=error,
                      duration_s=duration)


def test_one_run_is_recorded_as_before():
    combined = combine_runs([run("fail", error="boom")])
    assert (combined.outcome, combined.repeats, combined.error) == ("fail", None, "boom")


def test_the_same_outcome_every_time_is_that_outcome_with_its_repeats():
    combined = combine_runs([run("pass", 1.0), run("pass", 2.0), run("pass", 0.5)])
    assert (combined.outcome, combined.repeats, combined.duration_s) == ("pass", ["pass"] * 3, 3.5)
    assert combined.detail["repeat_durations_s"] == [1.0, 2.0, 0.5]


def test_a_consistent_failure_is_not_flaky_and_keeps_the_first_runs_error():
    combined = combine_runs([run("fail", error="first"), run("fail", error="second")])
    assert (combined.outcome, combined.repeats, combined.error) == ("fail", ["fail", "fail"], "first")


def test_differing_outcomes_are_flaky_with_the_first_non_pass_evidence():
    combined = combine_runs([run("pass"), run("crash", error="SIGSEGV"), run("fail", error="boom"), run("pass")])
    assert combined.outcome == "flaky"
    assert combined.repeats == ["pass", "crash", "fail", "pass"]
    assert (combined.stage, combined.error_type, combined.error) == ("run", "RuntimeError", "SIGSEGV")
    assert combined.detail["flaky_own_outcome"] == "crash"


@pytest.mark.parametrize("text", ["0", "-1", "two", "1.5", ""])
def test_a_bad_repeat_is_refused(text):
    with pytest.raises(RepeatError, match="expected a whole number of runs per cell, 1 or more"):
        parse_repeat(text)


@pytest.mark.slow
def test_a_kernel_that_fails_every_other_run_is_flaky_and_its_neighbours_are_not(tmp_path):
    """Real cells: flaky_add raises in every odd-numbered launch process (a counter file), add never does; each
    run in a process of its own (--isolation process; forked by the suite's zygote maker), since worker isolation
    repeats a cell in the same process. One style that launches (`raw`) beside the control: a repeat is a process of
    its own whichever style launched."""
    counter_dir = tmp_path / "counter"
    counter_dir.mkdir()
    output = tmp_path / "r.jsonl"
    completed = harness_command(
        ["run", "--tier", "cpu", "--kernels-from", str(FLAKY_KERNELS),
         "-k", "add,flaky_add", "-s", "native,raw", "-p", "eager", "--repeat", "2", "-n", "1", "--isolation", "process",
         "-o", str(output)],
        timeout=600, env={**os.environ, "TCM_FLAKY_DIR": str(counter_dir)},
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = read_results(output)
    cells = {cell.id: cell for cell in results.cells}
    assert results.header["repeat"] == 2
    flaky = cells["flaky_add/raw/eager"]  # launches 1, 2: fail then pass
    assert (flaky.outcome, flaky.repeats) == ("flaky", ["fail", "pass"]), flaky
    assert (flaky.stage, flaky.error_type) == ("run", "RuntimeError") and "flaky by design" in flaky.error
    assert (counter_dir / "launches").stat().st_size == 2  # two runs, each in a process of its own
    steady = [cells["flaky_add/native/eager"]] + [cells[f"add/{style}/eager"] for style in ("native", "raw")]
    assert all((cell.outcome, cell.repeats) == ("pass", ["pass", "pass"]) for cell in steady), steady
    assert "flaky (1; outcomes of the repeated runs, in order):" in completed.stdout
    assert "- flaky_add/raw/eager: fail, pass" in completed.stdout
    assert "| flaky\\_add/raw/eager" in output.with_suffix(".md").read_text()
