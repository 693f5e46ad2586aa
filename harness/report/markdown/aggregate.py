"""From measured cells to a verdict: the only place that decides what "Yes" means."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from harness.results import CellResult, ResultsFile
from harness.vocab import OUTCOMES, PIPELINES, STYLES

# Outcomes that say nothing about the style: the question could not be asked here.
NOT_ASKED: tuple[str, ...] = ("timeout", "skip", "env")  # vocabulary order

YES = "Yes"
MAJORITY = "In the majority of cases"
RARELY = "Rarely"
NO = "No"
NOT_MEASURED = "not measured"


def final_cells(results: ResultsFile) -> dict[str, CellResult]:
    """One result per cell id; a later line (a resumed or retried run) replaces an earlier one."""
    latest: dict[str, CellResult] = {}
    for cell in results.cells:
        latest[cell.id] = cell
    return latest


def _rank(vocabulary: tuple[str, ...], name: str) -> tuple[int, str]:
    return (vocabulary.index(name), "") if name in vocabulary else (len(vocabulary), name)


def cell_order(cell: CellResult) -> tuple:
    """Stable order: kernel by name, then style and pipeline in vocabulary order (unknown names last)."""
    return (cell.kernel, _rank(STYLES, cell.style), _rank(PIPELINES, cell.pipeline), cell.id)


def ordered(names: Iterable[str], vocabulary: tuple[str, ...]) -> list[str]:
    """Names in vocabulary order, unknown ones after them alphabetically."""
    return sorted(set(names), key=lambda name: _rank(vocabulary, name))


def outcome_rank(outcome: str) -> tuple[int, str]:
    return _rank(OUTCOMES, outcome)


@dataclass(frozen=True)
class Verdict:
    passed: int
    asked: int
    not_asked: tuple[tuple[str, int], ...]  # (outcome, count) for env/skip/timeout, vocab order

    @property
    def word(self) -> str:
        if self.asked == 0:
            return ", ".join(outcome for outcome, _ in self.not_asked) or NOT_MEASURED
        if self.passed == self.asked:
            return YES
        if 2 * self.passed > self.asked:
            return MAJORITY
        return RARELY if self.passed else NO

    @property
    def clean_yes(self) -> bool:
        """A Yes with nothing left out: the only chart cell that needs no footnote."""
        return self.word == YES and not self.not_asked

    def text(self) -> str:
        """E.g. "Yes (3/3)", "Rarely (1/4); skip 2", "skip (2)"."""
        if self.asked == 0:
            if not self.not_asked:
                return NOT_MEASURED
            return "; ".join(f"{outcome} ({count})" for outcome, count in self.not_asked)
        extra = "".join(f"; {outcome} {count}" for outcome, count in self.not_asked)
        return f"{self.word} ({self.passed}/{self.asked}){extra}"


def verdict_of(cells: Iterable[CellResult]) -> Verdict:
    """pass counts for; wrong/fail/crash/flaky (and unknown outcomes) against; env/skip/timeout not at all."""
    counts = Counter(cell.outcome for cell in cells)
    not_asked = tuple((outcome, counts[outcome]) for outcome in NOT_ASKED if counts[outcome])
    asked = sum(count for outcome, count in counts.items() if outcome not in NOT_ASKED)
    return Verdict(passed=counts["pass"], asked=asked, not_asked=not_asked)


def cells_for(cells: dict[str, CellResult], style: str, pipelines: tuple[str, ...]) -> list[CellResult]:
    """A chart cell's evidence: every kernel's cell of this style in any of these pipelines (call-site cells have
    their own table, harness.report.markdown.call_sites)."""
    chosen = [cell for cell in cells.values() if cell.style == style and cell.pipeline in pipelines and not cell.call_site]
    return sorted(chosen, key=cell_order)
