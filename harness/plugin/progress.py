"""The live count of a matrix run: done / total, pass / not pass, workers replaced, elapsed, time left.

On a terminal one line is rewritten in place (pytest's `rewrite`); in a CI log (not a terminal) a plain line is written every
5% of the cells or every 30 s, whichever comes first, so the log shows progress without a line per cell. The time left
weighs each cell by its duration in earlier results (harness.time_left); the count of replaced workers matches
xdist's "node down" lines in the log to cells the run recorded (docs/user-guide.md, "Reading the output").
"""

from __future__ import annotations

import time
from collections.abc import Callable

from harness.time_left import TimeLeft

PLAIN_EVERY_S = 30.0
PLAIN_EVERY_FRACTION = 0.05


def clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    def __init__(self, total: int, started_at: float, live: bool, write: Callable[[str], object],
                 time_left: TimeLeft, now: Callable[[], float] = time.time) -> None:
        self.total, self.started_at, self.live, self.write, self.now = total, started_at, live, write, now
        self.time_left = time_left
        self.done = self.passed = self.replaced = 0
        self.last_plain_at, self.last_plain_done = started_at, 0

    def line(self) -> str:
        now = self.now()
        left = ""
        seconds_left = self.time_left.seconds(now) if 0 < self.done < self.total else None
        if seconds_left is not None:
            left = f", about {clock(seconds_left)} left"
        replaced = f", {self.replaced} worker{'s' if self.replaced != 1 else ''} replaced" if self.replaced else ""
        return (f"[{self.done}/{self.total}] {self.passed} pass, {self.done - self.passed} not pass{replaced}; "
                f"{clock(now - self.started_at)} elapsed{left}")

    def started(self, cell_id: str | None) -> None:
        self.time_left.started(cell_id, self.now())

    def worker_replaced(self) -> None:
        """Counted in the next line written; the cell it ran is recorded (its crash, timeout or CUDA error)."""
        self.replaced += 1

    def record(self, cell_id: str, outcome: str) -> None:
        self.time_left.finished(cell_id, self.now())
        self.done += 1
        self.passed += outcome == "pass"
        if self.live:
            self.write(self.line())
            return
        step = max(1, int(self.total * PLAIN_EVERY_FRACTION))
        if self.done - self.last_plain_done >= step or self.now() - self.last_plain_at >= PLAIN_EVERY_S \
                or self.done == self.total:
            self.write(self.line())
            self.last_plain_at, self.last_plain_done = self.now(), self.done
