"""harness.run.confirm: a changed cell is confirmed only when every new run agrees; one that disagrees is flaky."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from harness.report.compare.baseline import changes_against
from harness.report.markdown.footnotes import evidence_key
from harness.report.markdown.summary import render_summary
from harness.results import CellResult, ResultsFileError, ResultsWriter, header_record, read_results
from harness.run.confirm import changed_cells, confirm_cell, confirm_changes, confirmation_line, confirming_line


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


class _Concurrency:
    """A stand-in rerun that records how many tries ran at once, overall and per cell."""

    def __init__(self, outcome: str = "fail", hold_s: float = 0.05) -> None:
        self.outcome, self.hold_s = outcome, hold_s
        self.lock = threading.Lock()
        self.running: Counter[str] = Counter()
        self.most_at_once = self.most_per_cell = 0
        self.calls: list[str] = []

    def __call__(self, cell: CellResult) -> CellResult:
        with self.lock:
            self.calls.append(cell.id)
            self.running[cell.id] += 1
            self.most_at_once = max(self.most_at_once, sum(self.running.values()))
            self.most_per_cell = max(self.most_per_cell, self.running[cell.id])
        time.sleep(self.hold_s)
        with self.lock:
            self.running[cell.id] -= 1
        return _cell(self.outcome, cell.id, worker="confirm")


def _failing(count: int) -> tuple[list[CellResult], dict[str, str]]:
    cells = [_cell("fail", f"k{index}/raw/eager") for index in range(count)]
    return cells, {cell.id: "pass" for cell in cells}


def test_changed_cells_are_confirmed_as_many_at_once_as_there_are_workers() -> None:
    cells, expected = _failing(6)
    barrier = threading.Barrier(3, timeout=10)  # breaks unless three tries of different cells run at once

    def rerun(cell: CellResult) -> CellResult:
        barrier.wait()
        return _cell("fail", cell.id)

    records = confirm_changes(cells, expected, rerun, tries=2, workers=3)
    assert sorted(record.id for record in records) == [cell.id for cell in cells]
    assert all(record.detail["confirmation"]["verdict"] == "confirmed" for record in records)


def test_the_worker_count_bounds_the_tries_at_once_and_a_cell_s_tries_stay_one_after_another() -> None:
    cells, expected = _failing(5)
    rerun = _Concurrency()
    confirm_changes(cells, expected, rerun, tries=3, workers=2)
    assert rerun.most_at_once == 2 and rerun.most_per_cell == 1 and len(rerun.calls) == 15
    serial = _Concurrency()
    confirm_changes(cells, expected, serial, tries=3, workers=1)
    assert serial.most_at_once == 1


def test_a_flaky_cell_stops_at_its_first_disagreeing_try_when_confirmed_in_parallel() -> None:
    cells, expected = _failing(4)
    rerun = _Concurrency(outcome="pass")  # every new run passes: each cell flaky after one try
    records = confirm_changes(cells, expected, rerun, tries=3, workers=4)
    assert len(rerun.calls) == 4 and {record.outcome for record in records} == {"flaky"}


def test_above_the_sample_the_rest_are_recorded_unconfirmed_never_confirmed_nor_flaky(tmp_path: Path) -> None:
    cells, expected = _failing(5)
    rerun = _Concurrency()
    records = confirm_changes(cells, expected, rerun, tries=3, workers=2, sample=2)
    verdicts = Counter(record.detail["confirmation"]["verdict"] for record in records)
    assert verdicts == {"confirmed": 2, "unconfirmed": 3} and len(set(rerun.calls)) == 2
    unconfirmed = [record for record in records if record.detail["confirmation"]["verdict"] == "unconfirmed"]
    assert all(record.outcome == "fail" and not record.repeats for record in unconfirmed)
    why = unconfirmed[0].detail["confirmation"]["why"]
    assert "5 cells changed, more than --confirm-threshold 0; --confirm-sample 2 confirmed" in why
    assert "unconfirmed (not in the sample" in confirmation_line(unconfirmed[0])
    _write(tmp_path / "r.jsonl", *cells, *records)
    results = read_results(tmp_path / "r.jsonl")
    regressions = changes_against(expected, results)["regressions"]
    assert sum(line.endswith("(confirmed)") for line in regressions) == 2
    assert sum("(unconfirmed" in line for line in regressions) == 3
    summary = render_summary(results)
    assert "changed against the baseline: 5 cells; 2 confirmed, 3 unconfirmed" in summary
    assert all(f"- {record.id}" in summary for record in unconfirmed)


def test_the_run_says_what_it_confirms_and_what_it_samples() -> None:
    assert "confirming 3 cell(s)" in confirming_line(3, 3, 8, 2) and "2 at once" in confirming_line(3, 3, 8, 2)
    sampled = confirming_line(20, 3, 8, 2)
    assert "a sample of 8 of the 20" in sampled and "the other 12 are recorded as unconfirmed" in sampled
    assert "confirming 20 cell(s)" in confirming_line(20, 3, 0, 2)
    assert "confirming 20 cell(s)" in confirming_line(20, 3, 8, 2, threshold=20)
    assert "a sample of 8 of the 21" in confirming_line(21, 3, 8, 2, threshold=20)


def test_at_or_below_the_threshold_every_changed_cell_is_confirmed_whatever_the_sample() -> None:
    cells, expected = _failing(4)
    records = confirm_changes(cells, expected, _Concurrency(), tries=1, workers=2, sample=1, threshold=4)
    assert {record.detail["confirmation"]["verdict"] for record in records} == {"confirmed"} and len(records) == 4
    records = confirm_changes(cells, expected, _Concurrency(), tries=1, workers=2, sample=1, threshold=3)
    assert Counter(record.detail["confirmation"]["verdict"] for record in records) == {"confirmed": 1,
                                                                                       "unconfirmed": 3}


def test_the_report_s_footnote_says_a_failing_cell_s_change_is_unconfirmed() -> None:
    cells, expected = _failing(3)
    for cell in cells:
        cell.error = "boom"
    records = confirm_changes(cells, expected, _Concurrency(), tries=1, workers=1, sample=1)
    notes = {record.id: evidence_key(record)[3] for record in records}
    assert sum(note == "boom (a change against the baseline, unconfirmed: not in the --confirm-sample)"
               for note in notes.values()) == 2
    assert sum(note == "boom" for note in notes.values()) == 1  # the confirmed one: no note


def test_an_interrupt_starts_no_further_try_and_ends_the_running_ones() -> None:
    """Ctrl-C reaches only the main thread (here: the report of the first settled cell raises it); the other
    thread's try must end through `end_tries`, not wait out its time limit, and start no second try."""
    cells, expected = _failing(2)
    ended, slow_started = threading.Event(), threading.Event()
    tries: Counter[str] = Counter()

    def rerun(cell: CellResult) -> CellResult:
        tries[cell.id] += 1
        if cell.id == "k1/raw/eager":
            slow_started.set()
            ended.wait(timeout=60)  # a try that would run for a minute unless ended
        else:
            slow_started.wait(timeout=10)  # the other cell settles once the slow try is running
        return _cell("fail", cell.id)

    def interrupt(line: str) -> None:
        raise KeyboardInterrupt

    started = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        confirm_changes(cells, expected, rerun, tries=3, workers=2, report=interrupt, end_tries=ended.set)
    assert time.perf_counter() - started < 20
    assert tries["k1/raw/eager"] == 1
