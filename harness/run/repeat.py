"""`--repeat N`: run a cell N times, each in its own process, and call it `flaky` when the outcomes differ.

A verdict that changes from run to run is not a verdict; the record keeps every run's
outcome (`repeats`) and the evidence of the first run that did not pass.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.results import CellResult


class RepeatError(ValueError):
    """A --repeat that is not a whole number >= 1; the message is one line."""


def parse_repeat(text: str | int, option: str = "--repeat") -> int:
    try:
        times = int(text)
    except ValueError:
        times = 0
    if times < 1:
        raise RepeatError(f"{option} {text!r}: expected a whole number of runs per cell, 1 or more")
    return times


def combine_runs(runs: list[CellResult]) -> CellResult:
    """One record for N runs: the common outcome, or `flaky` with the first non-pass run's evidence.

    duration_s is the time all runs took together; each run's duration is in detail.repeat_durations_s.
    """
    if len(runs) == 1:
        return runs[0]
    outcomes = [run.outcome for run in runs]
    flaky = len(set(outcomes)) > 1
    chosen = next((run for run in runs if run.outcome != "pass"), runs[0]) if flaky else runs[0]
    chosen.repeats = outcomes
    chosen.detail["repeat_durations_s"] = [run.duration_s for run in runs]
    chosen.duration_s = round(sum(run.duration_s for run in runs), 3)
    if flaky:
        chosen.detail["flaky_own_outcome"] = chosen.outcome  # the outcome whose evidence is kept
        chosen.outcome = "flaky"
    return chosen


def run_repeated(run_once: Callable[[], CellResult], times: int) -> CellResult:
    """Call `run_once` (one isolated run of the cell) `times` times and combine the results."""
    return combine_runs([run_once() for _ in range(times)])
