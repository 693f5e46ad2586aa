"""The findings as Markdown: one section per group, each ready to paste into an upstream issue.

A section holds a title, the versions and GPU, the known upstream report when one matches, the
reproducer of the group's simplest kernel (its text is given by the caller, which may import
torch: harness.findings_command), expected against got, and what works instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from harness.report.markdown.environment import environment_line, tier_of
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.known_reports import kernel_features
from harness.report.markdown.tables import markdown_table
from harness.report.upstream.findings import (
    INTERNAL,
    SILENT_WRONG,
    FindingGroup,
    error_key,
    passing_styles,
    representative,
    what_works,
)
from harness.results import CellResult, ResultsFile
from harness.vocab import CONTROL_STYLE

MISMATCH = re.compile(r"(?P<what>[\w\[\] ]+): (?:(?P<unwritten>[^;]*never written[^;]*); )?"
                      r"(?P<bad>\d+) of (?P<total>\d+) elements differ.*?"
                      r"first at flat index (?P<index>\d+): (?P<got>\S+) vs (?:fp64 answer|reference) (?P<want>[^\s(]+)")
LISTED_KERNELS = 12


def cell_name(cell: CellResult) -> str:
    """The id `repro` takes: kernel/style@site/pipeline for a call-site cell."""
    return cell.id


def title_of(group: FindingGroup) -> str:
    pipelines = sorted({cell.pipeline for cell in group.cells})
    where = ", ".join(pipelines[:4]) + (f" and {len(pipelines) - 4} more" if len(pipelines) > 4 else "")
    kernels = f"{len(group.kernels)} kernel{'s' if len(group.kernels) != 1 else ''}"
    if group.kind == SILENT_WRONG:
        styles = ", ".join(sorted({cell.style for cell in group.cells}))
        return f"Silent wrong results: user Triton kernels launched through {styles} under {where} ({kernels})"
    noun = "Internal error" if group.kind == INTERNAL else "Crash"
    return f"{noun} under {where}: {_short(error_key(group.cells[0]))} ({kernels})"


def _short(text: str, limit: int = 90) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unwritten(clause: str | None) -> str:
    """The mismatch's own evidence that the op never wrote the output (harness.domain.poison), in brackets."""
    return f" ({clause.strip()})" if clause else ""


def expected_and_got(cell: CellResult, passing: list[str]) -> tuple[str, str]:
    """(expected, got) in words, from the cell's recorded evidence."""
    others = f" ({', '.join(passing)} give it)" if passing else ""
    if cell.outcome == "wrong":
        found = MISMATCH.search(cell.error or "")
        if found:
            return (f"the pure-PyTorch reference's {found['what'].strip()}{others}: {found['want']} at flat index"
                    f" {found['index']}",
                    f"{found['got']} there{_unwritten(found['unwritten'])}; {found['bad']} of {found['total']} elements"
                    " differ beyond the tolerance, and nothing was raised")
        return f"the reference's result{others}", f"{cell.error} (nothing was raised)"
    return (f"the call runs and matches the reference, as the native control does{others}",
            f"{cell.outcome} at stage {cell.stage}: {cell.error_type}: {cell.error}")


def _known_lines(group: FindingGroup) -> list[str]:
    if group.known is None:
        return ["- Known upstream report: none in harness/report/markdown/known_reports.py matches; a new report."]
    report = group.known
    return [f"- Known upstream report: [{report.name}]({report.url}): {escape_cell(report.title, limit=300)}."
            f" State: {report.state}. Fixed in: {report.fixed_in or 'no release known'}.",
            f"- Why it matches: {group.evidence} (pattern: {report.evidence})."]


def render_group(number: int, group: FindingGroup, results: ResultsFile, reproducer: str | None,
                 note: str = "") -> str:
    cells = {cell.id: cell for cell in results.cells}
    chosen = representative(group, kernel_features(results))
    passing = passing_styles(chosen, cells)
    expected, got = expected_and_got(chosen, [s for s in passing if s != CONTROL_STYLE])
    kernels = group.kernels
    listed = ", ".join(kernels[:LISTED_KERNELS]) + (f" and {len(kernels) - LISTED_KERNELS} more"
                                                     if len(kernels) > LISTED_KERNELS else "")
    tier = tier_of(results.environment)
    command = f"python -m harness repro {cell_name(chosen)} --tier {tier} -o repro.py && python repro.py"
    lines = [f"## {number}. {title_of(group)}", "",
             f"- Title for the upstream issue: {title_of(group)}",
             f"- Versions and GPU: {environment_line(results.header)}",
             f"- Cells: {len(group.cells)} ({', '.join(sorted({c.style for c in group.cells}))};"
             f" {', '.join(sorted({c.pipeline for c in group.cells}))}); kernels: {listed}",
             *_known_lines(group), "",
             f"### Reproducer: {cell_name(chosen)}", "",
             f"The simplest kernel of the group (fewest Triton features): `{chosen.kernel}`. Written by `{command}`;"
             f" it needs torch and triton, not the harness, and ends with the outcome line below.", "",
             "```", _outcome_line(chosen), "```", ""]
    if reproducer is not None:
        lines += [f"<details><summary>repro.py ({len(reproducer.splitlines())} lines, {len(reproducer):,} characters:"
                  " attach it as a file where an issue's body is too short)</summary>", "", "```python",
                  reproducer.rstrip("\n"), "```", "", "</details>", ""]
    if note:
        lines += [note, ""]
    lines += ["### Expected vs got", "", f"- Expected: {expected}", f"- Got: {got}", "",
              "### What works instead", "",
              markdown_table(["style", "passes the group's kernel and pipeline", "of"],
                             [[style + (" (control, pure PyTorch)" if style == CONTROL_STYLE else ""), str(count),
                               str(total)] for style, count, total in what_works(group, results)]), ""]
    return "\n".join(lines)


def _outcome_line(cell: CellResult) -> str:
    return f"{cell.outcome.upper()}: {cell.id} at stage {cell.stage}: {cell.error_type}: {cell.error}"


def render_findings(results: ResultsFile, source: str, groups: list[FindingGroup],
                    reproducers: Mapping[str, str | None], notes: Mapping[str, str] | None = None) -> str:
    """The whole page; `reproducers` maps each group's representative cell id to its script (None: not written)."""
    features = kernel_features(results)
    header = [f"# Where PyTorch itself is at fault: {source}", "",
              environment_line(results.header), "",
              "Each section is one cause, ready to paste into an upstream issue. The rules (docs/findings.md): a silent"
              " wrong result is a `wrong` cell whose pure-PyTorch control passes, whose kernel passes the same pipeline"
              " in another style and whose style passes eager; a crash is a `crash` whose control does not crash; an"
              " internal error is an Inductor error or an assert inside torch whose control passes.", ""]
    if not groups:
        return "\n".join(header + ["No cell of this file shows a PyTorch fault by these rules.", ""])
    summary = [[str(number), group.kind, escape_cell(title_of(group), limit=200), str(len(group.cells)),
                group.known.name if group.known else "none"] for number, group in enumerate(groups, 1)]
    header += [markdown_table(["#", "kind", "title", "cells", "known report"], summary), ""]
    sections = [render_group(number, group, results, reproducers.get(representative(group, features).id),
                             (notes or {}).get(representative(group, features).id, ""))
                for number, group in enumerate(groups, 1)]
    return "\n".join(header) + "\n" + "\n".join(sections)
