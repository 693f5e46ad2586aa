"""Where a run's time went: each pipeline's cell-seconds, split by stage (detail.stage_s).

Speed work starts here: a pipeline's share of the summed cell times, and inside it the stage
(trace, compile, load, run, check) that holds the seconds. Files written before cells recorded
stage_s show only the totals.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from tabulate import tabulate

from harness.results import ResultsFile
from harness.vocab import STAGES


def render_timings(results: ResultsFile, source: str) -> str:
    by_pipeline: dict[str, list] = defaultdict(list)
    for cell in results.cells:
        by_pipeline[cell.pipeline].append(cell)
    total = _seconds(results.cells)
    rows = []
    for pipeline, cells in sorted(by_pipeline.items(), key=lambda item: (-_seconds(item[1]), item[0])):
        durations = [cell.duration_s or 0.0 for cell in cells]
        seconds = sum(durations)
        stages = _stage_sums(cells)
        staged = [cell for cell in cells if cell.detail.get("stage_s")]
        outside = _seconds(staged) - sum(stages.values())
        rows.append([pipeline, len(cells), f"{seconds:.0f}", _share(seconds, total),
                     f"{statistics.median(durations):.1f}", f"{max(durations):.1f}"]
                    + [f"{stages[stage]:.0f}" if stage in stages else "-" for stage in STAGES]
                    + [f"{outside:.0f}" if staged else "-"])
    rows.append(["**all**", len(results.cells), f"{total:.0f}", _share(total, total), "", ""]
                + [""] * (len(STAGES) + 1))
    headers = (["pipeline", "cells", "cell-s", "share", "median s", "max s"] + [f"{stage} s" for stage in STAGES]
               + ["outside s"])
    cpu_count = results.environment.get("cpu_count")
    lines = [
        f"# Where the time went: {source}",
        "",
        f"Cells' own times (isolation {results.header.get('isolation', '?')}); stages from each cell's detail.stage_s; "
        "outside: a cell's time in no stage (starting CUDA, making inputs, computing the reference).",
    ]
    if cpu_count:
        lines.append(f"Spread perfectly over this machine's {cpu_count} cores the cells need at least "
                     f"{total / cpu_count / 60:.1f} min of wall time.")
    lines += ["", tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True), ""]
    return "\n".join(lines)


def _seconds(cells: list) -> float:
    return sum(cell.duration_s or 0.0 for cell in cells)


def _share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def _stage_sums(cells: list) -> dict[str, float]:
    sums: dict[str, float] = defaultdict(float)
    for cell in cells:
        for stage, seconds in (cell.detail.get("stage_s") or {}).items():
            sums[stage] += seconds
    return sums
