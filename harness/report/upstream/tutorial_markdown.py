"""The tutorial's chart against the measurement, as Markdown: every claim, then each contradiction with its evidence."""

from __future__ import annotations

from harness.report.markdown.environment import environment_line
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.tables import markdown_table
from harness.report.upstream.tutorial_chart import Claim, TutorialChart
from harness.results import ResultsFile

LISTED_KERNELS = 8


def _counts(claim: Claim) -> str:
    parts = [f"{pipeline} {verdict.passed}/{verdict.asked}" for pipeline, verdict in claim.by_pipeline]
    skipped = [f"{outcome} {count}" for outcome, count in claim.verdict.not_asked]
    return ", ".join(parts) + (f"; not asked: {', '.join(skipped)}" if skipped else "")


def _measured(claim: Claim) -> str:
    if claim.measured is None:
        return "not measured"
    return f"{claim.measured} ({claim.verdict.passed}/{claim.verdict.asked})"


def _kernels(kernels: list[str]) -> str:
    listed = ", ".join(kernels[:LISTED_KERNELS])
    return listed + (f" and {len(kernels) - LISTED_KERNELS} more" if len(kernels) > LISTED_KERNELS else "")


def render_comparison(results: ResultsFile, source: str, chart: TutorialChart, claims: list[Claim]) -> str:
    contradicted = [claim for claim in claims if claim.contradicted]
    rows = [[escape_cell(claim.row, limit=120), claim.style, claim.tutorial, escape_cell(_measured(claim)),
             escape_cell(_counts(claim), limit=200),
             "contradicts" if claim.contradicted else "agrees" if claim.measured else "not measured"]
            for claim in claims]
    out = [f"# The tutorial's chart, measured: {source}", "",
           f"{environment_line(results.header)}", "",
           f"The tutorial: {escape_cell(chart.source, limit=400)}", "",
           "Its words for the measurement (docs/tutorial.md): Yes (or In all cases) when every asked cell passed, In the"
           " majority of cases when more than half did, No otherwise; skip, env and timeout cells are not asked.", "",
           f"**{len(contradicted)} of {len(claims)} claims are contradicted by the measurement.**", "",
           markdown_table(["claim", "style", "the tutorial says", "measured", "by pipeline", ""], rows), ""]
    for claim in contradicted:
        out += [f"## {claim.style}: {escape_cell(claim.row, limit=200)}", "",
                f"The tutorial says **{claim.tutorial}**; the measurement says **{claim.measured}**"
                f" ({claim.verdict.passed}/{claim.verdict.asked}): {escape_cell(_counts(claim), limit=300)}.", ""]
        if claim.capability.why:
            out += [escape_cell(f"The row asks {', '.join(claim.capability.pipelines)}: {claim.capability.why}.",
                                limit=400), ""]
        if claim.causes:
            out += ["Not passing:", ""]
            out += [f"- {count} × {escape_cell(cause, limit=300)} ({_kernels(kernels)})"
                    for count, cause, kernels in claim.causes]
            out.append("")
        else:
            out += ["Every asked cell passed.", ""]
    return "\n".join(out)
