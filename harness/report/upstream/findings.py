"""The cells where PyTorch itself is at fault, grouped by cause: what `python -m harness findings` reports.

Three kinds, each decided from the results file alone:
- silent wrong result: a `wrong` cell whose native control passes in that pipeline, whose kernel
  passes the same pipeline in another style (the check can pass: the kernel and the reference
  agree there), and whose kernel and style pass `eager` (the wrapping itself is right); or a
  `wrong` cell, its control passing, that matches a known upstream report (`harness/report/markdown/known_reports.py`);
- crash: a `crash` cell whose native control does not crash;
- internal error: a `fail` cell whose error is Inductor's (`InductorError`, `BackendCompilerFailed`)
  or an `AssertionError` raised inside torch (its traceback's last frame is in torch; a file
  published without tracebacks is taken at its type), whose native control passes.
Cells matching a known upstream report (`harness/report/markdown/known_reports.py`) are grouped by that report; others by
kind and, for wrong results, style and pipeline, else the error line with its numbers blanked.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from harness.report.markdown.aggregate import cell_order, final_cells
from harness.report.markdown.known_reports import Features, KnownReport, kernel_features, known_reports_for
from harness.results import CellResult, ResultsFile
from harness.vocab import CONTROL_STYLE, PIPELINES, STYLES, cell_id

SILENT_WRONG, CRASH, INTERNAL = "silent wrong result", "crash", "internal error"
KINDS = (SILENT_WRONG, CRASH, INTERNAL)
INDUCTOR_ERRORS = ("InductorError", "BackendCompilerFailed")
TORCH_FRAME = re.compile(r'File "[^"]*[/\\]torch[/\\][^"]*"')
ANY_FRAME = re.compile(r'File "[^"]*"')


@dataclass
class FindingGroup:
    kind: str
    key: str  # what the cells share: a known report's name, a style and pipeline, or an error line
    cells: list[CellResult] = field(default_factory=list)
    known: KnownReport | None = None
    evidence: str = ""  # the known report's matched evidence, for the representative cell

    @property
    def kernels(self) -> list[str]:
        return sorted({cell.kernel for cell in self.cells})


def _control_passes(cell: CellResult, cells: dict[str, CellResult]) -> bool:
    control = cells.get(cell_id(cell.kernel, CONTROL_STYLE, cell.pipeline))
    return control is not None and control.outcome == "pass"


def passing_styles(cell: CellResult, cells: dict[str, CellResult]) -> list[str]:
    """The other non-control styles that pass this cell's kernel in this pipeline."""
    return [style for style in STYLES if style not in (CONTROL_STYLE, cell.style)
            and (other := cells.get(cell_id(cell.kernel, style, cell.pipeline))) is not None and other.outcome == "pass"]


def _assert_inside_torch(cell: CellResult) -> bool:
    if cell.error_type != "AssertionError":
        return False
    if not cell.traceback:
        return True  # published without tracebacks: the type is the evidence there is
    frames = ANY_FRAME.findall(cell.traceback)
    return bool(frames) and bool(TORCH_FRAME.match(frames[-1]))


def kind_of(cell: CellResult, cells: dict[str, CellResult], known: bool = False) -> str | None:
    """Which kind of PyTorch fault this cell shows, or None. `known`: the cell matches a known upstream report,
    which is evidence enough that the kernel is right; its control must still pass."""
    if cell.style == CONTROL_STYLE:
        return None
    if known and cell.outcome == "wrong" and _control_passes(cell, cells):
        return SILENT_WRONG
    if cell.outcome == "crash":
        control = cells.get(cell_id(cell.kernel, CONTROL_STYLE, cell.pipeline))
        return CRASH if control is not None and control.outcome != "crash" else None
    if not _control_passes(cell, cells):
        return None
    if cell.outcome == "wrong":
        eager = cells.get(cell_id(cell.kernel, cell.style, "eager"))
        if passing_styles(cell, cells) and (cell.pipeline == "eager" or (eager is not None and eager.outcome == "pass")):
            return SILENT_WRONG
        return None
    if cell.outcome == "fail" and ((cell.error_type or "").startswith(INDUCTOR_ERRORS) or _assert_inside_torch(cell)):
        return INTERNAL
    return None


def error_key(cell: CellResult) -> str:
    """The error with its numbers blanked: one cause whatever kernel index or size it names."""
    return f"{cell.error_type}: {re.sub(r'[0-9]+', 'N', cell.error or '')[:160]}"


def find_groups(results: ResultsFile) -> list[FindingGroup]:
    """Every PyTorch-fault cell, grouped; groups in kind order, then by size, largest first."""
    cells = final_cells(results)
    features = kernel_features(results)
    groups: dict[tuple[str, str], FindingGroup] = {}
    for cell in sorted(cells.values(), key=cell_order):
        known = known_reports_for(cell, cells, features)
        kind = kind_of(cell, cells, known=bool(known))
        if kind is None:
            continue
        if known:
            key = known[0].report.name
        elif kind == SILENT_WRONG:
            key = f"{cell.style}{'@' + cell.call_site if cell.call_site else ''} in {cell.pipeline}"
        else:
            key = error_key(cell)
        group = groups.setdefault((kind, key), FindingGroup(kind, key, known=known[0].report if known else None))
        group.cells.append(cell)
    ordered = sorted(groups.values(), key=lambda g: (KINDS.index(g.kind), -len(g.cells), g.key))
    for group in ordered:
        chosen = representative(group, features)
        matched = known_reports_for(chosen, cells, features) if group.known else []
        group.evidence = matched[0].evidence if matched else ""
    return ordered


def representative(group: FindingGroup, features: Features) -> CellResult:
    """The cell to reproduce: the simplest kernel (fewest Triton features, then name), its earliest pipeline and style."""

    def simplicity(cell: CellResult) -> tuple:
        return (len(features.get(cell.kernel, [])), cell.kernel, _rank(PIPELINES, cell.pipeline),
                _rank(STYLES, cell.style), cell.call_site)

    return min(group.cells, key=simplicity)


def _rank(vocabulary: tuple[str, ...], name: str) -> int:
    return vocabulary.index(name) if name in vocabulary else len(vocabulary)


def what_works(group: FindingGroup, results: ResultsFile) -> list[tuple[str, int, int]]:
    """(style, how many of the group's kernel-pipeline pairs it passes, how many pairs), best first."""
    cells = final_cells(results)
    pairs = sorted({(cell.kernel, cell.pipeline) for cell in group.cells})
    counts: dict[str, int] = defaultdict(int)
    for kernel, pipeline in pairs:
        for style in STYLES:
            other = cells.get(cell_id(kernel, style, pipeline))
            if other is not None and other.outcome == "pass":
                counts[style] += 1
    return sorted(((style, count, len(pairs)) for style, count in counts.items()),
                  key=lambda item: (-item[1], _rank(STYLES, item[0])))
