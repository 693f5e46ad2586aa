"""The call-site table: the same style called from different places in user code (docs/call-sites.md).

Call-site cells (`kernel/style@site/pipeline`) stay out of the chart and the detail grids: they are a small
axis of their own. Rows are kernel x style x call site, columns the pipelines where a call site can change
the answer; a line below says where the sites of one style disagree, which is what the axis is for.
"""

from __future__ import annotations

from harness.report.markdown.aggregate import ordered
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.footnotes import Footnotes, describe, evidence_key, mark
from harness.report.markdown.tables import markdown_table
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


MARKS_PER_ENTRY = 4  # footnote marks shown in one table entry; the rest are counted


def render_call_site_table(cells: dict[str, CellResult], symbol: dict[str, str], footnotes: Footnotes) -> str:
    """Style x call site down, pipelines across, each entry the kernels counted by outcome with the footnoted
    evidence of every non-pass; below it, where the sites of one style disagree. Empty when there are none.

    Counted, not one row per kernel: a run over a library asks every kernel at every site, and the answer the
    axis exists for (does the call site change anything, and for which kernels) is the disagreement list."""
    sited = call_site_cells(cells)
    if not sited:
        return ""
    pipelines = ordered((c.pipeline for c in sited.values()), CALL_SITE_PIPELINES)
    grouped: dict[tuple[str, str, str], list[CellResult]] = {}
    for cell in sited.values():
        grouped.setdefault((cell.style, cell.call_site, cell.pipeline), []).append(cell)
    kernels = len({c.kernel for c in sited.values()})
    rows = []
    for style, site in sorted({(c.style, c.call_site) for c in sited.values()},
                              key=lambda k: (_style_rank(k[0]), _site_rank(k[0], k[1]))):
        row = [escape_cell(style), escape_cell(site)]
        for pipeline in pipelines:
            group = grouped.get((style, site, pipeline), [])
            row.append(_entry(sorted(group, key=lambda c: c.kernel), symbol, footnotes, kernels) if group else NOT_RECORDED)
        rows.append(row)
    table = markdown_table(["style", "call site"] + [escape_cell(p) for p in pipelines], rows)
    counted = f"Each entry counts kernels by outcome ({kernels} kernel{'s' if kernels != 1 else ''} asked)."
    return "\n\n".join([counted, table, render_disagreements(sited)])


def _entry(group: list[CellResult], symbol: dict[str, str], footnotes: Footnotes, kernels_asked: int) -> str:
    """'✅ 34 · ❌ 1 [2]': the count of each outcome, passes first, then the footnote marks of the non-passes.

    A footnote names the kernels its evidence came from unless every kernel asked gave it."""
    counts: dict[str, int] = {}
    by_evidence: dict[tuple[str, str, str, str], list[str]] = {}
    for cell in group:
        counts[cell.outcome] = counts.get(cell.outcome, 0) + 1
        if cell.outcome != "pass":
            by_evidence.setdefault(evidence_key(cell), []).append(cell.kernel)
    parts = [f"{symbol.get(outcome, outcome)} {count}"
             for outcome, count in sorted(counts.items(), key=lambda item: (item[0] != "pass", item[0]))]
    marks = []
    for key, kernels in by_evidence.items():
        named = "" if len(kernels) == kernels_asked else " (" + ", ".join(escape_cell(k) for k in sorted(kernels)) + ")"
        marks.append(mark(footnotes.add(describe(key) + named)))
    shown = " ".join(marks[:MARKS_PER_ENTRY]) + (f" +{len(marks) - MARKS_PER_ENTRY}" if len(marks) > MARKS_PER_ENTRY else "")
    return " · ".join(parts) + (f" {shown}" if shown else "")


def disagreements(cells: dict[str, CellResult]) -> list[tuple[str, str, str, dict[str, str]]]:
    """(kernel, style, pipeline, site -> outcome) wherever the sites of one style gave different outcomes."""
    grouped: dict[tuple[str, str, str], dict[str, str]] = {}
    for cell in cells.values():
        grouped.setdefault((cell.kernel, cell.style, cell.pipeline), {})[cell.call_site] = cell.outcome
    return [(kernel, style, pipeline, outcomes) for (kernel, style, pipeline), outcomes in sorted(grouped.items())
            if len(set(outcomes.values())) > 1]


def render_disagreements(cells: dict[str, CellResult]) -> str:
    """One line per style, pipeline and pattern of outcomes by site, naming every kernel that showed it."""
    found = disagreements(cells)
    if not found:
        return "The call sites of each style agree in every pipeline measured here."
    patterns: dict[tuple[str, str, tuple[tuple[str, str], ...]], list[str]] = {}
    for kernel, style, pipeline, outcomes in found:
        by_site = tuple(sorted(outcomes.items(), key=lambda item: _site_rank(style, item[0])))
        patterns.setdefault((style, pipeline, by_site), []).append(kernel)
    lines = ["Call sites that change the answer:"]
    for (style, pipeline, by_site), kernels in sorted(
            patterns.items(), key=lambda item: (_style_rank(item[0][0]), CALL_SITE_PIPELINES.index(item[0][1])
                                                if item[0][1] in CALL_SITE_PIPELINES else len(CALL_SITE_PIPELINES))):
        sites = ", ".join(f"{escape_cell(site)} {escape_cell(outcome)}" for site, outcome in by_site)
        names = ", ".join(escape_cell(kernel) for kernel in sorted(kernels))
        lines.append(f"- {escape_cell(style)}, {escape_cell(pipeline)}: {sites} ({len(kernels)} "
                     f"kernel{'s' if len(kernels) != 1 else ''}: {names})")
    return "\n".join(lines)
