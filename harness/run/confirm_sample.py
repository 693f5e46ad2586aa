"""Which changed cells to confirm when too many changed to confirm them all (a new torch, a nightly, an RC).

Confirming a cell costs up to `--confirm` new Pythons with cold caches. When more cells changed than
`--confirm-threshold T` (a few real changes are all confirmed), `--confirm-sample N` of them are confirmed and the
rest are recorded as **unconfirmed** (harness.run.confirm).
The sample is deterministic (the same changed cells give the same sample on every machine) and spread: the changed
cells are grouped by pipeline and change (baseline outcome -> run outcome), the groups take turns, largest first,
and within a group the next cell is the one whose kernel and style the sample has seen least, ties broken by a hash
of its id (not by name, which would favour the kernels early in the alphabet).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from harness.results import CellResult

SAMPLE_PER_WORKER = 1  # `auto`: a cell per worker, so a sample costs about --confirm tries' time, one round


def resolve_sample(value: str | int, workers: int) -> int:
    """--confirm-sample: `auto` is a cell per worker of the run (confirmation then costs about as long, whatever the
    machine's width); a number is that many; 0 confirms every changed cell. A ValueError names a bad value."""
    if str(value) == "auto":
        return SAMPLE_PER_WORKER * max(1, workers)
    try:
        size = int(value)
    except ValueError:
        size = -1
    if size < 0:
        raise ValueError(f"--confirm-sample {value}: expected auto, 0 (confirm every changed cell) or a number of cells")
    return size


def sample_size(changed: int, sample: int, threshold: int) -> int:
    """How many of `changed` cells to confirm, 0 meaning every one: all of them when at most `threshold` (or the
    sample) changed or the sample is 0, else the sample."""
    return 0 if sample <= 0 or changed <= max(threshold, sample) else sample


def stratum(cell: CellResult, expected: dict[str, str]) -> tuple[str, str, str]:
    """The group a changed cell is sampled from: its pipeline and its change."""
    return cell.pipeline, expected.get(cell.id, "?"), cell.outcome


def _spread_key(cell: CellResult) -> str:
    return hashlib.sha256(cell.id.encode()).hexdigest()


def choose_sample(changed: Sequence[CellResult], expected: dict[str, str],
                  size: int) -> tuple[list[CellResult], list[CellResult]]:
    """(the cells to confirm, the cells left unconfirmed); every cell when there are at most `size` (or size is 0)."""
    if size <= 0 or len(changed) <= size:
        return list(changed), []
    groups: dict[tuple[str, str, str], list[CellResult]] = {}
    for cell in sorted(changed, key=_spread_key):
        groups.setdefault(stratum(cell, expected), []).append(cell)
    turns = sorted(groups, key=lambda key: (-len(groups[key]), key))
    kernels: Counter[str] = Counter()
    styles: Counter[str] = Counter()
    chosen: list[CellResult] = []
    while len(chosen) < size:
        for key in turns:
            if not groups[key] or len(chosen) == size:
                continue
            pick = min(groups[key], key=lambda cell: (kernels[cell.kernel] + styles[cell.style], _spread_key(cell)))
            groups[key].remove(pick)
            kernels[pick.kernel] += 1
            styles[pick.style] += 1
            chosen.append(pick)
    picked = {cell.id for cell in chosen}
    return chosen, [cell for cell in changed if cell.id not in picked]
