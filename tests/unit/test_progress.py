"""The live count's line and its cadence in a log (harness.plugin.progress)."""

from __future__ import annotations

from harness.plugin.progress import Progress
from harness.time_left import TimeLeft


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _progress(planned: dict[str, float], live: bool) -> tuple[Progress, Clock, list[str]]:
    clock, lines = Clock(), []
    progress = Progress(len(planned), 0.0, live=live, write=lines.append, time_left=TimeLeft(planned, planned), now=clock)
    return progress, clock, lines


def test_the_line_weighs_the_time_left_by_earlier_durations_and_counts_replaced_workers():
    planned = {"long": 100.0, **{f"short{i}": 1.0 for i in range(10)}}
    progress, clock, lines = _progress(planned, live=True)
    clock.now = 20.0
    progress.started("long")
    clock.now = 120.0
    progress.record("long", "fail")
    assert lines[-1] == "[1/11] 0 pass, 1 not pass; 2m00s elapsed, about 10s left"
    progress.worker_replaced()
    progress.started("short0")
    clock.now = 121.0
    progress.record("short0", "pass")
    assert lines[-1] == "[2/11] 1 pass, 1 not pass, 1 worker replaced; 2m01s elapsed, about 9s left"


def test_in_a_log_a_line_every_twentieth_of_the_cells_and_the_last():
    planned = {f"cell{i}": 1.0 for i in range(40)}
    progress, clock, lines = _progress(planned, live=False)
    for cell_id in planned:
        progress.started(cell_id)
        clock.now += 0.5
        progress.record(cell_id, "pass")
    assert len(lines) == 20, "40 cells: a line every 2 cells"
    assert lines[-1] == "[40/40] 40 pass, 0 not pass; 20s elapsed", "the last line has nothing left to estimate"
