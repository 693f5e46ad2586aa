"""What a fresh Python did: a record of its own, so that the run can make one without importing torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FreshRun:
    """What a fresh Python did (CellContext.fresh_python): made by the run (harness.run.startup.fresh_python) or a reproducer."""

    returncode: int  # negative: the signal that ended it
    output: str  # its stdout and stderr
    how: str  # "zygote", "zygote, forked ahead" (its CUDA context made before the request) or "spawn"
    asked_at: float = 0.0  # time.time() when the cell asked for it
    answered_at: float = 0.0  # time.time() when the cell heard that it had ended
    reaped_at: float | None = None  # time.time() when the zygote saw it end (None: no zygote made it)


def fresh_timeline(fresh: FreshRun, clock: dict[str, float] | None) -> dict[str, float]:
    """Where the fresh process's time went, from the cell's side and the child's own clock (its report's `clock`):
    before its `main` (forking, or waiting for a loader's CUDA context), in it, and after it (the process's exit, the
    zygote noticing, the answer). Empty when the child wrote no clock (it died before)."""
    if not clock or "main_started" not in clock or "main_ended" not in clock or not fresh.asked_at:
        return {}
    timeline = {"before_main_s": clock["main_started"] - fresh.asked_at,
                "in_main_s": clock["main_ended"] - clock["main_started"],
                "after_main_s": fresh.answered_at - clock["main_ended"]}
    if fresh.reaped_at is not None:
        timeline["exit_s"] = fresh.reaped_at - clock["main_ended"]
    return {name: round(seconds, 3) for name, seconds in timeline.items()}


def main_clock(started: float, ended: float) -> dict[str, Any]:
    """The child's `clock` for its report: time.time() at the start and the end of its `main`."""
    return {"main_started": started, "main_ended": ended}
