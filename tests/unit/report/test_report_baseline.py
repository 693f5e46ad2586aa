"""Baselines: one JSON file of expected outcomes per torch/triton/tier."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_helpers import cell, environment, results

from harness.report.__main__ import main
from harness.report.compare.baseline import (
    BaselineError,
    baseline_name,
    load_baseline,
    write_baseline,
)


def test_names_keep_versions_whole_but_filename_safe() -> None:
    assert baseline_name(environment()) == "2.11.0+cu130-3.5.0-gpu.json"
    assert baseline_name(environment(tier="cpu", torch="2.6.0a0+git1234")) == "2.6.0a0+git1234-3.5.0-cpu.json"
    assert baseline_name({"torch": "2.7 (my/build)", "triton": "../x"}) == "2.7__my_build_-_x-unknown.json"
    assert baseline_name({"interpreter": True}) == "unknown-unknown-cpu.json"


def test_round_trip(tmp_path: Path) -> None:
    run = results([cell("k", "raw", "eager"), cell("k", "raw", "cudagraphs", "skip"), cell("k", "raw", "eager", "fail")])
    path = write_baseline(run, tmp_path / "expected", source="results/gpu.jsonl")
    assert path == tmp_path / "expected" / "2.11.0+cu130-3.5.0-gpu.json"
    record = json.loads(path.read_text())
    assert record["source"] == "results/gpu.jsonl" and record["environment"] == environment()
    assert load_baseline(tmp_path / "expected", environment()) == {"k/raw/eager": "fail", "k/raw/cudagraphs": "skip"}
    assert path.read_text() == json.dumps(record, sort_keys=True, indent=2) + "\n"
    assert load_baseline(tmp_path / "expected", environment(torch="2.5.1")) is None


def test_a_corrupt_baseline_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / baseline_name(environment())).write_text('{"cells": ["not", "a", "mapping"]}')
    with pytest.raises(BaselineError, match="2.11.0"):
        load_baseline(tmp_path, environment())


def test_cli_writes_into_dir(make_results, tmp_path: Path, capsys) -> None:
    run = make_results("r.jsonl", [cell("k", "raw", "eager")], environment(tier="cpu"))
    assert main(["baseline", str(run), "--dir", str(tmp_path / "exp")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "exp" / "2.11.0+cu130-3.5.0-cpu.json")
