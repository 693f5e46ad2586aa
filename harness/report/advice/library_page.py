"""One page for one kernel library: which style meets three common needs (`advise`), then the library's chart and the
evidence of every cell (`report`). `reports/ecosystem/<library>.md` are these pages (docs/ecosystem.md); a library's
author renders their own with `python -m harness library-page RESULTS --title NAME -o PAGE.md`."""

from __future__ import annotations

from harness.report.advice.advise import advise, render_advice
from harness.report.advice.needs import parse_needs
from harness.report.markdown.evidence_sections import render_overrides
from harness.report.markdown.render import render_report
from harness.results import ResultsFile

# (what a reader asks, the needs `advise` is given): training with torch.compile, serving through AOTInductor, and
# handing a saved ExportedProgram to someone else.
LIBRARY_NEEDS: tuple[tuple[str, str], ...] = (
    ("Training with torch.compile", "training,compile"),
    ("Inference through AOTInductor", "inference,aoti"),
    ("Shipping a saved ExportedProgram", "ship_export"),
)


def _demoted(markdown: str, levels: int) -> str:
    """Every heading `levels` deeper, so a rendered report or advice nests under the page's own headings."""
    lines = []
    for line in markdown.splitlines():
        if line.startswith("#"):
            line = "#" * levels + line
        lines.append(line)
    return "\n".join(lines) + "\n"


def render_library_page(results: ResultsFile, source: str, title: str) -> str:
    kernels = sorted({cell.kernel for cell in results.cells})
    out = [f"# {title}", "",
           f"{len(results.cells)} cells over {len(kernels)} kernels ({', '.join(f'`{k}`' for k in kernels)}), from "
           f"`{source}`. First what `advise` recommends for three needs, then the chart and every cell's evidence.", ""]
    for question, needs in LIBRARY_NEEDS:
        out += [f"## {question} (`advise --needs {needs}`)", ""]
        advice = render_advice(advise(results, parse_needs(needs)), results, source, markdown=True)
        out.append(_demoted(advice, 2))
    out += ["## The chart and the evidence", ""]
    out.append(_demoted(render_report(results) + render_overrides(results), 2))
    return "\n".join(out)
