"""`--shard I/N`: one deterministic slice of the selected cells, so N CI jobs together run one matrix.

The unit of splitting is a cell group (one kernel in one pipeline: the `native` control and
the styles it judges), never a single cell, so every shard has the controls its styles need.
Without durations the groups go round robin in cell order; with a previous run's durations,
longest group first onto the lightest shard. The same durations also order a run's groups longest
first (`longest_groups_first`), so that pytest-xdist, which hands groups out in collection order,
starts the long ones first and no worker picks one up near the end. Reads results files only; no torch.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.results import ResultsFileError, read_results
from harness.run.selection import Cell

# A cell of these makes a new process that creates a CUDA context (export_roundtrip*; aoti_fresh_process shares its
# group with the AOTInductor builds, which are CPU work): their groups are spread through the order (`spread_out`).
CONTEXT_BOUND_PIPELINES = frozenset({"export_roundtrip", "export_roundtrip_bare"})
SPREAD_UNTIL = 0.75  # a spread kind's groups run at a rate that hands out the last of them by 3/4 of the run
RETIREMENT_S = 4.5  # a retired worker's replacement starting, until its group's next cell runs (docs/maintainers.md)


class ShardError(ValueError):
    """A malformed `I/N` or an unreadable durations file; the message is one line."""


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, option: str = "--shard") -> Shard:
    """`I/N` with 1 <= I <= N, both integers; `option` names the flag in the error."""
    index, slash, count = text.strip().partition("/")
    if not slash or not index.strip().isdigit() or not count.strip().isdigit():
        raise ShardError(f"{option} {text!r}: expected I/N with whole numbers, e.g. 1/4")
    shard = Shard(int(index), int(count))
    if shard.count < 1 or not 1 <= shard.index <= shard.count:
        raise ShardError(f"{option} {text!r}: I must be between 1 and N (N >= 1), e.g. 1/4 ... 4/4")
    return shard


class Durations(dict[str, float]):
    """duration_s per cell id from an earlier run, and the cells that retired their worker in it."""

    def __init__(self, seconds: dict[str, float], retiring: frozenset[str] = frozenset()) -> None:
        super().__init__(seconds)
        self.retiring = retiring


def load_durations(path: str | Path) -> Durations:
    """duration_s per cell id from a previous run's results file; a cell that retired its worker (a CUDA error
    poisons a process) also weighs the start of the worker that replaces it, which its own duration leaves out."""
    try:
        results = read_results(path)
    except ResultsFileError as exc:
        raise ShardError(f"--durations-from: {exc}") from None
    retiring = frozenset(cell.id for cell in results.cells if cell.detail.get("worker_retired"))
    return Durations({cell.id: float(cell.duration_s) + (RETIREMENT_S if cell.id in retiring else 0.0)
                      for cell in results.cells}, retiring)


def groups_in_order(cells: Sequence[Cell]) -> dict[str, list[Cell]]:
    groups: dict[str, list[Cell]] = {}
    for cell in cells:
        groups.setdefault(cell.group, []).append(cell)
    return groups


def _weights(groups: dict[str, list[Cell]], durations: dict[str, float]) -> dict[str, float]:
    """A group weighs the sum of its cells' durations; a cell the previous run lacks weighs the mean of those it had."""
    known = [durations[c.id] for cells in groups.values() for c in cells if c.id in durations]
    fallback = sum(known) / len(known) if known else 1.0
    return {name: sum(durations.get(c.id, fallback) for c in cells) for name, cells in groups.items()}


def _heaviest_first(groups: dict[str, list[Cell]], weights: dict[str, float]) -> list[str]:
    """Group names by weight, heaviest first; ties by the group's first cell id. Shared by sharding and ordering."""
    return sorted(groups, key=lambda g: (-weights[g], groups[g][0].id))


def longest_groups_first(cells: Sequence[Cell], durations: dict[str, float], workers: int = 1) -> list[Cell]:
    """The cells, group by group, heaviest group first, with the groups that contend for one thing spread out for
    `workers` workers (`spread_out`); a group's cells keep their order (its control first)."""
    groups = groups_in_order(cells)
    weights = _weights(groups, durations)
    names = _heaviest_first(groups, weights)
    retiring = getattr(durations, "retiring", frozenset())
    kinds: dict[str, str] = {}
    for name in names:
        if any(cell.pipeline in CONTEXT_BOUND_PIPELINES for cell in groups[name]):
            kinds[name] = "cuda contexts"
        elif any(cell.id in retiring for cell in groups[name]):
            kinds[name] = "worker restarts"
    return [cell for name in spread_out(names, kinds, weights, workers) for cell in groups[name]]


def spread_out(names: list[str], kinds: dict[str, str], weights: dict[str, float], workers: int) -> list[str]:
    """`names` (heaviest first), reordered so that at most a cap of the groups of each kind run at once.

    xdist hands the next group to whichever worker is free; this plays that out with the groups' weights as their
    durations. A free worker gets the heaviest next group of a kind below its cap, else the next group of no kind
    (else, when only capped kinds are left, the heaviest of them). A kind's cap is its share of the weight times
    the workers, over SPREAD_UNTIL, so that its groups are all out before the end of the run, which is for the
    short groups. Deterministic: the names, kinds, weights and worker count decide it.

    Why: two things are made one at a time, whatever the number of workers (docs/maintainers.md, "Scheduling"):
    CUDA contexts (a round-trip cell is mostly a new process's context) and replacement workers (a cell whose CUDA
    error poisons its worker). By weight alone such groups come out together and hold most workers at once, each
    waiting its turn while the CPU idles. Each group still runs whole on one worker; only the start order moves.
    """
    total = sum(weights[name] for name in names)
    if workers < 2 or not kinds or total <= 0:
        return list(names)
    place = {name: index for index, name in enumerate(names)}
    queues: dict[str, list[str]] = {}
    for name in names:
        queues.setdefault(kinds.get(name, ""), []).append(name)
    rest = queues.pop("", [])
    caps = {kind: max(1, math.ceil(workers * sum(weights[name] for name in queue) / total / SPREAD_UNTIL))
            for kind, queue in queues.items()}
    running: list[tuple[float, int, str]] = []  # (when it ends, its place in the order, its kind or "")
    now = 0.0
    ordered: list[str] = []
    while rest or any(queues.values()):
        if len(running) == workers:
            now = heapq.heappop(running)[0]
            continue
        busy = Counter(kind for _, _, kind in running)
        below_cap = [queue[0] for kind, queue in queues.items() if queue and busy[kind] < caps[kind]]
        waiting = below_cap or ([] if rest else [queue[0] for queue in queues.values() if queue])
        name = min(waiting, key=lambda n: (-weights[n], place[n])) if waiting else rest[0]
        kind = kinds.get(name, "")
        (queues[kind] if kind else rest).remove(name)
        ordered.append(name)
        heapq.heappush(running, (now + weights[name], len(ordered), kind))
    return ordered


def assign_groups(cells: Sequence[Cell], count: int, durations: dict[str, float] | None = None) -> dict[str, int]:
    """Group name -> 0-based shard. Deterministic: depends only on the cells, N and the durations."""
    groups = groups_in_order(cells)
    if durations is None:
        return {name: position % count for position, name in enumerate(groups)}
    weights = _weights(groups, durations)
    loads = [0.0] * count
    assignment: dict[str, int] = {}
    for name in _heaviest_first(groups, weights):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        assignment[name] = lightest
        loads[lightest] += weights[name]
    return assignment


def shard_cells(cells: Sequence[Cell], shard: Shard | None, durations: dict[str, float] | None = None) -> list[Cell]:
    """The cells of one shard, in their original order (all of them without a shard)."""
    if shard is None:
        return list(cells)
    assignment = assign_groups(cells, shard.count, durations)
    return [cell for cell in cells if assignment[cell.group] == shard.index - 1]
