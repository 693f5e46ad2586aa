"""The live count of a matrix run: done / total, pass / not pass, elapsed, time left.

On a terminal one line is rewritten in place (pytest's `rewrite`); in a CI log (not a terminal) a plain line is written every
5% of the cells or every 30 s, whichever comes first, so the log shows progress without a line per cell.
"""

from __future__ import annotations

import time
from collections.abc import Callable

PLAIN_EVERY_S = 30.0
PLAIN_EVERY_FRACTION = 0.05


def clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    def __init__(self, total: int, started_at: float, live: bool, write: Callable[[str], object],
                 now: Callable[[], float] = time.time) -> None:
        self.total, self.started_at, self.live, self.write, self.now = total, started_at, live, write, now
        self.done = self.passed = 0
        self.last_plain_at, self.last_plain_done = started_at, 0

    def line(self) -> str:
        elapsed = self.now() - self.started_at
        left = ""
        if 0 < self.done < self.total:
            left = f", about {clock(elapsed / self.done * (self.total - self.done))} left"
        return (f"[{self.done}/{self.total}] {self.passed} pass, {self.done - self.passed} not pass; "
                f"{clock(elapsed)} elapsed{left}")

    def record(self, outcome: str) -> None:
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
