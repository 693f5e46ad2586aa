"""The full Markdown report of one results file: environment, chart, detail grids, evidence.

Byte-identical for the same input: every ordering is by name or vocabulary,
and the only times printed are the ones the header recorded.
"""

from __future__ import annotations

from collections import Counter

from harness.report.markdown.aggregate import final_cells, ordered, outcome_rank
from harness.report.markdown.call_sites import main_cells, render_call_site_table
from harness.report.markdown.chart import render_chart, render_rules
from harness.report.markdown.environment import CPU_TIER_NOTICE, environment_table, tier_of
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.features import render_feature_table
from harness.report.markdown.footnotes import CauseNotes, Footnotes, describe, evidence_key, mark
from harness.report.markdown.known_reports_markdown import render_known_reports
from harness.report.markdown.tables import markdown_table
from harness.results import CellResult, ResultsFile, unknown_names
from harness.vocab import PIPELINES, STYLES

TITLE = "# Triton kernel compatibility matrix"

SYMBOLS: dict[str, tuple[str, str]] = {
    "pass": ("✅", "ran and matched the reference"),
    "wrong": ("❌≠", "ran, but did not match the reference"),
    "fail": ("❌", "raised an error"),
    "crash": ("💥", "the process died"),
    "timeout": ("⏱️", "ran out of time (not counted in verdicts)"),
    "skip": ("⏭️", "cannot be asked here, with a reason (not counted in verdicts)"),
    "env": ("🌐", "the native control failed too: the environment is at fault (not counted in verdicts)"),
    "flaky": ("🎲", "repeated runs gave different outcomes (counted as not passed; the footnote lists them)"),
}
UNKNOWN_SYMBOL = ("❓", "an outcome this report does not know (counted as not passed)")
NOT_RECORDED = ("·", "no result recorded for this cell")
KNOWN_REPORTS_INTRO = ("Cells whose evidence matches a PyTorch report already filed upstream"
                       " (harness/report/markdown/known_reports.py; `python -m harness findings` writes the rest up).")
CALL_SITES_INTRO = ("The same style called from different places in user code (docs/call-sites.md), in the pipelines "
                    "where the call site can change the answer; not counted in the chart above.")


def symbol(outcome: str) -> str:
    return SYMBOLS.get(outcome, UNKNOWN_SYMBOL)[0]


def render_legend() -> str:
    rows = [(sym, escape_cell(outcome), meaning) for outcome, (sym, meaning) in SYMBOLS.items()]
    rows += [(UNKNOWN_SYMBOL[0], "(other)", UNKNOWN_SYMBOL[1]), (NOT_RECORDED[0], "(none)", NOT_RECORDED[1])]
    return markdown_table(["Symbol", "Outcome", "Meaning"], rows)


def render_kernel_grid(kernel: str, cells: dict[str, CellResult], styles: list[str], pipelines: list[str],
                       footnotes: Footnotes) -> str:
    """Styles down, pipelines across, one symbol per cell; every non-pass points at its evidence."""
    by_position = {(c.style, c.pipeline): c for c in cells.values() if c.kernel == kernel}
    rows = []
    for style in styles:
        row = [escape_cell(style)]
        for pipeline in pipelines:
            cell = by_position.get((style, pipeline))
            if cell is None:
                row.append(NOT_RECORDED[0])
            elif cell.outcome == "pass":
                row.append(symbol("pass"))
            else:
                row.append(f"{symbol(cell.outcome)} {mark(footnotes.add(describe(evidence_key(cell))))}")
        rows.append(row)
    return markdown_table(["style"] + [escape_cell(p) for p in pipelines], rows)


def render_summary(cells: dict[str, CellResult]) -> str:
    counts = Counter(cell.outcome for cell in cells.values())
    parts = ", ".join(f"{escape_cell(o)} {counts[o]}" for o in sorted(counts, key=outcome_rank))
    return f"{len(cells)} cells" + (f": {parts}." if parts else ".")


def render_unknown_names(cells: dict[str, CellResult]) -> str:
    """A visible flag for names this harness does not know (a newer harness or a hand edit); empty when none."""
    unknown = unknown_names(list(cells.values()))
    if not unknown:
        return ""
    listed = "; ".join(f"{kind} " + ", ".join(escape_cell(name, limit=60) for name in names) for kind, names in unknown.items())
    return (f"**Names this harness does not know:** {listed}. Unknown outcomes are shown as {UNKNOWN_SYMBOL[0]} and counted as"
            " not passed; unknown styles and pipelines appear in the detail grids but in no chart row.")


def render_report(results: ResultsFile) -> str:
    """Title, environment, the API-choice chart with its rules, then a grid per kernel."""
    every_cell = final_cells(results)
    cells = main_cells(every_cell)  # call-site cells: their own section, after the grids
    out = [TITLE]
    if tier_of(results.environment) == "cpu":
        out.append(CPU_TIER_NOTICE)
    out += ["## Environment", environment_table(results.header)]
    if results.dropped_torn_line:
        out.append("The results file ended in a torn line (a killed run); that line was dropped.")
    flagged = render_unknown_names(cells)
    if flagged:
        out.append(flagged)
    out += ["## Which API should I use?", render_summary(cells)]
    chart_notes = CauseNotes()
    out.append(render_chart(results, chart_notes))
    if chart_notes.render():
        out.append(chart_notes.render())
    out += ["### How to read the chart", render_rules()]
    feature_table = render_feature_table(results)
    if feature_table:
        out += ["### Kernels by Triton feature", "Render the chart for one feature with `report --feature TAG`.", feature_table]
    known_reports = render_known_reports(results)  # harness.report.upstream: PyTorch bugs already reported upstream
    if known_reports:
        out += ["## Known upstream reports", KNOWN_REPORTS_INTRO, known_reports]
    out += ["## Detail per kernel", render_legend()]
    styles = ordered((c.style for c in cells.values()), STYLES)
    pipelines = ordered((c.pipeline for c in cells.values()), PIPELINES)
    next_number = chart_notes.next_number
    for kernel in sorted({c.kernel for c in cells.values()}):
        notes = Footnotes(start=next_number)
        out += [f"### {escape_cell(kernel)}", render_kernel_grid(kernel, cells, styles, pipelines, notes)]
        if notes.render():
            out.append(notes.render())
        next_number = notes.next_number
    if not cells:
        out.append("No cells were recorded.")
    notes = Footnotes(start=next_number)
    call_site_table = render_call_site_table(every_cell, {o: s for o, (s, _) in SYMBOLS.items()}, notes)
    if call_site_table:
        out += ["## Call sites", CALL_SITES_INTRO, call_site_table]
        if notes.render():
            out.append(notes.render())
    return "\n\n".join(out) + "\n"
