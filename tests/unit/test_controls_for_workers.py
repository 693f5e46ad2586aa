"""A worker that got the rest of a group whose control ran in a worker that died judges it by the control recorded
in the results file, and runs the control again only where none is recorded (harness.plugin.pytest_plugin.
judge_by_control, harness.results.recorded_cell)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from harness.plugin import pytest_plugin
from harness.results import CellResult, recorded_cell
from harness.run.selection import Cell


def _result(style: str, outcome: str, **fields) -> CellResult:
    return CellResult(id=f"add/{style}/aoti", kernel="add", style=style, pipeline="aoti", outcome=outcome, **fields)


def _results_file(path, *cells: CellResult, torn: str = "") -> str:
    lines = [json.dumps({"record": "header", "schema": 1})] + [json.dumps(cell.to_record()) for cell in cells]
    path.write_text("\n".join(lines) + "\n" + torn)
    return str(path)


def _state(results_file: str | None) -> SimpleNamespace:
    return SimpleNamespace(controls={}, isolation="worker", tier="cpu", kernels_from=[], worker="gw3", cold_cache=False,
                           share_artifacts=True, timeout_s=60.0, repeat=1, results_file=results_file)


def test_the_last_record_of_a_cell_is_found_and_a_torn_line_is_not_read(tmp_path):
    first = _result("native", "fail", stage="load", error_type="RuntimeError", error="first")
    later = _result("native", "fail", stage="load", error_type="RuntimeError", error="confirmed")
    other = CellResult(id="add/native/aot", kernel="add", style="native", pipeline="aot", outcome="pass")
    path = _results_file(tmp_path / "r.jsonl", first, other, later, torn='{"record": "cell", "id": "add/native/aoti"')
    assert recorded_cell(path, "add/native/aoti").error == "confirmed"
    assert recorded_cell(path, "add/native") is None  # a prefix of an id is not the cell
    assert recorded_cell(tmp_path / "missing.jsonl", "add/native/aoti") is None


def test_a_style_is_judged_by_the_recorded_control_without_running_it_again(monkeypatch, tmp_path):
    monkeypatch.setattr(pytest_plugin, "run_isolated", lambda *args: pytest.fail("the control ran again"))
    control = _result("native", "fail", stage="load", error_type="RuntimeError", error="no loader")
    state = _state(_results_file(tmp_path / "r.jsonl", control))
    result = _result("raw", "fail", stage="load", error_type="RuntimeError", error="no loader")
    pytest_plugin.judge_by_control(state, Cell("add", "raw", "aoti"), result)
    assert result.outcome == "env" and result.control["error"] == "no loader"
    assert state.controls[("add", "aoti")].outcome == "fail"  # read once for the rest of the group


@pytest.mark.parametrize("recorded", [False, True])
def test_without_a_recorded_control_it_runs_again_in_a_process_of_its_own(monkeypatch, tmp_path, recorded):
    asked = []

    def run_isolated(request, timeout_s, isolation):
        asked.append((request.style, isolation))
        return _result("native", "pass")

    monkeypatch.setattr(pytest_plugin, "run_isolated", run_isolated)
    other = CellResult(id="sin/native/aoti", kernel="sin", style="native", pipeline="aoti", outcome="fail")
    state = _state(_results_file(tmp_path / "r.jsonl", other) if recorded else None)
    result = _result("raw", "fail", stage="load", error_type="RuntimeError", error="no loader")
    pytest_plugin.judge_by_control(state, Cell("add", "raw", "aoti"), result)
    assert asked == [("native", "forked")] and result.outcome == "fail"
