"""Known upstream reports, each matched by an evidence pattern in a cell (never by a style's name alone).

A small curated table, kept as data like advise's fixes (harness.report.advice.fixes): the report's id and
address, its state and the release that fixed it as last checked, and a rule that reads a cell, the
other cells of its results file and the kernels' Triton features (the results header's `kernels`). The
rule returns the evidence it matched, in words a reader can check in the file, or None. `findings`,
`advise`, the Markdown report and the HTML page all name a matching report from this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.results import CellResult, ResultsFile
from harness.vocab import cell_id

Cells = dict[str, CellResult]
Features = dict[str, list[str]]  # kernel -> its Triton features, from the results header


@dataclass(frozen=True)
class KnownReport:
    name: str  # how it is cited: pytorch#167224
    url: str
    title: str
    state: str  # as last checked, with the date
    fixed_in: str | None  # the first release with the fix, or None where none is known
    evidence: str  # the pattern, in words, for the docs and the reports
    matches: Callable[[CellResult, Cells, Features], str | None]


@dataclass(frozen=True)
class KnownMatch:
    report: KnownReport
    evidence: str


def kernel_features(results: ResultsFile) -> Features:
    kernels = results.header.get("kernels") or {}
    return {name: list(entry.get("features") or []) for name, entry in kernels.items() if isinstance(entry, dict)}


def _outcome(cells: Cells, kernel: str, style: str, pipeline: str) -> str | None:
    other = cells.get(cell_id(kernel, style, pipeline))
    return other.outcome if other else None


def _flop_counter_skips_the_launch(cell: CellResult, cells: Cells, features: Features) -> str | None:
    if (cell.style, cell.pipeline, cell.outcome) != ("wrap_triton", "flop_counter", "wrong") or cell.call_site:
        return None
    eager = _outcome(cells, cell.kernel, "wrap_triton", "eager")
    if eager not in (None, "pass"):
        return None  # the bare launch is wrong without FlopCounterMode too: not this report
    where = "passes in eager" if eager else "is not measured in eager"
    return f"the bare wrap_triton launch {where} and is wrong under FlopCounterMode: the output was never written"


HOST_TMA_PIPELINES = ("compile", "compile_fullgraph", "compile_dynamic", "cudagraphs", "compile_visible", "aoti",
                      "aoti_strict", "aoti_fresh_process")  # compile_visible: torch.compile's defaults, its code read


def _host_tensor_descriptor_as_constant(cell: CellResult, cells: Cells, features: Features) -> str | None:
    if (cell.outcome != "wrong" or cell.style not in ("triton_op", "wrap_triton") or cell.pipeline not in HOST_TMA_PIPELINES
            or "tensor-descriptor" not in features.get(cell.kernel, [])):
        return None
    eager = _outcome(cells, cell.kernel, cell.style, "eager")
    if eager not in (None, "pass"):
        return None
    return (f"a kernel taking a host-side TensorDescriptor is right in eager ({eager or 'not measured'}) and wrong"
            f" once {cell.pipeline} captures the launch")


KNOWN_REPORTS: tuple[KnownReport, ...] = (
    KnownReport(
        "pytorch#167224", "https://github.com/pytorch/pytorch/pull/167224",
        "[FlopCounter] Add skip_unsupported parameter for graceful handling of unsupported HOPs",
        "open pull request (checked 2026-11); its review notes that a Triton kernel without a registered formula"
        " is still not executed", None,
        "wrap_triton in flop_counter is wrong, and the same kernel's wrap_triton eager cell passes or was not measured",
        _flop_counter_skips_the_launch),
    KnownReport(
        "pytorch#193608", "https://github.com/pytorch/pytorch/pull/193608",
        "[GPU][AOTI] Support host TMA in C++ wrappers: host-side TensorDescriptor values were treated as opaque"
        " constants", "closed pull request (checked 2026-11)", None,
        "a kernel tagged tensor-descriptor is wrong in triton_op or wrap_triton under compile, CUDA graphs or"
        " AOTInductor, and its eager cell in that style passes or was not measured",
        _host_tensor_descriptor_as_constant),
)


def known_reports_for(cell: CellResult, cells: Cells, features: Features) -> list[KnownMatch]:
    """Every known report whose evidence pattern this cell matches."""
    found = []
    for report in KNOWN_REPORTS:
        evidence = report.matches(cell, cells, features)
        if evidence:
            found.append(KnownMatch(report, evidence))
    return found


def citation(match: KnownMatch) -> str:
    """`pytorch#167224 (open pull request ...; fixed in: none known)`: one line for a table cell."""
    fixed = match.report.fixed_in or "none known"
    return f"{match.report.name} ({match.report.state.split(';')[0].split(' (')[0]}; fixed in: {fixed})"
