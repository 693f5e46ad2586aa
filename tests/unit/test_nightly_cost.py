"""`harness nightly-cost`: a night on N runners from a measured run, its shards cut as `--shard I/N` cuts them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.nightly_cost import cells_at_a_time, shard_costs
from harness.results import CellResult, ResultsFile, read_results


def measured(tmp_path: Path) -> Path:
    """Two kernels x two pipelines x (native, raw) in two workers, a group's cells one after another in one worker:
    a/eager's two 6 s cells in one, the other three groups' 2 s cells in the other; 24 cell-seconds in 12 s."""
    cells, clocks = [], [0.0, 0.0]
    for kernel in ("a", "b"):
        for pipeline in ("eager", "compile"):
            worker = 0 if (kernel, pipeline) == ("a", "eager") else 1
            for style in ("native", "raw"):
                seconds = 6.0 if worker == 0 else 2.0
                cells.append(CellResult(id=f"{kernel}/{style}/{pipeline}", kernel=kernel, style=style, pipeline=pipeline,
                                        outcome="pass", duration_s=seconds, detail={"started_at": 1000 + clocks[worker]}))
                clocks[worker] += seconds
    header = {"record": "header", "schema": 1, "environment": {"tier": "gpu", "gpu": "NVIDIA H100", "cpu_count": 16,
                                                                "torch": "2.11.0+cu130", "triton": "3.6.0"}}
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *(c.to_record() for c in cells)]), encoding="utf-8")
    return path


def test_one_runner_is_the_measured_run_and_more_runners_split_it_down_to_the_heaviest_group(tmp_path: Path) -> None:
    results = read_results(measured(tmp_path))
    assert cells_at_a_time(results) == pytest.approx(2.0)
    (one,) = shard_costs(results, 1, startup_s=10)
    assert one.cell_seconds == 24 and one.wall_s == pytest.approx(10 + 12)  # the measured span, plus the start-up
    two = shard_costs(results, 2, startup_s=10)
    assert [cost.cell_seconds for cost in two] == [12, 12]  # a/eager alone, the three 4 s groups together
    assert [cost.wall_s for cost in two] == pytest.approx([10 + 12, 10 + 6])  # one worker runs a/eager's cells in turn
    assert two[0].heaviest_group == "a/eager" and two[1].heaviest_group_s == 4
    assert max(cost.wall_s for cost in shard_costs(results, 4, startup_s=10)) == pytest.approx(22)


def test_the_command_prints_one_row_per_runner_count(tmp_path: Path, capsys) -> None:
    path = measured(tmp_path)
    assert main(["nightly-cost", str(path), "--runners", "1,2", "--builds", "2", "--startup-s", "10"]) == 0
    out = capsys.readouterr().out
    rows = [[part.strip() for part in line.split("|")[1:6]] for line in out.splitlines() if line[:4] in ("| 1 ", "| 2 ")]
    assert rows == [["1", "24", "0.4 min", "0.7 min", "0.01 h"], ["2", "12", "0.4 min", "0.7 min", "0.02 h"]]
    assert "NVIDIA H100 (16 cores)" in out and "`a/eager` (12 cell-seconds" in out


@pytest.mark.parametrize("argv", [["--runners", "0"], ["--runners", "x"], ["--builds", "0"]])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, argv: list[str]) -> None:
    assert main(["nightly-cost", str(measured(tmp_path)), "--startup-s", "1", *argv]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_a_run_without_start_times_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    path = tmp_path / "old.jsonl"
    results = ResultsFile(header={"record": "header", "schema": 1, "environment": {"tier": "gpu"}},
                          cells=[CellResult(id="a/raw/eager", kernel="a", style="raw", pipeline="eager", outcome="pass",
                                            duration_s=1.0)])
    path.write_text("".join(json.dumps(r) + "\n" for r in [results.header, results.cells[0].to_record()]), encoding="utf-8")
    assert main(["nightly-cost", str(path), "--startup-s", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "started_at" in err and str(path) in err
