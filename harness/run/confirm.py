"""Confirmation before alarm: a cell whose outcome differs from the baseline is run again before anyone is told.

PyTorch's CI re-runs a failed test alone in a new process (test/run_test.py) and says either "failed and then
succeeded" or "FAILED CONSISTENTLY". Here each changed cell is run again alone, in a new Python with empty
Inductor and Triton caches, up to `tries` times, stopping at the first try whose outcome differs from the run's:
- every try gives the run's outcome: the change is **confirmed**; the cell keeps its outcome;
- a try disagrees: the cell is **flaky**; its outcome becomes `flaky` and the evidence of the first try that
  did not pass is kept (as `--repeat` does).
Either way the record gains `detail.confirmation`: the baseline's outcome, the verdict and every try (the run's
own first) with its outcome and evidence. The extra cost falls only on the changed cells.

Different cells are confirmed at once, as many as the run has workers (each try is still a new Python of its own;
a cell's tries stay one after another, since a try that disagrees ends them). When more cells changed than
`--confirm-threshold` (harness.run.confirm_sample), only `--confirm-sample`'s sample is confirmed; each other
changed cell gets a record whose verdict is **unconfirmed**, saying why, and keeps the run's outcome, as with
`--confirm 0`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import replace
from functools import partial
from threading import Event
from typing import Any

from harness.results import CellResult
from harness.run.cell import CellRequest
from harness.run.confirm_sample import choose_sample, sample_size
from harness.run.verdict import mark_env
from harness.vocab import CONTROL_STYLE, split_cell_id

DEFAULT_TRIES = 3
TRY_FIELDS = ("outcome", "stage", "error_type", "error", "reason", "duration_s", "worker", "traceback")


def changed_cells(cells: Iterable[CellResult], expected: dict[str, str]) -> list[CellResult]:
    """The cells whose outcome is not the baseline's; cells the baseline does not know are new, not changed."""
    return [cell for cell in cells if cell.id in expected and expected[cell.id] != cell.outcome]


def _try_record(result: CellResult) -> dict[str, Any]:
    record = {name: getattr(result, name) for name in TRY_FIELDS if getattr(result, name) not in (None, "")}
    if result.control:
        record["control"] = result.control
    isolation = result.detail.get("isolation")
    if isolation:
        record["isolation"] = isolation
    return record


def confirm_cell(first: CellResult, expected: str, run_again: Callable[[], CellResult], tries: int,
                 stopping: Event | None = None) -> CellResult:
    """`first` (the run's record) with its confirmation: confirmed when `tries` new runs agree with it, else flaky.
    Once `stopping` is set (an interrupt), no further try starts."""
    attempts = [first]
    for _ in range(tries):
        if stopping is not None and stopping.is_set():
            break
        attempts.append(run_again())
        if attempts[-1].outcome != first.outcome:
            break
    held = all(attempt.outcome == first.outcome for attempt in attempts)
    chosen = first if held else next(attempt for attempt in attempts if attempt.outcome != "pass")
    record = replace(chosen, id=first.id, worker=first.worker, detail=dict(chosen.detail))
    record.repeats = [attempt.outcome for attempt in attempts]
    record.duration_s = round(sum(attempt.duration_s for attempt in attempts), 3)
    record.detail["confirmation"] = {
        "baseline": expected,
        "verdict": "confirmed" if held else "flaky",
        "tries": [_try_record(attempt) for attempt in attempts],
        "how": f"the run, then up to {tries} new Python(s) with empty Inductor and Triton caches, one after another",
    }
    if not held:
        record.detail["flaky_own_outcome"] = record.outcome
        record.outcome = "flaky"
    return record


def unconfirmed_cell(first: CellResult, expected: str, why: str) -> CellResult:
    """`first` (the run's record, its outcome kept) marked as a change nobody confirmed, and why."""
    record = replace(first, detail=dict(first.detail))
    record.detail["confirmation"] = {"baseline": expected, "verdict": "unconfirmed", "why": why,
                                     "tries": [_try_record(first)]}
    return record


def confirmation_line(record: CellResult) -> str:
    """One line in the words of PyTorch's run_test.py, e.g. 'add/raw/compile: fail, FAILED CONSISTENTLY in 3 new processes'."""
    confirmation = record.detail.get("confirmation", {})
    outcomes = [attempt["outcome"] for attempt in confirmation.get("tries", [])]
    first, again = (outcomes[0], outcomes[1:]) if outcomes else ("?", [])
    was = confirmation.get("baseline", "?")
    if confirmation.get("verdict") == "unconfirmed":
        return f"{record.id}: {was} -> {first}, unconfirmed ({confirmation.get('why', 'not re-run')})"
    if confirmation.get("verdict") == "confirmed":
        return (f"{record.id}: {was} -> {first}, {first.upper()} CONSISTENTLY in {len(again)} new process(es) "
                "with cold caches: confirmed")
    return f"{record.id}: {was} -> {first} in the run, then {', '.join(again)} in new processes with cold caches: flaky"


class CellRerunner:
    """Runs one cell again, alone, in a new Python with cold caches; judges a failing style by its control, run
    the same way, as the run did (harness.run.verdict.mark_env)."""

    def __init__(self, tier: str, kernels_from: list[str], timeout_s: float,
                 run_isolated: Callable[[CellRequest, float, str], CellResult]) -> None:
        self.tier, self.kernels_from, self.timeout_s = tier, kernels_from, timeout_s
        self._run_isolated = run_isolated

    def _request(self, kernel: str, style: str, pipeline: str) -> CellRequest:
        return CellRequest(kernel, style, pipeline, self.tier, kernels_from=self.kernels_from, worker="confirm",
                           cold_cache=True)

    def __call__(self, cell: CellResult) -> CellResult:
        kernel, style, pipeline = split_cell_id(cell.id)
        result = self._run_isolated(self._request(kernel, style, pipeline), self.timeout_s, "process")
        if cell.style != CONTROL_STYLE and result.outcome not in ("pass", "skip"):
            control = self._run_isolated(self._request(kernel, CONTROL_STYLE, pipeline), self.timeout_s, "process")
            mark_env(result, control)
        return result


def confirming_line(changed: int, tries: int, sample: int, workers: int, threshold: int = 0) -> str:
    """What the run is about to confirm, and what it leaves unconfirmed."""
    sample = sample_size(changed, sample, threshold)
    at_once = f"{min(workers, sample if 0 < sample < changed else changed)} at once"
    if sample:
        return (f"confirming a sample of {sample} of the {changed} cells that differ from the baseline (more than "
                f"--confirm-threshold {threshold}; the other {changed - sample} are recorded as unconfirmed): each alone in "
                f"a new Python with cold caches, up to {tries} time(s), {at_once}")
    return (f"confirming {changed} cell(s) that differ from the baseline: each alone, in a new Python with cold "
            f"caches, up to {tries} time(s), {at_once}")


def sample_reason(changed: int, size: int, threshold: int) -> str:
    """Why a changed cell was not confirmed: the words of its record and of the run's output."""
    return (f"not in the sample: {changed} cells changed, more than --confirm-threshold {threshold}; "
            f"--confirm-sample {size} confirmed, chosen across pipelines and changes")


def confirm_changes(cells: Iterable[CellResult], expected: dict[str, str], rerun: Callable[[CellResult], CellResult],
                    tries: int = DEFAULT_TRIES, report: Callable[[str], None] | None = None, workers: int = 1,
                    sample: int = 0, threshold: int = 0,
                    end_tries: Callable[[], None] | None = None) -> list[CellResult]:
    """Confirm the changed cells, `workers` at once, a sample of `sample` when more than `threshold` changed (a
    sample of 0: all); returns the records to append to the results file: the confirmed or flaky ones in the order
    they finished, then the unconfirmed ones. `report` hears one line per confirmed or flaky cell as it is settled.
    On an interrupt no further try starts and `end_tries` ends the tries running in the other threads."""
    changed = changed_cells(cells, expected)
    size = sample_size(len(changed), sample, threshold)
    chosen, left = choose_sample(changed, expected, size)
    records: list[CellResult] = []
    stopping = Event()
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="confirm")  # each try is a process
    try:
        futures = [pool.submit(confirm_cell, cell, expected[cell.id], partial(rerun, cell), tries, stopping)
                   for cell in chosen]
        for future in as_completed(futures):
            records.append(future.result())
            if report is not None:
                report(confirmation_line(records[-1]))
    except BaseException:
        stopping.set()
        if end_tries is not None:
            end_tries()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    why = sample_reason(len(changed), size, threshold)
    return records + [unconfirmed_cell(cell, expected[cell.id], why) for cell in left]
