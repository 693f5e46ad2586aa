"""The live count's time left, replayed from a results file: what `about ... left` said at each tenth of the run.

Why: the estimate (harness.time_left) is only as good as the earlier durations it weighs the cells by, so the
timings of every run show how far off it was, beside the time in fact left and what a count of cells would have
said. The replay takes each cell's start and end from its record (detail.started_at, duration_s); cells
without a start time (decided by their group's control) are left out.
"""

from __future__ import annotations

from tabulate import tabulate

from harness.time_left import TimeLeft

TENTHS = range(1, 10)


def render_time_left_replay(cells: list, header: dict, durations: dict[str, float] | None, weighed_by: str) -> list[str]:
    """The section; empty where no cell has a start time. `weighed_by` names where `durations` came from."""
    timed = [(float(cell.detail["started_at"]), float(cell.detail["started_at"]) + (cell.duration_s or 0.0), cell.id)
             for cell in cells if isinstance(cell.detail.get("started_at"), (int, float))]
    if not timed:
        return []
    first_start = min(start for start, _, _ in timed)
    started = header.get("started_at")
    origin = float(started) if isinstance(started, (int, float)) and started <= first_start else first_start
    last_end = max(end for _, end, _ in timed)
    planned = [cell_id for _, _, cell_id in timed]
    weighed, counted = TimeLeft(planned, durations), TimeLeft(planned, None)
    events = sorted([(start, 0, cell_id) for start, _, cell_id in timed] + [(end, 1, cell_id) for _, end, cell_id in timed])
    rows, ended, index = [], 0, 0
    for tenth in TENTHS:
        at = origin + (last_end - origin) * tenth / 10
        while index < len(events) and events[index][0] <= at:
            moment, kind, cell_id = events[index]
            for estimate in (weighed, counted):
                (estimate.finished if kind else estimate.started)(cell_id, moment)
            ended += kind
            index += 1
        rows.append([f"{at - origin:.0f}", ended, f"{last_end - at:.0f}", _seconds(weighed.seconds(at)),
                     _seconds(counted.seconds(at))])
    source = f"the durations in {weighed_by}" if weighed.by_duration else "none (no earlier durations: by count)"
    return [
        "## The live count's time left, replayed",
        "",
        f"What the live line's `about ... left` would have said at each tenth of the run, weighing each cell by {source}, "
        f"against the time in fact left until the last cell ended, and what a count of cells alone would have said "
        f"({len(timed)} cells with a start time; seconds from the run's start).",
        "",
        tabulate(rows, headers=["since the start s", "cells ended", "left in fact s", "the live count's estimate s",
                                "by count s"], tablefmt="github", disable_numparse=True),
        "",
    ]


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"
