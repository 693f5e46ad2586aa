"""How long a run has left: the share of its work done, each cell weighed by its duration in earlier results.

Why: cells start longest group first (harness.run.shard), so the first cells to end are a small share of the count
and a large share of the work, and an estimate by count is minutes or hours off for most of a run
(docs/maintainers.md, "Ordering", has the figures). The same durations that order the run weigh its cells here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


class TimeLeft:
    """The time left at the pace so far: elapsed x (work not done) / (work done).

    A cell weighs its duration in the earlier results, or the mean of those they hold where they lack it; with no
    earlier durations for any planned cell, every cell weighs the same, and the estimate is by count. A running cell
    counts for the seconds it has run, up to its weight (by count it counts for nothing until it ends). The clock
    starts when the first cell does, so that a warm-up before it is not taken for the pace."""

    def __init__(self, planned: Iterable[str], durations: Mapping[str, float] | None) -> None:
        ids = list(planned)
        earlier = durations or {}
        known = [earlier[cell_id] for cell_id in ids if cell_id in earlier]
        self.by_duration = bool(known)
        if known:
            fallback = sum(known) / len(known)
            self.pending = {cell_id: max(0.0, earlier.get(cell_id, fallback)) for cell_id in ids}
        else:
            self.pending = dict.fromkeys(ids, 1.0)
        self.total = sum(self.pending.values())
        self.done = 0.0
        self.running: dict[str, float] = {}  # cell id -> when it started
        self.first_start: float | None = None

    def started(self, cell_id: str | None, at: float) -> None:
        if self.first_start is None:
            self.first_start = at
        if cell_id in self.pending:
            self.running[cell_id] = at

    def finished(self, cell_id: str, at: float) -> None:
        """A cell's record came: it counts once, whatever reports of it came before."""
        if self.first_start is None:
            self.first_start = at
        self.running.pop(cell_id, None)
        self.done += self.pending.pop(cell_id, 0.0)

    def seconds(self, at: float) -> float | None:
        """None until some work is done (or where the planned cells weigh nothing)."""
        if self.first_start is None or self.total <= 0:
            return None
        credit = sum(min(self.pending[cell_id], at - since) for cell_id, since in self.running.items()) \
            if self.by_duration else 0.0
        share = (self.done + max(0.0, credit)) / self.total
        if share <= 0:
            return None
        return max(0.0, at - self.first_start) * max(0.0, 1 - share) / share
