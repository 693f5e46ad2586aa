"""The known upstream reports a results file's cells match, as one Markdown table for the report."""

from __future__ import annotations

from harness.report.markdown.aggregate import cell_order, final_cells
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.known_reports import KNOWN_REPORTS, KnownReport, kernel_features, known_reports_for
from harness.report.markdown.tables import markdown_table
from harness.results import CellResult, ResultsFile

LISTED = 6


def matched_reports(results: ResultsFile) -> list[tuple[KnownReport, list[CellResult]]]:
    """Each known report with the cells that match it, in the table's order; reports nothing matches are left out."""
    cells = final_cells(results)
    features = kernel_features(results)
    found: dict[str, tuple[KnownReport, list[CellResult]]] = {}
    for cell in sorted(cells.values(), key=cell_order):
        for match in known_reports_for(cell, cells, features):
            found.setdefault(match.report.name, (match.report, []))[1].append(cell)
    return list(found.values())


def render_known_reports(results: ResultsFile) -> str:
    """The table, or "" when no cell matches a known report."""
    rows = []
    for report, cells in matched_reports(results):
        listed = ", ".join(cell.id for cell in cells[:LISTED]) + (f" and {len(cells) - LISTED} more"
                                                                  if len(cells) > LISTED else "")
        rows.append([f"[{report.name}]({report.url})", escape_cell(report.title, limit=200), escape_cell(report.state),
                     escape_cell(report.fixed_in or "none known"), f"{len(cells)}: {escape_cell(listed, limit=600)}",
                     escape_cell(report.evidence, limit=400)])
    if not rows:
        return ""
    return markdown_table(["report", "title", "state", "fixed in", "cells matching", "evidence pattern"], rows)


def known_reports_table() -> str:
    """The curated table itself, for docs/findings.md (a repo test keeps the doc equal to it)."""
    return markdown_table(["report", "state (as last checked)", "fixed in", "evidence pattern (all of it must match)"],
                          [[f"[{r.name}]({r.url})", r.state, r.fixed_in or "none known", r.evidence]
                           for r in KNOWN_REPORTS])
