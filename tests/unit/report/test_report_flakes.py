"""Flaky cells in the views a nightly reads: the diff lists them apart, `settle` keeps their published record,
and the flake history counts them night by night."""

from __future__ import annotations

from harness.report.compare.diff import diff_results, render_diff
from harness.report.compare.flakes import flake_history, render_flake_history
from harness.report.compare.merge import settle_flaky
from harness.results import CellResult, ResultsFile

ENVIRONMENT = {"torch": "2.11.0+cu130", "triton": "3.6.0", "tier": "gpu"}


def _cell(cell_id: str, outcome: str, repeats: list[str] | None = None) -> CellResult:
    kernel, style, pipeline = cell_id.split("/")
    return CellResult(id=cell_id, kernel=kernel, style=style, pipeline=pipeline, outcome=outcome, repeats=repeats)


def _night(started: str, *cells: CellResult) -> ResultsFile:
    return ResultsFile(header={"environment": ENVIRONMENT, "started": started}, cells=list(cells))


PUBLISHED = _night("old", _cell("a/native/cudagraphs", "pass"), _cell("b/raw/compile", "pass"))
TONIGHT = _night("t", _cell("a/native/cudagraphs", "flaky", ["fail", "pass"]), _cell("b/raw/compile", "wrong"))


def test_the_diff_lists_a_flaky_cell_apart_and_only_confirmed_changes_regress() -> None:
    changes = diff_results(PUBLISHED, TONIGHT)
    assert [change.id for change in changes.sections["flaky"]] == ["a/native/cudagraphs"]
    assert [change.id for change in changes.sections["regressions"]] == ["b/raw/compile"]
    assert not diff_results(PUBLISHED, _night("t", TONIGHT.cells[0], PUBLISHED.cells[1])).has_regressions
    assert "## Flaky (1)" in render_diff(PUBLISHED, TONIGHT, "old", "new")


def test_settle_keeps_the_published_record_of_a_flaky_cell_only() -> None:
    settled, kept = settle_flaky(TONIGHT, PUBLISHED)
    assert kept == ["a/native/cudagraphs"]
    assert {cell.id: cell.outcome for cell in settled.cells} == {"a/native/cudagraphs": "pass", "b/raw/compile": "wrong"}
    assert settled.header["settled_from"] == [{"id": "a/native/cudagraphs", "kept": "pass"}]
    new_only = _night("t", _cell("c/raw/eager", "flaky", ["fail", "pass"]))
    assert settle_flaky(new_only, PUBLISHED)[0].cells[0].outcome == "flaky"  # nothing published to keep


def test_the_flake_history_counts_each_cell_s_flaky_nights() -> None:
    nights = [PUBLISHED, TONIGHT, _night("n3", _cell("a/native/cudagraphs", "flaky", ["crash", "pass"]))]
    history = flake_history(nights)
    assert [(entry.id, len(entry.flaky_nights), entry.nights) for entry in history] == [("a/native/cudagraphs", 2, 3)]
    assert history[0].tries == ["fail, pass", "crash, pass"]
    row = next(line for line in render_flake_history(nights).splitlines() if "a/native/cudagraphs" in line)
    assert [part.strip() for part in row.strip("|").split("|")] == ["a/native/cudagraphs", "2 of 3", "n3",
                                                                    "fail, pass; crash, pass"]
    assert "No cell was flaky" in render_flake_history([PUBLISHED])
