"""Where a run's time went: each pipeline's cell-seconds, split by stage (detail.stage_s).

Speed work starts here: a pipeline's share of the summed cell times, and inside it the stage
(trace, compile, load, run, check) that holds the seconds. Files written before cells recorded
stage_s show only the totals. When cells say when they started (detail.started_at, worker
isolation), a timeline follows: how busy the workers were, and which cells ended the run, then the live count's time
left replayed against the time in fact left. Where cells ran a
fresh process (detail.fresh_process.timeline), the last section says where its time went: before its `main`, in it,
and after it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from tabulate import tabulate

from harness.report.markdown.time_left_replay import render_time_left_replay
from harness.results import ResultsFile
from harness.vocab import STAGES


def render_timings(results: ResultsFile, source: str, earlier_durations: dict[str, float] | None = None,
                   weighed_by: str = "") -> str:
    """The Markdown; `earlier_durations` (from the file `weighed_by`) weigh the replay of the live count's time left."""
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
    lines += render_timeline(results.cells, results.header)
    lines += render_time_left_replay(results.cells, results.header, earlier_durations, weighed_by)
    lines += render_fresh_processes(results.cells)
    return "\n".join(lines)


FRESH_PARTS = (("before_main_s", "before main"), ("in_main_s", "in main"), ("after_main_s", "after main"))


def render_fresh_processes(cells: list) -> list[str]:
    """Per pipeline, the fresh processes' time from the cell's side: before their `main` (forking, or waiting for a
    loader's CUDA context), in it, after it (the process's end, its context's teardown, the answer)."""
    by_pipeline: dict[str, list[dict]] = defaultdict(list)
    for cell in cells:
        timeline = (cell.detail.get("fresh_process") or {}).get("timeline")
        if isinstance(timeline, dict) and all(key in timeline for key, _ in FRESH_PARTS):
            by_pipeline[cell.pipeline].append(timeline)
    if not by_pipeline:
        return []
    rows = []
    for pipeline, timelines in sorted(by_pipeline.items()):
        row: list = [pipeline, len(timelines)]
        for key, _ in FRESH_PARTS:
            values = [float(timeline[key]) for timeline in timelines]
            row += [f"{sum(values):.0f}", f"{statistics.median(values):.2f}"]
        rows.append(row)
    headers = ["pipeline", "processes"] + [f"{name} {unit}" for _, name in FRESH_PARTS for unit in ("s", "median s")]
    return [
        "## Fresh processes",
        "",
        "Where a fresh process's time went, seen from its cell: before its `main` (forking it, or waiting for a loader's "
        "CUDA context, which the driver makes one at a time), in it (loading and running), after it (the process's "
        "end, with its CUDA context's teardown, until the cell has the answer).",
        "",
        tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True),
        "",
    ]


TIMELINE_BIN_S = 10.0
LAST_CELLS = 5


def render_timeline(cells: list, header: dict | None = None) -> list[str]:
    """From the first cell's start to the last cell's end: cells running per TIMELINE_BIN_S, and the cells that ended last.

    Where the header says when the run started (and how long its zygote warmed up), the time before the first
    cell is given too: it is serial time that more workers or GPUs do not shorten."""
    timed = [(float(cell.detail["started_at"]), float(cell.detail["started_at"]) + (cell.duration_s or 0.0), cell)
             for cell in cells if isinstance(cell.detail.get("started_at"), (int, float))]
    if not timed:
        return []
    first = min(start for start, _, _ in timed)
    span = max(end for _, end, _ in timed) - first
    bins = [0.0] * (int(span // TIMELINE_BIN_S) + 1)
    for start, end, _ in timed:
        for index in range(int((start - first) // TIMELINE_BIN_S), int((end - first) // TIMELINE_BIN_S) + 1):
            low, high = first + index * TIMELINE_BIN_S, first + (index + 1) * TIMELINE_BIN_S
            bins[index] += max(0.0, min(end, high) - max(start, low)) / TIMELINE_BIN_S
    workers = {cell.worker for _, _, cell in timed}
    busy = sum(end - start for start, end, _ in timed)
    last = sorted(timed, key=lambda item: -item[1])[:LAST_CELLS]
    return [
        "## Timeline",
        "",
        f"{len(timed)} cells with a start time, on {len(workers)} worker processes (replacements included): the first "
        f"started, and the last ended, {span:.1f} s apart; cells were running {busy / span if span else 0:.1f} at a "
        f"time on average. {_before_first_cell(first, header or {})}",
        "",
        f"Cells running, on average, in each {TIMELINE_BIN_S:.0f} s from the first start: "
        + " ".join(f"{value:.1f}" for value in bins) + ".",
        "",
        "The cells that ended last: " + "; ".join(
            f"`{cell.id}` ({start - first:.0f}-{end - first:.0f} s)" for start, end, cell in last) + ".",
        "",
    ]


def _before_first_cell(first: float, header: dict) -> str:
    """The run's start, as far as its header knows it (results written before 5b8b083 do not)."""
    started = header.get("started_at")
    if not isinstance(started, (int, float)):
        return "The run's wall time adds its start (the controller, the zygote, each worker's collection) and its end."
    warmup, ready_at = header.get("zygote_warmup_s"), header.get("zygote_ready_at")
    parts = "the controller, starting the workers, each worker's collection"
    if isinstance(warmup, (int, float)) and isinstance(ready_at, (int, float)) and ready_at - warmup < started:
        # `harness run` started the zygote before the run's start (harness.run.startup.zygote_ahead)
        waited = min(max(0.0, ready_at - started), first - started)
        of_which = (f", {waited:.1f} s of it waiting for the zygote's warm-up ({warmup:.1f} s, begun "
                    f"{started - (ready_at - warmup):.1f} s before the run; the rest: {parts})")
    elif isinstance(warmup, (int, float)):
        of_which = f", {warmup:.1f} s of it the zygote's warm-up (the rest: {parts})"
    else:
        of_which = f" ({parts})"
    return f"The first cell started {first - started:.1f} s after the run{of_which}; the run's wall time adds its end."


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
