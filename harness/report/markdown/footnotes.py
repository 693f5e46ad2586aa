"""Numbered footnotes: the evidence (outcome, stage, error type, first line) behind a cell, or a cause shared by many."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from harness.report.markdown.aggregate import cell_order, ordered, outcome_rank
from harness.report.markdown.escape import escape_cell, first_line, truncate
from harness.results import CellResult
from harness.vocab import PIPELINES, STYLES


def evidence_key(cell: CellResult) -> tuple[str, str, str, str]:
    """What makes two non-pass cells "the same failure": outcome, stage, error type, first line.

    A flaky cell's line ends with every run's outcome in order, so the footnote shows what did not hold still; a
    change left out of --confirm-sample's sample (harness.run.confirm) says it is unconfirmed.
    """
    message = first_line(cell.error) or first_line(cell.reason)
    error_type = cell.error_type or ""
    if cell.outcome == "env" and cell.control and not message:
        control = cell.control
        message = first_line(control.get("error")) or first_line(control.get("reason"))
        error_type = error_type or str(control.get("error_type") or "")
    if cell.outcome == "flaky" and cell.repeats:
        message = f"{message} (runs: {', '.join(cell.repeats)})".strip()
    if (cell.detail.get("confirmation") or {}).get("verdict") == "unconfirmed":
        message = f"{message} (a change against the baseline, unconfirmed: not in the --confirm-sample)".strip()
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


# --- Footnotes grouped by cause: one note per (outcome, stage, error type, message pattern) -------------

CAUSE_MESSAGE_LIMIT = 150
NAMES_SHOWN = 12
_TMP_PATH = re.compile(r"(?:/tmp|/var/folders|/private/var)/\S*|[A-Za-z]:\\\S*\\Temp\\\S*")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_KERNEL_WORD = re.compile(r"\b\w+_kernel\b")


def message_pattern(message: str, kernel: str) -> str:
    """The message with what differs between kernels of one cause made alike: temporary paths,
    addresses, the kernel's own name (and any `*_kernel` function name), numbers."""
    text = _TMP_PATH.sub("<tmp>", message)
    text = _ADDRESS.sub("<address>", text)
    text = _KERNEL_WORD.sub("<kernel>", text)
    if kernel:
        text = re.sub(rf"(?<!\w){re.escape(kernel)}(?!\w)", "<kernel>", text)
    return _NUMBER.sub("N", text)


def cause_key(cell: CellResult) -> tuple[str, str, str, str]:
    """evidence_key with the message reduced to its pattern: cells of one cause share it."""
    outcome, stage, error_type, message = evidence_key(cell)
    return (outcome, stage, error_type, truncate(message_pattern(message, cell.kernel), CAUSE_MESSAGE_LIMIT))


def _names(names: Iterable[str], limit: int = NAMES_SHOWN) -> str:
    unique = list(dict.fromkeys(names))
    shown = ", ".join(escape_cell(name, limit=60) for name in unique[:limit])
    return shown + (f" and {len(unique) - limit} more" if len(unique) > limit else "")


def cause_summary(cells: Sequence[CellResult]) -> str:
    """"3 cells: kernels add, sin; pipelines aoti, export_nonstrict; styles raw" — each name once."""
    ordered_cells = sorted(cells, key=cell_order)
    count = f"{len(ordered_cells)} cell{'s' if len(ordered_cells) != 1 else ''}"
    parts = [f"kernels {_names(c.kernel for c in sorted(ordered_cells, key=lambda c: c.kernel))}",
             f"pipelines {_names(ordered([c.pipeline for c in ordered_cells], PIPELINES))}",
             f"styles {_names(ordered([c.style for c in ordered_cells], STYLES))}"]
    return f"{count}: " + "; ".join(parts)


def group_by_cause(cells: Iterable[CellResult]) -> dict[tuple[str, str, str, str], list[CellResult]]:
    """Cells by cause, causes in outcome order then by text; cells in the stable cell order."""
    groups: dict[tuple[str, str, str, str], list[CellResult]] = {}
    for cell in sorted(cells, key=cell_order):
        groups.setdefault(cause_key(cell), []).append(cell)
    return {key: groups[key] for key in sorted(groups, key=lambda k: (outcome_rank(k[0]), k[1:]))}


class CauseNotes:
    """Numbered footnotes, one per cause; a cell of the chart gets the marks of its causes.

    Counts and names are over every cell the chart footnoted with that cause (each cell once),
    so they are only final at render time. Each footnote is two lines: the cause, then who has it.
    """

    def __init__(self, start: int = 1) -> None:
        self.start = start
        self._cells: dict[tuple[str, str, str, str], dict[str, CellResult]] = {}

    def add(self, cells: Iterable[CellResult]) -> list[int]:
        """The footnote numbers of these cells' causes, in cause order; new causes get new numbers."""
        numbers = []
        for key, group in group_by_cause(cells).items():
            self._cells.setdefault(key, {}).update((cell.id, cell) for cell in group)
            numbers.append(self.start + list(self._cells).index(key))
        return numbers

    @property
    def next_number(self) -> int:
        return self.start + len(self._cells)

    def render(self) -> str:
        """A two-line list item per cause (the first ends in a Markdown hard break); empty when none."""
        lines = []
        for offset, (key, cells) in enumerate(self._cells.items()):
            lines.append(f"{self.start + offset}. {describe(key)}\\")
            lines.append(f"   {cause_summary(list(cells.values()))}")
        return "\n".join(lines)
