"""The one-screen summary printed after a run and written beside its results: counts, then a style x pipeline grid.

Reads results only; no torch.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tabulate import tabulate

from harness.report.markdown.aggregate import cell_order
from harness.report.markdown.escape import escape_cell
from harness.report.markdown.tables import markdown_table
from harness.results import REUSED_FROM, ResultsFile
from harness.vocab import CALL_SITES, OUTCOMES, PIPELINES, STYLES

SYMBOLS = {"pass": "ok", "wrong": "WRONG", "fail": "FAIL", "crash": "CRASH", "timeout": "TIME", "skip": "-", "env": "env",
           "flaky": "FLAKY"}
FLAKY_LINES = 20  # the summary stays one screen; the results file has them all


def tier_line(results: ResultsFile) -> str:
    env = results.environment
    if env.get("tier") == "cpu":
        where = "CPU tier: Triton kernels run in the interpreter (TRITON_INTERPRET=1) on CPU tensors, not on a GPU"
    else:
        where = f"GPU tier: {env.get('gpu')} (driver {env.get('driver')}, CUDA {env.get('cuda')})"
    preload = f", LD_PRELOAD={env['ld_preload']}" if env.get("ld_preload") else ""
    return f"{where}; torch {env.get('torch')}, triton {env.get('triton')}, Python {env.get('python')}{preload}"


def ordered(results: ResultsFile) -> list[Any]:
    """Cells in the report's order (kernel, style, pipeline), so the summary never depends on which worker finished first."""
    return sorted(results.cells, key=cell_order)


def outcome_counts(results: ResultsFile) -> dict[str, int]:
    counts = Counter(cell.outcome for cell in results.cells)
    return {outcome: counts[outcome] for outcome in OUTCOMES if counts[outcome]}


def _grid_cell(outcomes: list[str]) -> str:
    if not outcomes:
        return ""
    counts = Counter(outcomes)
    if len(counts) == 1:
        outcome = outcomes[0]
        symbol = SYMBOLS.get(outcome, "?")
        return symbol if len(outcomes) == 1 else f"{symbol} x{len(outcomes)}"
    known = [o for o in OUTCOMES if counts[o]] + sorted(o for o in counts if o not in OUTCOMES)
    return " ".join(f"{SYMBOLS.get(o, '?')}:{counts[o]}" for o in known)


def _grid(cells: list[Any], column: Any, columns_order: list[str], tablefmt: str) -> str:
    """Pipelines down, `column(cell)` across, each entry the outcomes of the kernels there."""
    by_key: dict[tuple[str, str], list[str]] = {}
    for cell in cells:
        by_key.setdefault((cell.pipeline, column(cell)), []).append(cell.outcome)
    columns = [c for c in columns_order if any(k[1] == c for k in by_key)]
    pipelines = [p for p in PIPELINES if any(k[0] == p for k in by_key)]
    rows = [[p] + [_grid_cell(by_key.get((p, c), [])) for c in columns] for p in pipelines]
    return tabulate(rows, headers=["pipeline"] + columns, tablefmt=tablefmt)


def render_summary(results: ResultsFile, tablefmt: str = "simple") -> str:
    main = [cell for cell in results.cells if not cell.call_site]
    sited = [cell for cell in results.cells if cell.call_site]  # their own grid, as the report gives them a table
    counts = outcome_counts(results)
    lines = [tier_line(results), f"{len(results.cells)} cells: " + ", ".join(f"{n} {o}" for o, n in counts.items())]
    if main:
        lines += ["", _grid(main, lambda cell: cell.style, list(STYLES), tablefmt)]
    if sited:
        sites = [f"{style}@{site}" for style in STYLES for site in CALL_SITES.get(style, ())]
        sites += sorted({f"{c.style}@{c.call_site}" for c in sited} - set(sites))
        lines += ["", "call sites (docs/call-sites.md):", _grid(sited, lambda cell: f"{cell.style}@{cell.call_site}",
                                                                sites, tablefmt)]
    lines += ["", "legend: " + ", ".join(f"{v} = {k}" for k, v in SYMBOLS.items()) + " (xN: N kernels)"]
    return "\n".join(lines + reuse_lines(results) + flaky_lines(results) + confirmation_lines(results))


def confirmation_lines(results: ResultsFile) -> list[str]:
    """How the changed cells were settled (harness.run.confirm), and which were not: a sampled run names each."""
    verdicts: dict[str, list[str]] = {}
    for cell in ordered(results):
        verdict = (cell.detail.get("confirmation") or {}).get("verdict")
        if verdict:
            verdicts.setdefault(verdict, []).append(cell.id)
    if not verdicts:
        return []
    counts = ", ".join(f"{len(verdicts[v])} {v}" for v in ("confirmed", "flaky", "unconfirmed") if v in verdicts)
    lines = ["", f"changed against the baseline: {sum(map(len, verdicts.values()))} cells; {counts}"]
    unconfirmed = verdicts.get("unconfirmed", [])
    if unconfirmed:
        lines.append(f"unconfirmed ({len(unconfirmed)}; not in the --confirm-sample, each keeps the run's outcome):")
        lines += [f"- {cell_id}" for cell_id in unconfirmed[:FLAKY_LINES]]
        if len(unconfirmed) > FLAKY_LINES:
            lines.append(f"  ... and {len(unconfirmed) - FLAKY_LINES} more in the results file")
    return lines


def reuse_lines(results: ResultsFile) -> list[str]:
    """How many cells were copied from an earlier run by --reuse (their key unchanged), and from which files."""
    sources: dict[str, int] = {}
    for cell in results.cells:
        origin = cell.detail.get(REUSED_FROM)
        if isinstance(origin, dict):
            sources[str(origin.get("file"))] = sources.get(str(origin.get("file")), 0) + 1
    if not sources:
        return []
    where = ", ".join(f"{count} from {file}" for file, count in sorted(sources.items()))
    return ["", f"reused: {sum(sources.values())} of {len(results.cells)} cells, not run again (their key unchanged): "
                f"{where}"]


def flaky_lines(results: ResultsFile) -> list[str]:
    """Each flaky cell with its runs' outcomes in order (--repeat N): a verdict that did not hold still."""
    flaky = [cell for cell in ordered(results) if cell.outcome == "flaky"]
    if not flaky:
        return []
    lines = ["", f"flaky ({len(flaky)}; outcomes of the repeated runs, in order):"]
    lines += [f"- {cell.id}: {', '.join(cell.repeats or [])}" for cell in flaky[:FLAKY_LINES]]
    if len(flaky) > FLAKY_LINES:
        lines.append(f"  ... and {len(flaky) - FLAKY_LINES} more in the results file")
    return lines


def render_summary_markdown(results: ResultsFile, title: str) -> str:
    """The summary plus every non-pass cell with its evidence, escaped as the report escapes it."""
    evidence = [
        [escape_cell(value) for value in (c.id, c.outcome, c.stage or "", c.error_type or "", c.error or c.reason or "")]
        for c in ordered(results)
        if c.outcome != "pass"
    ]
    table = markdown_table(["cell", "outcome", "stage", "error type", "first line / reason"], evidence)
    return f"# {title}\n\n{render_summary(results, tablefmt='github')}\n\n## Cells that did not pass\n\n{table}\n"
