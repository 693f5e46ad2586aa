"""`python -m harness advise`: which wrapping style meets what the user needs, from a results file alone.

Each style is judged on every kernel the file measured, over the pipelines of each
need (harness.report.advice.needs). A non-pass is listed with its evidence, the styles that
pass the same kernel and pipeline, and a fix where one rule of harness.report.advice.fixes
matches its evidence. A needed pipeline absent from the file is "not measured", never
a pass. The control style (`native`, no Triton) is not a choice, so it is not ranked.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from tabulate import tabulate

from harness.report.advice.fixes import FIX_RULES, Fix, fixes_for
from harness.report.advice.needs import NEEDS, Need, UnknownNeed, parse_needs
from harness.report.markdown.aggregate import NOT_ASKED, final_cells, ordered
from harness.report.markdown.committed import COMMITTED_GPU_RESULTS
from harness.report.markdown.environment import environment_line
from harness.report.markdown.escape import escape_cell, first_line, one_line, truncate
from harness.report.markdown.known_reports import Features, KnownMatch, citation, kernel_features, known_reports_for
from harness.report.markdown.tables import markdown_table
from harness.results import CellResult, ResultsFile, ResultsFileError, read_results
from harness.vocab import CONTROL_STYLE, STYLES, cell_id


@dataclass(frozen=True)
class Shortfall:
    """One needed cell that did not pass, or that the file does not hold."""

    need: str
    kernel: str
    pipeline: str
    cell: CellResult | None  # None: the file has no such cell
    fixes: tuple[Fix, ...] = ()
    passes_as: tuple[str, ...] = ()  # other styles that pass this kernel in this pipeline
    upstream: tuple[KnownMatch, ...] = ()  # known PyTorch reports its evidence matches (harness.report.upstream)

    @property
    def outcome(self) -> str:
        return self.cell.outcome if self.cell else "not measured"


@dataclass
class StyleAdvice:
    style: str
    needs: list[Need]
    kernel_count: int
    failing: list[Shortfall] = field(default_factory=list)  # fail, wrong, crash, flaky
    not_asked: list[Shortfall] = field(default_factory=list)  # skip, env, timeout: the question was not asked
    missing: list[Shortfall] = field(default_factory=list)  # cells of a measured pipeline absent for this style
    unmeasured_needs: list[str] = field(default_factory=list)  # needs with a pipeline absent from the whole file

    @property
    def failed_needs(self) -> list[str]:
        return list(dict.fromkeys(s.need for s in self.failing))

    @property
    def failing_kernels(self) -> list[str]:
        return list(dict.fromkeys(s.kernel for s in self.failing))

    @property
    def verdict(self) -> str:
        if self.failing:
            return (f"fails {', '.join(self.failed_needs)} for {len(self.failing_kernels)} of {self.kernel_count}"
                    " kernel(s)")
        if self.unmeasured_needs:
            return f"meets every measured need; not measured: {', '.join(self.unmeasured_needs)}"
        if self.missing:
            return f"meets every need where measured; {len(self.missing)} cell(s) not measured"
        if self.not_asked:
            return f"meets every need where asked; {len(self.not_asked)} cell(s) not asked here"
        return "meets every need for every kernel measured"

    def rank_key(self) -> tuple:
        """Fewest kernels it fails first ("almost" means: for few kernels), then fewest needs and cells."""
        return (len(self.failing_kernels), len(self.failed_needs), len(self.failing), len(self.unmeasured_needs),
                len(self.missing), len(self.not_asked),
                STYLES.index(self.style) if self.style in STYLES else len(STYLES), self.style)


@dataclass
class Advice:
    needs: list[Need]
    kernels: list[str]
    unmeasured_pipelines: list[str]
    styles: list[StyleAdvice]  # ranked, best first


def advise(results: ResultsFile, needs: Sequence[Need]) -> Advice:
    """Rank every measured non-control style on these needs, with the evidence behind each shortfall."""
    cells = final_cells(results)
    kernels = sorted({cell.kernel for cell in cells.values()})
    measured_pipelines = {cell.pipeline for cell in cells.values()}
    styles = [s for s in ordered((cell.style for cell in cells.values()), STYLES) if s != CONTROL_STYLE]
    unmeasured = [p for need in needs for p in need.pipelines if p not in measured_pipelines]
    features = kernel_features(results)
    ranked = []
    for style in styles:
        advice = StyleAdvice(style, list(needs), len(kernels))
        advice.unmeasured_needs = [need.name for need in needs if set(need.pipelines) & set(unmeasured)]
        for need in needs:
            for pipeline in need.pipelines:
                if pipeline in measured_pipelines:
                    _judge(advice, need, pipeline, kernels, cells, styles, features)
        ranked.append(advice)
    ranked.sort(key=StyleAdvice.rank_key)
    return Advice(list(needs), kernels, list(dict.fromkeys(unmeasured)), ranked)


def _judge(advice: StyleAdvice, need: Need, pipeline: str, kernels: list[str], cells: dict[str, CellResult],
           styles: list[str], features: Features) -> None:
    for kernel in kernels:
        cell = cells.get(cell_id(kernel, advice.style, pipeline))
        if cell is not None and cell.outcome == "pass":
            continue
        passes_as = tuple(other for other in styles if other != advice.style
                          and getattr(cells.get(cell_id(kernel, other, pipeline)), "outcome", None) == "pass")
        if cell is None:
            advice.missing.append(Shortfall(need.name, kernel, pipeline, None, passes_as=passes_as))
        elif cell.outcome in NOT_ASKED:
            advice.not_asked.append(Shortfall(need.name, kernel, pipeline, cell, passes_as=passes_as))
        else:
            upstream = tuple(known_reports_for(cell, cells, features))
            advice.failing.append(Shortfall(need.name, kernel, pipeline, cell, tuple(fixes_for(cell, cells)), passes_as,
                                            upstream))


# ---- rendering: one list of sections, drawn as terminal text or Markdown ----

ERROR_LIMIT = {"text": 80, "md": 200}


def _evidence(shortfall: Shortfall) -> str:
    cell = shortfall.cell
    if cell is None:
        return "no such cell in the file"
    if cell.outcome in NOT_ASKED:
        return one_line(cell.reason or "")
    return one_line(f"{cell.error_type or ''}: {first_line(cell.error)}")


def _kernel_neutral(text: str, kernel: str) -> str:
    """The kernel's name as `<kernel>`, so one error met by many kernels is one row."""
    return re.sub(rf"\b{re.escape(kernel)}\b", "<kernel>", text)


def _rows(shortfalls: list[Shortfall], markdown: bool) -> list[list[str]]:
    """One row per distinct (need, pipeline, outcome, stage, evidence, fixes, passes-as); kernels joined."""
    grouped: dict[tuple, list[str]] = {}
    for s in shortfalls:
        fixes = "; ".join([f"[{fix.rule.name}] {fix.evidence}" for fix in s.fixes]
                          + [f"[known upstream] {citation(match)}" for match in s.upstream])
        key = (s.need, s.pipeline, s.outcome, (s.cell.stage if s.cell else None) or "",
               _kernel_neutral(_evidence(s), s.kernel), _kernel_neutral(fixes, s.kernel), ", ".join(s.passes_as))
        grouped.setdefault(key, []).append(s.kernel)
    limit = ERROR_LIMIT["md" if markdown else "text"]
    rows = []
    for (need, pipeline, outcome, stage, evidence, fixes, passes_as), kernels in grouped.items():
        named = kernels if markdown or len(kernels) <= 3 else [f"{len(kernels)} kernels: {kernels[0]}", kernels[1], "…"]
        row = [need, pipeline, ", ".join(named), outcome, stage, truncate(evidence, limit), fixes or "-",
               passes_as or "-"]
        rows.append([escape_cell(value, limit=400) for value in row] if markdown else row)
    return rows


SHORTFALL_HEADERS = ["need", "pipeline", "kernels", "outcome", "stage", "evidence", "fix (rule: evidence)", "passes as"]


def _ranks(styles: list[StyleAdvice]) -> list[int]:
    """1, 1, 3, ...: styles whose evidence counts are equal share a rank (the order among them is the vocabulary's)."""
    ranks: list[int] = []
    for index, style in enumerate(styles):
        tied = index and style.rank_key()[:6] == styles[index - 1].rank_key()[:6]
        ranks.append(ranks[-1] if tied else index + 1)
    return ranks


def _environment_text(results: ResultsFile) -> str:
    environment = results.environment
    where = environment.get("gpu") or ("CPU interpreter tier" if environment.get("tier") == "cpu" else "?")
    return f"torch {environment.get('torch', '?')}, triton {environment.get('triton', '?')}, {where}"


def render_advice(advice: Advice, results: ResultsFile, source: str, markdown: bool) -> str:
    """The ranking, then per style its shortfalls, then the fixes that fired; terminal text or Markdown."""

    def table(headers: list[str], rows: list[list[str]]) -> str:
        if markdown:
            return markdown_table(headers, rows)
        return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)

    def text(value: str) -> str:
        return escape_cell(value, limit=400) if markdown else one_line(value)

    def heading(title: str, level: int = 2) -> list[str]:
        return ["", f"{'#' * level} {title}" if markdown else f"== {title} ==", ""]

    needs = "; ".join(f"{need.name} = {' + '.join(need.pipelines)}" for need in advice.needs)
    out = heading("Which style meets these needs", 1)[1:]
    out.append(text(f"Needs: {needs}.") + ("  " if markdown else ""))
    out.append(text(f"Results: {source}, {len(advice.kernels)} kernel(s), {_environment_text(results)}.")
               + ("  " if markdown else ""))
    if markdown:
        out.append(environment_line(results.header))
    if advice.unmeasured_pipelines:
        out.append(text(f"Not measured in this file (no cell of any style): {', '.join(advice.unmeasured_pipelines)};"
                        " a need that uses them is met by nothing here."))
    out += heading("Ranking")
    out.append(table(["rank", "style", "verdict", "failing cells", "not asked", "not measured"],
                     [[str(rank), text(s.style), text(s.verdict), str(len(s.failing)), str(len(s.not_asked)),
                       str(len(s.missing))] for rank, s in zip(_ranks(advice.styles), advice.styles)]))
    if not advice.styles:
        out.append("(no style other than the control was measured)")
    fired: set[str] = set()
    for style in advice.styles:
        shortfalls = style.failing + style.not_asked + style.missing
        if shortfalls:
            out += heading(text(f"{style.style}: {style.verdict}"))
            out.append(table(SHORTFALL_HEADERS, _rows(shortfalls, markdown)))
            fired.update(fix.rule.name for s in style.failing for fix in s.fixes)
    if fired:
        out += heading("Fixes (each shown only where its evidence pattern matched)")
        out.append(table(["rule", "fix", "evidence pattern"],
                         [[text(rule.name), text(rule.fix), text(rule.evidence)]
                          for rule in FIX_RULES if rule.name in fired]))
    return "\n".join(out) + "\n"


def command_advise(args: argparse.Namespace) -> int:
    try:
        needs = parse_needs(args.needs)
        results = read_results(args.results)
    except (UnknownNeed, ResultsFileError) as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    sys.stdout.write(render_advice(advise(results, needs), results, args.results, markdown=args.format == "md"))
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `advise` (the handler is set on the namespace, as the report subcommands do)."""
    parser = subparsers.add_parser(
        "advise", help="rank the wrapping styles on what you need, from a results file",
        description="Rank the styles on the needs given, with the evidence behind every shortfall and the known fix"
                    " where its evidence pattern matches. Needs: " + ", ".join(n.name for n in NEEDS))
    parser.add_argument("--needs", required=True, help="comma-separated, e.g. training,fullgraph,aoti")
    parser.add_argument("--results", default=str(COMMITTED_GPU_RESULTS),
                        help="results file (default: the published GPU results)")
    parser.add_argument("--format", choices=("text", "md"), default="text")
    parser.set_defaults(handler=command_advise)


def needs_table() -> str:
    """The needs table as Markdown, for docs/advise-and-repro.md (a test keeps the doc equal to it).

    The table's text is this package's own, not a results file's, so it is not escaped."""
    return markdown_table(["need", "pipelines (all must pass)", "meaning"],
                          [[f"`{need.name}`", ", ".join(f"`{p}`" for p in need.pipelines), need.meaning]
                           for need in NEEDS])


def fixes_table() -> str:
    """The fixes table as Markdown, for docs/advise-and-repro.md."""
    return markdown_table(["rule", "evidence pattern (all of it must match)", "fix"],
                          [[f"`{rule.name}`", rule.evidence, rule.fix] for rule in FIX_RULES])
