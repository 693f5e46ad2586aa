"""`--shard I/N`: one deterministic slice of the selected cells, so N CI jobs together run one matrix.

The unit of splitting is a cell group (one kernel in one pipeline: the `native` control and
the styles it judges), never a single cell, so every shard has the controls its styles need.
Without durations the groups go round robin in cell order; with a previous run's durations,
longest group first onto the lightest shard. The same durations also order a run's groups longest
first (`longest_groups_first`), so that pytest-xdist, which hands groups out in collection order,
starts the long ones first and no worker picks one up near the end. Reads results files only; no torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.results import ResultsFileError, read_results, weighed_durations
from harness.run.selection import Cell


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


def load_durations(path: str | Path) -> dict[str, float]:
    """Each cell's weight from a previous run's results file (harness.results.weighed_durations)."""
    try:
        results = read_results(path)
    except ResultsFileError as exc:
        raise ShardError(f"--durations-from: {exc}") from None
    return weighed_durations(results)


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


def longest_groups_first(cells: Sequence[Cell], durations: dict[str, float]) -> list[Cell]:
    """The cells, group by group, heaviest group first; a group's cells keep their order (its control first)."""
    groups = groups_in_order(cells)
    return [cell for name in _heaviest_first(groups, _weights(groups, durations)) for cell in groups[name]]


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
