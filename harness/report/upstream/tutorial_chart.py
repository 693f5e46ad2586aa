"""The PyTorch tutorial's chart, claim by claim, against a results file: what `python -m harness tutorial` says.

The tutorial ("Using User-Defined Triton Kernels with torch.compile") publishes a chart of which API to
use; tutorial-chart.json (a copy of its columns, rows and words) is what it claims. Each claim is
measured over the chart row's pipelines (harness.report.markdown.capabilities, the same rule as our own chart)
for the column's style, every kernel of the file.

How counts become the tutorial's words (docs/tutorial.md), over the cells that were asked (skip, env
and timeout are not asked and not counted):
- every asked cell passed: "Yes", or "In all cases" where the tutorial itself wrote "In all cases";
- more than half passed: "In the majority of cases";
- half or fewer: "No" (the tutorial has no word for "sometimes"; an API that fails most kernels is not
  one to choose), the counts beside it in every other output;
- nothing asked: no word; the tutorial's stays.
"Yes" and "In all cases" mean the same; any other difference of words is a contradiction.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from harness.report.markdown.aggregate import Verdict, cells_for, final_cells, verdict_of
from harness.report.markdown.capabilities import CAPABILITIES, Capability
from harness.results import CellResult, ResultsFile

CHART_FILE = Path(__file__).with_name("tutorial-chart.json")
YES, ALL_CASES, MAJORITY, NO = "Yes", "In all cases", "In the majority of cases", "No"
TUTORIAL_WORDS = (YES, MAJORITY, ALL_CASES, NO)
# The tutorial's columns, by the start of their label, and the style each one is.
COLUMN_STYLES: dict[str, str] = {
    "Triton kernel (no explicit": "raw",
    "torch.library.triton_op": "triton_op",
    "torch.library.custom_op": "custom_op",
}


class TutorialChartError(Exception):
    """A chart file or a tutorial source whose chart cannot be read; the message names it."""


@dataclass(frozen=True)
class TutorialChart:
    source: str
    columns: tuple[str, ...]
    rows: dict[str, tuple[str, ...]]  # row label -> the tutorial's word per column


def load_chart(path: Path = CHART_FILE) -> TutorialChart:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        columns = tuple(data["columns"])
        rows = {label: tuple(words) for label, words in data["rows"].items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TutorialChartError(f"{path}: not a tutorial chart ({exc})") from None
    return TutorialChart(str(data.get("source", "")), columns, rows)


def _plain(label: str) -> str:
    return label.replace("``", "").rstrip("?").strip().casefold()


def capability_of(row: str) -> Capability | None:
    """Our chart row of the same claim (labels compared without RST markup, case or a trailing '?')."""
    return next((capability for capability in CAPABILITIES if _plain(capability.name) == _plain(row)), None)


def style_of(column: str) -> str | None:
    plain = column.replace("``", "")
    return next((style for start, style in COLUMN_STYLES.items() if plain.startswith(start)), None)


def tutorial_word(verdict: Verdict, tutorial_said: str = "") -> str | None:
    """The measurement in the tutorial's words (the module's docstring says how); None when nothing was asked."""
    if verdict.asked == 0:
        return None
    if verdict.passed == verdict.asked:
        return ALL_CASES if tutorial_said == ALL_CASES else YES
    return MAJORITY if 2 * verdict.passed > verdict.asked else NO


def same_meaning(first: str, second: str) -> bool:
    def meaning(word: str) -> str:
        return YES if word == ALL_CASES else word

    return meaning(first) == meaning(second)


@dataclass
class Claim:
    row: str
    column: str
    style: str
    capability: Capability
    tutorial: str
    measured: str | None
    verdict: Verdict
    by_pipeline: list[tuple[str, Verdict]] = field(default_factory=list)
    causes: list[tuple[int, str, list[str]]] = field(default_factory=list)  # (count, "pipeline: stage: error", kernels)

    @property
    def contradicted(self) -> bool:
        return self.measured is not None and not same_meaning(self.measured, self.tutorial)


def _causes(cells: list[CellResult]) -> list[tuple[int, str, list[str]]]:
    """The not-passing cells by pipeline, stage and error type and line, most frequent first."""
    grouped: dict[str, list[str]] = {}
    for cell in cells:
        if cell.outcome == "pass" or cell.outcome in ("skip", "env", "timeout"):
            continue
        line = (cell.error or "").strip().splitlines()[0] if cell.error else ""
        key = f"{cell.pipeline}: {cell.outcome} at {cell.stage}: {cell.error_type}: {line[:140]}"
        grouped.setdefault(key, []).append(cell.kernel)
    counted = Counter({key: len(kernels) for key, kernels in grouped.items()})
    return [(count, key, sorted(grouped[key])) for key, count in counted.most_common()]


def claim_for(cells: dict[str, CellResult], row: str, column: str, said: str) -> Claim | None:
    """The measured claim of one chart cell, or None when the row or the column is not one we measure."""
    capability, style = capability_of(row), style_of(column)
    if capability is None or style is None:
        return None
    evidence = cells_for(cells, style, capability.pipelines)
    verdict = verdict_of(evidence)
    by_pipeline = [(pipeline, verdict_of([c for c in evidence if c.pipeline == pipeline])) for pipeline in capability.pipelines]
    return Claim(row, column, style, capability, said, tutorial_word(verdict, said), verdict, by_pipeline, _causes(evidence))


def compare(results: ResultsFile, chart: TutorialChart) -> list[Claim]:
    """Every claim of the chart whose row and column we measure, in the tutorial's order."""
    cells = final_cells(results)
    found = (claim_for(cells, row, column, said) for row, words in chart.rows.items()
             for column, said in zip(chart.columns, words))
    return [claim for claim in found if claim is not None]
