"""`python -m harness bench`: the table's ratios and outcome check, its refusals. The real bench (both isolation modes,
each run's results and the table's row) is test_worker_start.py's end-to-end test, which runs one."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import pytest
from harness_commands import harness_command
from zygote_helpers import table_rows

from harness.bench import BenchRun, differences, render_bench

REPO = Path(__file__).resolve().parents[2]
ENVIRONMENT = {"cpu_count": 16, "gpu": "NVIDIA H100 80GB HBM3", "gpu_count": 1, "tier": "gpu", "torch": "2.11.0+cu130",
               "triton": "3.6.0", "python": "3.12.3"}
CONTEXT = {"environment": ENVIRONMENT, "cells": 3, "kernels": ["add"], "styles": ["native", "raw"],
           "pipelines": ["eager", "compile"], "load_at_start": 0.5, "date": "2026-11-22 21:00"}
OUTCOMES = {"add/native/eager": "pass", "add/raw/eager": "pass", "add/raw/compile": "fail"}


def _run(mode: str, workers: str, wall: float, cpu: float, outcomes: dict[str, str] | None = None) -> BenchRun:
    outcomes = dict(OUTCOMES if outcomes is None else outcomes)
    return BenchRun(mode, workers, Path(f"{mode}-n{workers}.jsonl"), wall, cpu, 0, outcomes)


def test_speed_ups_are_against_process_per_cell_at_the_same_worker_count():
    runs = [_run("process", "1", 100.0, 80.0), _run("worker", "1", 40.0, 20.0),
            _run("process", "2", 60.0, 90.0), _run("worker", "2", 20.0, 30.0)]
    rows = table_rows(render_bench(runs, CONTEXT))
    assert rows[("worker", "1")][5:7] == ["2.50x", "4.00x"]
    assert rows[("worker", "2")][5:7] == ["3.00x", "3.00x"]
    assert rows[("process", "2")][5:8] == ["1.00x", "1.00x", "identical"]


def test_differing_outcomes_are_named_and_missing_cells_count():
    changed = dict(OUTCOMES, **{"add/raw/compile": "pass"})
    del changed["add/native/eager"]
    worker = _run("worker", "1", 10.0, 10.0, changed)
    process = _run("process", "1", 50.0, 50.0)
    assert differences(worker, process) == ["add/native/eager (process: pass, here: missing)",
                                           "add/raw/compile (process: fail, here: pass)"]
    row = table_rows(render_bench([process, worker], CONTEXT))[("worker", "1")]
    assert row[7].startswith("2 differ: add/native/eager (process: pass, here: missing)")


def test_without_a_process_run_or_results_nothing_is_claimed():
    rows = table_rows(render_bench([_run("worker", "1", 10.0, 5.0), _run("worker", "2", 10.0, 5.0, {})], CONTEXT))
    assert rows[("worker", "1")][5:8] == ["n/a", "n/a", "n/a (no process run)"]
    assert rows[("worker", "2")][7] == "no results (exit 0)"


def test_the_table_names_the_machine_and_the_cells():
    table = render_bench([_run("process", "1", 1.0, 1.0)], CONTEXT)
    assert "16 CPU cores, GPU: NVIDIA H100 80GB HBM3 x1; tier gpu, torch 2.11.0+cu130, triton 3.6.0" in table
    assert "Cells: 3 (add x native, raw x eager, compile)" in table


def test_a_sharded_bench_says_which_shard_and_how_it_was_balanced():
    def table(**context: object) -> str:
        return render_bench([_run("process", "1", 1.0, 1.0)], {**CONTEXT, **context})

    assert "shard" not in table()
    assert "(add x native, raw x eager, compile), shard 1/2 of them (`--shard`: whole kernel-pipeline groups, round robin);" \
        in table(shard="1/2")
    assert ", shard 2/2 of them (`--shard`: whole kernel-pipeline groups, balanced by the durations in `last.jsonl`);" \
        in table(shard="2/2", durations_from="last.jsonl")


def test_every_run_of_a_sharded_bench_asks_the_same_shard(monkeypatch, tmp_path):
    from harness import bench

    commands, real_run = [], subprocess.run

    def fake_run(command, **kwargs):
        if command[1:3] != ["-m", "harness"]:  # describe() asks platform, which runs uname
            return real_run(command, **kwargs)
        commands.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(bench.subprocess, "run", fake_run)
    parser = argparse.ArgumentParser()
    bench.add_bench_parser(parser.add_subparsers())
    args = parser.parse_args(["bench", "--tier", "cpu", "-k", "add,sin", "-s", "native", "-p", "eager", "--shard", "2/2",
                              "--modes", "process,worker", "--out-dir", str(tmp_path)])
    assert bench.command_bench(args) == 1  # the fake runs wrote no results
    assert [command[command.index("--shard") + 1] for command in commands] == ["2/2", "2/2"]
    assert "Cells: 1 (add, sin x native x eager), shard 2/2 of them (`--shard`" in (tmp_path / "bench.md").read_text()


def test_the_table_says_when_runs_started_the_longest_groups_first():
    ordered = render_bench([_run("process", "1", 1.0, 1.0)], {**CONTEXT, "durations_from": "last.jsonl"})
    assert "every run starts the longest groups first, by the durations in `last.jsonl`" in ordered


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return harness_command(args, timeout=300)


@pytest.mark.parametrize("args, message", [
    (["--modes", "worker,thread"], "error: --modes: unknown isolation mode 'thread'; valid modes: worker, process"),
    (["--workers", "1,zero"], "error: --workers '1,zero': give worker counts >= 1, comma-separated (e.g. 1,2)"),
    (["-p", "eagre"], "error: unknown pipeline 'eagre'"),
    (["--durations-from", "/no/such.jsonl"], "error: --durations-from: /no/such.jsonl"),
    (["--shard", "3/2"], "error: --shard '3/2': I must be between 1 and N"),
    (["-p", "eager", "--shard", "2/2"], "error: --shard 2/2: no cells in this shard of the selection"),
])
def test_bad_options_get_one_line_and_exit_2(tmp_path, args, message):
    completed = harness("bench", "--tier", "cpu", "--out-dir", str(tmp_path), *args)
    assert completed.returncode == 2 and completed.stderr.startswith(message), completed.stderr
    assert list(tmp_path.iterdir()) == []  # nothing ran


def test_an_existing_table_is_not_overwritten(tmp_path):
    table = tmp_path / "bench.md"
    table.write_text("earlier figures\n")
    completed = harness("bench", "--tier", "cpu", "--out-dir", str(tmp_path / "runs"), "-o", str(table))
    assert completed.returncode == 2 and "bench.md: exists; pass --overwrite" in completed.stderr
    assert table.read_text() == "earlier figures\n" and not (tmp_path / "runs").exists()


def test_gpu_counts_add_a_column_and_the_scaling_from_each_modes_first_row():
    def run(mode: str, workers: str, gpus: int, wall: float) -> BenchRun:
        return BenchRun(mode, workers, Path(f"{mode}-n{workers}-g{gpus}.jsonl"), wall, wall, 0, dict(OUTCOMES), gpus)

    runs = [run("process", "16", 1, 100.0), run("worker", "16", 1, 50.0),
            run("process", "32", 2, 55.0), run("worker", "32", 2, 28.0)]
    table = render_bench(runs, CONTEXT)
    header = next(line for line in table.splitlines() if line.startswith("| isolation"))
    assert [cell.strip() for cell in header.strip("|").split("|")][:4] == ["isolation", "workers", "GPUs",
                                                                          "wall vs its mode's first row"]
    rows = {(cells[0], cells[1], cells[2]): cells for cells in
            ([cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines() if line.startswith("| w")
             or line.startswith("| p"))}
    assert rows[("worker", "32", "2")][3] == "1.79x"  # 50 s on 1 GPU and 16 workers -> 28 s on 2 GPUs and 32 workers
    assert rows[("worker", "32", "2")][7] == "1.96x"  # against process at the same workers and GPUs (55 s), not 100 s
    assert rows[("process", "16", "1")][3] == "1.00x"


def test_each_run_sees_only_its_first_gpus(monkeypatch, tmp_path):
    from harness import bench

    seen = []

    def fake_run(command, **kwargs):
        seen.append((kwargs.get("env") or {}).get("CUDA_VISIBLE_DEVICES"))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(bench.subprocess, "run", fake_run)
    bench.run_once("worker", "2", tmp_path / "a.jsonl", [], ["3", "5"])
    bench.run_once("worker", "2", tmp_path / "b.jsonl", [])
    assert seen == ["3,5", None]


@pytest.mark.parametrize("gpus, message", [
    ("1", "error: --gpus 1: this run sees 0 GPU(s) (tier cpu)"),
    ("1,two", "error: --gpus '1,two': give GPU counts >= 1, comma-separated (e.g. 1,2)"),
])
def test_gpu_counts_the_machine_cannot_give_are_refused(tmp_path, gpus, message):
    completed = harness("bench", "--tier", "cpu", "--gpus", gpus, "--out-dir", str(tmp_path / "runs"))
    assert completed.returncode == 2 and completed.stderr.startswith(message), completed.stderr
    assert not (tmp_path / "runs").exists()
