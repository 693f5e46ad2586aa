"""harness.run.confirm: a changed cell is confirmed only when every new run agrees; one that disagrees is flaky."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.report.compare.baseline import changes_against
from harness.results import CellResult, ResultsFileError, ResultsWriter, header_record, read_results
from harness.run.confirm import changed_cells, confirm_cell, confirm_changes, confirmation_line


def _cell(outcome: str, cell_id: str = "add/raw/compile", **fields) -> CellResult:
    kernel, style, pipeline = cell_id.split("/")
    return CellResult(id=cell_id, kernel=kernel, style=style, pipeline=pipeline, outcome=outcome, **fields)


def _runs(*outcomes: str):
    """A stand-in for a new process: hands out these outcomes in order and counts the calls."""
    calls = []

    def run_again() -> CellResult:
        calls.append(1)
        outcome = outcomes[len(calls) - 1]
        return _cell(outcome, worker="confirm", error="boom" if outcome != "pass" else None, duration_s=1.0)

    return run_again, calls


def test_every_new_run_agreeing_confirms_the_change() -> None:
    first = _cell("fail", stage="run", error_type="RuntimeError", error="boom", traceback="Traceback ...", duration_s=2.0)
    run_again, calls = _runs("fail", "fail", "fail")
    record = confirm_cell(first, "pass", run_again, tries=3)
    assert len(calls) == 3
    assert record.outcome == "fail" and record.repeats == ["fail"] * 4
    assert record.detail["confirmation"]["verdict"] == "confirmed"
    assert record.detail["confirmation"]["tries"][0]["traceback"] == "Traceback ..."
    assert record.duration_s == 5.0
    assert "FAIL CONSISTENTLY in 3 new process(es)" in confirmation_line(record)


def test_the_first_disagreeing_run_makes_it_flaky_and_stops() -> None:
    first = _cell("fail", stage="run", error_type="RuntimeError", error="boom")
    run_again, calls = _runs("pass", "fail", "fail")
    record = confirm_cell(first, "pass", run_again, tries=3)
    assert len(calls) == 1
    assert record.outcome == "flaky" and record.detail["flaky_own_outcome"] == "fail"
    assert record.error == "boom"  # the evidence of the try that did not pass
    assert [attempt["outcome"] for attempt in record.detail["confirmation"]["tries"]] == ["fail", "pass"]
    assert confirmation_line(record).endswith("then pass in new processes with cold caches: flaky")


def test_a_newly_passing_cell_is_confirmed_too() -> None:
    run_again, _ = _runs("pass", "pass", "pass")
    assert confirm_cell(_cell("pass"), "fail", run_again, tries=3).detail["confirmation"]["verdict"] == "confirmed"


def test_only_cells_the_baseline_knows_and_disagrees_with_are_confirmed() -> None:
    cells = [_cell("fail", "a/raw/eager"), _cell("pass", "b/raw/eager"), _cell("fail", "c/raw/eager")]
    assert [cell.id for cell in changed_cells(cells, {"a/raw/eager": "pass", "b/raw/eager": "pass"})] == ["a/raw/eager"]
    seen: list[str] = []
    records = confirm_changes(cells, {"a/raw/eager": "pass"}, lambda cell: _cell("fail", cell.id), 2, report=seen.append)
    assert [record.id for record in records] == ["a/raw/eager"] and len(seen) == 1


def _write(path: Path, *cells: CellResult) -> None:
    writer = ResultsWriter(path, header_record({"torch": "2.13.0", "triton": "3.7.1", "tier": "cpu"}, "now", ["x"]))
    for cell in cells:
        writer.write_cell(cell)
    writer.close()


def test_a_confirmation_record_supersedes_the_run_s_record(tmp_path: Path) -> None:
    first = _cell("fail", error="boom")
    flaky = confirm_cell(first, "pass", _runs("pass")[0], tries=3)
    _write(tmp_path / "r.jsonl", first, flaky)
    results = read_results(tmp_path / "r.jsonl")
    assert [cell.outcome for cell in results.cells] == ["flaky"]
    changes = changes_against({"add/raw/compile": "pass"}, results)
    assert changes["regressions"] == [] and changes["flaky"] == ["add/raw/compile: pass -> fail, pass"]


def test_two_different_records_without_a_confirmation_are_still_refused(tmp_path: Path) -> None:
    _write(tmp_path / "r.jsonl", _cell("fail"), _cell("pass"))
    with pytest.raises(ResultsFileError, match="recorded twice with different results"):
        read_results(tmp_path / "r.jsonl")
    assert json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])["record"] == "header"
