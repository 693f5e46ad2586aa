"""Which perf cells a run asks, and which of them the matrix lets it time.

A (kernel, style, mode) is timed only where the matrix results say its pipeline passed
(harness.perf_results.MODE_PIPELINES); every other one is written with the matrix's outcome and
evidence, untimed, so the performance report shows why a number is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.perf_results import MODE_PIPELINES, PerfRecord
from harness.results import CellResult, ResultsFile
from harness.vocab import cell_id

# Header fields that must match between the matrix results and this run for the matrix's verdicts to apply here.
SAME_ENVIRONMENT = ("tier", "torch", "triton", "gpu")


@dataclass(frozen=True)
class PerfJob:
    """One (kernel, style, mode): timed at every size in one worker process."""

    kernel: str
    style: str
    mode: str
    sizes: tuple[int, ...]


def environment_mismatch(matrix: dict[str, Any], here: dict[str, Any]) -> str | None:
    """The first field where the matrix results were measured elsewhere, as a sentence; None when they match."""
    for key in SAME_ENVIRONMENT:
        if matrix.get(key) != here.get(key):
            return f"environment field {key!r} is {matrix.get(key)!r} in the matrix results but {here.get(key)!r} here"
    return None


def untimed_records(job: PerfJob, cell: CellResult | None) -> list[PerfRecord]:
    """The records of a job the matrix does not let us time: its outcome and evidence, at each size."""
    pipeline = MODE_PIPELINES[job.mode]
    if cell is None:
        fields: dict[str, Any] = {"outcome": "skip",
                                  "reason": f"the matrix results have no cell {cell_id(job.kernel, job.style, pipeline)}"}
    else:
        fields = {"outcome": cell.outcome, "stage": cell.stage, "error_type": cell.error_type, "error": cell.error,
                  "reason": cell.reason or f"matrix cell {cell.id} is {cell.outcome}: not timed"}
    return [PerfRecord(kernel=job.kernel, style=job.style, mode=job.mode, size=size, **fields) for size in job.sizes]


def split_jobs(jobs: list[PerfJob], matrix: ResultsFile) -> tuple[list[PerfJob], list[PerfRecord]]:
    """(jobs to time, records of the jobs the matrix does not let us time)."""
    cells = {cell.id: cell for cell in matrix.cells}
    to_time: list[PerfJob] = []
    untimed: list[PerfRecord] = []
    for job in jobs:
        cell = cells.get(cell_id(job.kernel, job.style, MODE_PIPELINES[job.mode]))
        if cell is not None and cell.outcome == "pass":
            to_time.append(job)
        else:
            untimed.extend(untimed_records(job, cell))
    return to_time, untimed
