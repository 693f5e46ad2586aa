"""What changed between two results files: the view a CI gate and a release note both need."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.report.markdown.aggregate import cell_order, final_cells
from harness.report.markdown.environment import tier_of
from harness.report.markdown.escape import escape_cell, first_line, one_line, truncate
from harness.report.markdown.tables import markdown_table
from harness.results import CellResult, ResultsFile

# (title, header of the "was" and "now" columns); order is the order of the report.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("regressions", "pass -> not pass"),
    ("newly supported", "not pass -> pass"),
    ("changed errors", "same non-pass outcome, different error type or first line (numbers aside)"),
    ("changed outcomes", "one non-pass outcome -> another"),
    ("cells added", "only in the new file"),
    ("cells removed", "only in the old file"),
    ("flaky", "a new run of the cell, alone and with cold caches, disagreed with the run: not a change"),
)


@dataclass
class Change:
    id: str
    old: CellResult | None
    new: CellResult | None


@dataclass
class ResultsDiff:
    sections: dict[str, list[Change]] = field(default_factory=lambda: {title: [] for title, _ in SECTIONS})

    @property
    def has_regressions(self) -> bool:
        return bool(self.sections["regressions"])


def _error(cell: CellResult) -> tuple[str, str]:
    return (cell.error_type or "", first_line(cell.error) or first_line(cell.reason))


def _error_kind(cell: CellResult) -> tuple[str, str]:
    """The error with its numbers masked: what "changed errors" compares. A number in a message is often the
    state of the process, not of the cell: an exported program's `Kernel index 86 not found in id_to_kernel`
    counts the kernels the worker registered before (measured on the H100: 30 of 1,584 cells differed in that
    number alone between two runs with identical outcomes)."""
    error_type, line = _error(cell)
    return error_type, re.sub(r"\d+", "N", line)


def _section(old: CellResult | None, new: CellResult | None) -> str | None:
    if new is not None and new.outcome == "flaky" and (old is None or old.outcome != "flaky"):
        return "flaky"  # harness.run.confirm: unconfirmed, so neither a regression nor a change
    if old is None:
        return "cells added"
    if new is None:
        return "cells removed"
    if old.outcome == "pass":
        return None if new.outcome == "pass" else "regressions"
    if new.outcome == "pass":
        return "newly supported"
    if old.outcome != new.outcome:
        return "changed outcomes"
    return "changed errors" if _error_kind(old) != _error_kind(new) else None


def diff_results(old: ResultsFile, new: ResultsFile) -> ResultsDiff:
    """Classify every cell id found in either file; a pass -> skip/env/timeout is a regression too."""
    before, after = final_cells(old), final_cells(new)
    result = ResultsDiff()
    ids = sorted(set(before) | set(after), key=lambda i: cell_order(after.get(i) or before[i]))
    for cell_id in ids:
        section = _section(before.get(cell_id), after.get(cell_id))
        if section:
            result.sections[section].append(Change(cell_id, before.get(cell_id), after.get(cell_id)))
    return result


def _describe(cell: CellResult | None) -> str:
    if cell is None:
        return "-"
    error_type, message = _error(cell)
    stage = f" at {cell.stage}" if cell.stage else ""
    said = ": ".join(part for part in (error_type, message) if part)
    runs = f" [runs: {', '.join(cell.repeats)}]" if cell.outcome == "flaky" and cell.repeats else ""
    return cell.outcome + stage + (f" ({said})" if said else "") + runs


def _environment(results: ResultsFile) -> str:
    env = results.environment
    return f"torch {env.get('torch', '?')}, triton {env.get('triton', '?')}, tier {tier_of(env)}"


def render_diff(old: ResultsFile, new: ResultsFile, old_name: str, new_name: str, markdown: bool = True) -> str:
    """Every non-empty section as a table (Markdown) or plain text lines."""
    changes = diff_results(old, new)
    counts = ", ".join(f"{len(changes.sections[title])} {title}" for title, _ in SECTIONS)
    lines = [f"old: {old_name} ({_environment(old)})", f"new: {new_name} ({_environment(new)})", counts]
    if markdown:
        lines = ["# Results diff", "\n".join(f"- {escape_cell(line, limit=400)}" for line in lines)]
    for title, meaning in SECTIONS:
        section = changes.sections[title]
        if not section:
            continue
        if markdown:
            rows = [(escape_cell(c.id), escape_cell(_describe(c.old)), escape_cell(_describe(c.new))) for c in section]
            lines += [f"## {title.capitalize()} ({len(section)}): {meaning}", markdown_table(["cell", "old", "new"], rows)]
        else:
            lines.append(f"\n{title} ({len(section)}): {meaning}")
            lines += [f"  {c.id}: {truncate(one_line(_describe(c.old)))} -> {truncate(one_line(_describe(c.new)))}"
                      for c in section]
    return ("\n\n" if markdown else "\n").join(lines) + "\n"
