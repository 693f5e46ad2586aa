"""Report sections for evidence that stays out of the chart: tolerance overrides, and full tracebacks on request."""

from __future__ import annotations

import re

from harness.report.markdown.aggregate import final_cells
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.tables import markdown_table
from harness.results import ResultsFile

NOT_PASSED = ("fail", "wrong", "crash", "timeout", "flaky", "env")


def render_overrides(results: ResultsFile) -> str:
    """A table of the cells a spec's own tolerance judged (detail.tolerance names an override); '' when none did."""
    rows = []
    for cell in sorted(final_cells(results).values(), key=lambda c: c.id):
        judged = cell.detail.get("tolerance") if isinstance(cell.detail, dict) else None
        if not isinstance(judged, dict):
            continue
        for value, rule in sorted(judged.items()):
            if isinstance(rule, str) and "override for" in rule:
                rows.append([escape_cell(cell.id), escape_cell(value), escape_cell(rule)])
    if not rows:
        return ""
    return "\n\n".join(["## Tolerance overrides",
                        "Values judged with a spec's own tolerance (docs/tolerance.md) instead of the dtype default.",
                        markdown_table(["cell", "value", "rule"], rows)]) + "\n"


def render_tracebacks(results: ResultsFile) -> str:
    """Every non-pass's full traceback as a code block (report --tracebacks); cells without one are listed so."""
    out = ["## Tracebacks"]
    for cell in sorted(final_cells(results).values(), key=lambda c: c.id):
        if cell.outcome not in NOT_PASSED:
            continue
        out.append(f"### {escape_cell(cell.id)} ({cell.outcome}, {cell.stage or 'no stage'})")
        if cell.traceback:
            longest_run = max((len(run) for run in re.findall(r"`+", cell.traceback)), default=0)
            fence = "`" * max(3, longest_run + 1)  # longer than any run of backticks inside: the block cannot end early
            out.append(f"{fence}text\n{cell.traceback.rstrip()}\n{fence}")
        else:
            out.append("No traceback recorded (a crash, a timeout, or a results file from an older harness).")
    if len(out) == 1:
        out.append("No cell failed.")
    return "\n\n".join(out) + "\n"
