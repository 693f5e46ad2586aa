"""The flake history of the nightly: which cells were flaky on which nights, derived from its per-night results.

A cell is flaky on a night when its record there is `flaky`: its confirmation (harness.run.confirm) or --repeat
saw outcomes that disagree. The history says how often each such cell was, out of the nights that ran it, and
what each night's tries gave, so that a known-flaky cell can be tracked as an issue, as PyTorch's CI does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.report.markdown.aggregate import final_cells
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.tables import markdown_table
from harness.results import ResultsFile


@dataclass
class CellFlakes:
    id: str
    nights: int = 0  # nights whose results hold this cell
    flaky_nights: list[str] = field(default_factory=list)  # when each flaky night started
    tries: list[str] = field(default_factory=list)  # each flaky night's outcomes, in order, e.g. "fail, pass"


def flake_history(nights: Sequence[ResultsFile]) -> list[CellFlakes]:
    """The cells flaky on at least one night, most often flaky first; nights in the order given."""
    cells: dict[str, CellFlakes] = {}
    for night in nights:
        started = str(night.header.get("started", "?"))
        for cell_id, cell in final_cells(night).items():
            entry = cells.setdefault(cell_id, CellFlakes(cell_id))
            entry.nights += 1
            if cell.outcome == "flaky":
                entry.flaky_nights.append(started)
                entry.tries.append(", ".join(cell.repeats or []))
    flaky = [entry for entry in cells.values() if entry.flaky_nights]
    return sorted(flaky, key=lambda entry: (-len(entry.flaky_nights), entry.id))


def render_flake_history(nights: Sequence[ResultsFile]) -> str:
    history = flake_history(nights)
    lines = ["# Flake history", "",
             f"{len(nights)} night(s); a cell is flaky on a night when a new run of it, alone and with cold caches, "
             "did not give the run's outcome (or --repeat's runs disagreed). Flaky cells never count as regressions.", ""]
    if not history:
        return "\n".join(lines + ["No cell was flaky on any of these nights.", ""])
    rows = [(escape_cell(entry.id), f"{len(entry.flaky_nights)} of {entry.nights}", escape_cell(entry.flaky_nights[-1]),
             escape_cell("; ".join(entry.tries[-3:]))) for entry in history]
    table = markdown_table(["cell", "flaky nights", "last flaky night", "tries on the last flaky nights (up to 3)"], rows)
    return "\n".join(lines + [table, ""])
