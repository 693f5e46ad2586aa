"""How long a run has left: the share of its work done, each cell weighed by its duration in earlier results.

Why: cells start longest group first (harness.run.shard), so the first cells to end are a small share of the count
and a large share of the work, and an estimate by count is minutes or hours off for most of a run
(docs/maintainers.md, "Ordering", has the figures). The same durations that order the run weigh its cells here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


class TimeLeft:
    """The time left at the pace so far: elapsed x (work not done) / (work done).

    A cell weighs its duration in the earlier results; a cell they lack (a kernel library's, a new kernel's) weighs
    the mean of their cells in its pipeline, for the pipeline is most of what a cell's time depends on, or the mean
    of all where they have none there. With no earlier durations every cell weighs the same: the estimate is by
    count. A running cell counts for the seconds it has run, up to its weight (by count it counts for nothing until
    it ends). The clock starts when the first cell does, so that a warm-up before it is not taken for the pace."""

    def __init__(self, planned: Iterable[str], durations: Mapping[str, float] | None) -> None:
        ids = list(planned)
        earlier = dict(durations or {})
        self.by_duration = bool(earlier)
        if earlier:
            by_pipeline = _mean_by_pipeline(earlier)
            overall = sum(earlier.values()) / len(earlier)
            self.pending = {cell_id: max(0.0, earlier[cell_id] if cell_id in earlier
                                         else by_pipeline.get(_pipeline_of(cell_id), overall)) for cell_id in ids}
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


def _pipeline_of(cell_id: str) -> str:
    """`kernel/style/pipeline` -> `pipeline` (harness.vocab.split_cell_id, without importing the vocabulary)."""
    return cell_id.rsplit("/", 1)[-1]


def _mean_by_pipeline(durations: Mapping[str, float]) -> dict[str, float]:
    totals: dict[str, list[float]] = {}
    for cell_id, seconds in durations.items():
        totals.setdefault(_pipeline_of(cell_id), []).append(seconds)
    return {pipeline: sum(values) / len(values) for pipeline, values in totals.items()}
