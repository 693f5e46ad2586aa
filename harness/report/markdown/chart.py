"""The API-choice chart: capabilities x styles, each cell a verdict over kernels, plus its rules."""

from __future__ import annotations

from harness.report.markdown.aggregate import (
    MAJORITY,
    NO,
    NOT_ASKED,
    RARELY,
    YES,
    cells_for,
    final_cells,
    verdict_of,
)
from harness.report.markdown.capabilities import CAPABILITIES, COLUMNS, TUTORIAL, Column
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.footnotes import CauseNotes, mark
from harness.report.markdown.tables import markdown_table
from harness.results import CellResult, ResultsFile
from harness.vocab import CONTROL_STYLE

VERDICT_RULES = (
    f"**{YES}**: every asked cell passed. **{MAJORITY}**: more than half passed."
    f" **{RARELY}**: some, but at most half, passed. **{NO}**: none passed."
    " Counts are passed/asked over all kernels and the row's pipelines;"
    " wrong, fail, crash and flaky count as not passed; "
    + ", ".join(NOT_ASKED)
    + " cells were not asked (the question could not be put here) and are shown beside the counts."
)


def chart_columns(cells: dict[str, CellResult]) -> list[Column]:
    """The tutorial's columns and ours; the native control only when the results measured it."""
    has_control = any(cell.style == CONTROL_STYLE for cell in cells.values())
    return [column for column in COLUMNS if column.style != CONTROL_STYLE or has_control]


def render_chart(results: ResultsFile, footnotes: CauseNotes) -> str:
    """The chart table; every cell that is not a clean Yes gets the marks of its causes (footnotes by cause)."""
    cells = final_cells(results)
    columns = chart_columns(cells)
    rows = []
    for capability in CAPABILITIES:
        row = [escape_cell(capability.name, limit=200)]
        for column in columns:
            evidence = cells_for(cells, column.style, capability.pipelines)
            verdict = verdict_of(evidence)
            text = escape_cell(verdict.text())
            not_passed = [cell for cell in evidence if cell.outcome != "pass"]
            if not verdict.clean_yes and not_passed:
                text += " " + "".join(mark(number) for number in sorted(footnotes.add(not_passed)))
            row.append(text)
        rows.append(row)
    headers = ["Capability"] + [escape_cell(column.label) for column in columns]
    return markdown_table(headers, rows)


def render_rules() -> str:
    """The rules behind every row and column, generated from capabilities.py."""
    rows = [
        (
            escape_cell(capability.name, limit=200),
            escape_cell(", ".join(capability.pipelines)),
            "yes" if capability.from_tutorial else "no (added here)",
            escape_cell(capability.why, limit=300),
        )
        for capability in CAPABILITIES
    ]
    rules = markdown_table(["Capability", "Pipelines aggregated", "In the tutorial", "Why"], rows)
    columns = markdown_table(
        ["Column", "Style", "In the tutorial"],
        [
            (escape_cell(c.label), escape_cell(c.style), "yes" if c.from_tutorial else "no (added here)")
            for c in COLUMNS
        ],
    )
    intro = escape_cell(f'Rows and columns follow the PyTorch tutorial "{TUTORIAL}", with extra rows and columns.')
    return f"{intro}\n\n{rules}\n\n{columns}\n\n{VERDICT_RULES}"
