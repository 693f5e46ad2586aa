"""Numbered footnotes: the evidence (outcome, stage, error type, first line) behind a cell."""

from __future__ import annotations

from collections.abc import Iterable

from harness.report.aggregate import cell_order, outcome_rank
from harness.report.escape import escape_cell, first_line
from harness.results import CellResult


def evidence_key(cell: CellResult) -> tuple[str, str, str, str]:
    """What makes two non-pass cells "the same failure": outcome, stage, error type, first line.

    A flaky cell's line ends with every run's outcome in order, so the footnote shows what did not hold still.
    """
    message = first_line(cell.error) or first_line(cell.reason)
    error_type = cell.error_type or ""
    if cell.outcome == "env" and cell.control and not message:
        control = cell.control
        message = first_line(control.get("error")) or first_line(control.get("reason"))
        error_type = error_type or str(control.get("error_type") or "")
    if cell.outcome == "flaky" and cell.repeats:
        message = f"{message} (runs: {', '.join(cell.repeats)})".strip()
    return (cell.outcome, cell.stage or "", error_type, message)


def describe(key: tuple[str, str, str, str]) -> str:
    """Escaped one-line evidence, e.g. "fail at compile: Unsupported: call_function ..."."""
    outcome, stage, error_type, message = key
    text = escape_cell(outcome) + (f" at {escape_cell(stage)}" if stage else "")
    if outcome == "env":
        text += " (the native control failed here)"
    said = ": ".join(escape_cell(part) for part in (error_type, message) if part)
    return f"{text}: {said}" if said else text


def describe_group(cells: Iterable[CellResult]) -> str:
    """Cells grouped by identical evidence, each group naming its kernel/pipeline pairs."""
    groups: dict[tuple[str, str, str, str], list[CellResult]] = {}
    for cell in sorted(cells, key=cell_order):
        groups.setdefault(evidence_key(cell), []).append(cell)
    parts = []
    for key in sorted(groups, key=lambda k: (outcome_rank(k[0]), k[1:])):
        where = ", ".join(escape_cell(f"{c.kernel}/{c.pipeline}", limit=80) for c in groups[key])
        parts.append(f"{where} — {describe(key)}")
    return "; ".join(parts)


class Footnotes:
    """Hands out numbers (identical text shares one) and renders them as a Markdown list."""

    def __init__(self, start: int = 1) -> None:
        self.start = start
        self._texts: list[str] = []

    def add(self, text: str) -> int:
        if text not in self._texts:
            self._texts.append(text)
        return self.start + self._texts.index(text)

    @property
    def next_number(self) -> int:
        return self.start + len(self._texts)

    def render(self) -> str:
        """An ordered list whose numbers are the marks; empty when nothing was footnoted."""
        return "\n".join(f"{self.start + i}. {text}" for i, text in enumerate(self._texts))


def mark(number: int) -> str:
    """A footnote mark for a table cell; escaped brackets can never become a link."""
    return f"\\[{number}\\]"
