"""The call-site table: the same style called from different places in user code (docs/call-sites.md).

Call-site cells (`kernel/style@site/pipeline`) stay out of the chart and the detail grids: they are a small
axis of their own. Rows are kernel x style x call site, columns the pipelines where a call site can change
the answer; a line below says where the sites of one style disagree, which is what the axis is for.
"""

from __future__ import annotations

from harness.report.aggregate import ordered
from harness.report.escape import escape_cell
from harness.report.footnotes import Footnotes, describe, evidence_key, mark
from harness.report.tables import markdown_table
from harness.results import CellResult
from harness.vocab import CALL_SITE_PIPELINES, CALL_SITES, STYLES

NOT_RECORDED = "·"


def main_cells(cells: dict[str, CellResult]) -> dict[str, CellResult]:
    """The cells of the chart and the detail grids: every cell that is not a call-site cell."""
    return {cell_id: cell for cell_id, cell in cells.items() if not cell.call_site}


def call_site_cells(cells: dict[str, CellResult]) -> dict[str, CellResult]:
    return {cell_id: cell for cell_id, cell in cells.items() if cell.call_site}


def _style_rank(style: str) -> tuple[int, str]:
    return (STYLES.index(style), "") if style in STYLES else (len(STYLES), style)


def _site_rank(style: str, site: str) -> tuple[int, str]:
    sites = CALL_SITES.get(style, ())
    return (sites.index(site), "") if site in sites else (len(sites), site)


def render_call_site_table(cells: dict[str, CellResult], symbol: dict[str, str], footnotes: Footnotes) -> str:
    """Kernel x style x site down, pipelines across; every non-pass footnoted with its evidence. Empty when none."""
    sited = call_site_cells(cells)
    if not sited:
        return ""
    pipelines = ordered((c.pipeline for c in sited.values()), CALL_SITE_PIPELINES)
    by_position = {(c.kernel, c.style, c.call_site, c.pipeline): c for c in sited.values()}
    rows_keys = sorted({(c.kernel, c.style, c.call_site) for c in sited.values()},
                       key=lambda k: (k[0], _style_rank(k[1]), _site_rank(k[1], k[2])))
    rows = []
    for kernel, style, site in rows_keys:
        row = [escape_cell(kernel), escape_cell(style), escape_cell(site)]
        for pipeline in pipelines:
            cell = by_position.get((kernel, style, site, pipeline))
            if cell is None:
                row.append(NOT_RECORDED)
            elif cell.outcome == "pass":
                row.append(symbol.get("pass", "pass"))
            else:
                row.append(f"{symbol.get(cell.outcome, cell.outcome)} {mark(footnotes.add(describe(evidence_key(cell))))}")
        rows.append(row)
    table = markdown_table(["kernel", "style", "call site"] + [escape_cell(p) for p in pipelines], rows)
    return "\n\n".join([table, render_disagreements(sited)])


def disagreements(cells: dict[str, CellResult]) -> list[tuple[str, str, str, dict[str, str]]]:
    """(kernel, style, pipeline, site -> outcome) wherever the sites of one style gave different outcomes."""
    grouped: dict[tuple[str, str, str], dict[str, str]] = {}
    for cell in cells.values():
        grouped.setdefault((cell.kernel, cell.style, cell.pipeline), {})[cell.call_site] = cell.outcome
    return [(kernel, style, pipeline, outcomes) for (kernel, style, pipeline), outcomes in sorted(grouped.items())
            if len(set(outcomes.values())) > 1]


def render_disagreements(cells: dict[str, CellResult]) -> str:
    found = disagreements(cells)
    if not found:
        return "The call sites of each style agree in every pipeline measured here."
    lines = ["Call sites that change the answer:"]
    for kernel, style, pipeline, outcomes in found:
        by_site = ", ".join(f"{escape_cell(site)} {escape_cell(outcome)}"
                            for site, outcome in sorted(outcomes.items(), key=lambda item: _site_rank(style, item[0])))
        lines.append(f"- {escape_cell(kernel)}, {escape_cell(style)}, {escape_cell(pipeline)}: {by_site}")
    return "\n".join(lines)
