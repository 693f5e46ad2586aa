"""`perf --processes K`: every measurement in K fresh processes, in rounds, combined into one record; perf-diff
flags only growth beyond the spread between processes; perf-join keeps each kernel and mode from one run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.perf import runner
from harness.perf.combine import combine, combine_sizes
from harness.perf.performance import render_performance
from harness.perf.performance_diff import overhead_growth, render_growth
from harness.perf.plan import PerfJob
from harness.perf.stats import StopRule
from harness.perf_results import PERF_SCHEMA, PerfRecord, join_perf_files, read_perf_results

H100 = {"tier": "gpu", "gpu": "NVIDIA H100 80GB HBM3", "torch": "2.11.0", "triton": "3.6.0", "interpreter": False}


def stats(us: float, medians: list[float] | None = None) -> dict:
    s = us / 1e6
    made = {"median_s": s, "ci_low_s": 0.98 * s, "ci_high_s": 1.02 * s, "q1_s": 0.99 * s, "q3_s": 1.01 * s, "n": 40,
            "stop": "ci", "converged": True}
    if medians:
        made["process_medians_s"] = [m / 1e6 for m in medians]
    return made


def timed(kernel, style, mode, size, host_us, processes=None, device_us=None, first=0.5) -> PerfRecord:
    return PerfRecord(kernel=kernel, style=style, mode=mode, size=size, outcome="pass", host=stats(host_us, processes),
                      device=stats(device_us) if device_us else None, first_call_s=first, dtype="float32")


def write(path: Path, records: list[PerfRecord], environment=H100, started="2026-11-25T10:00:00+00:00") -> Path:
    header = {"record": "header", "perf_schema": PERF_SCHEMA, "environment": environment, "command": ["perf"],
              "started": started, "method": {"rule": {"rel_ci": 0.05}, "warmup_calls": 10, "batch_ms": 1.0}}
    path.write_text("\n".join([json.dumps(header)] + [json.dumps(r.to_record()) for r in records]) + "\n")
    return path


def test_combine_keeps_the_median_process_and_every_processs_median_in_round_order():
    per_process = [timed("add", "raw", "eager", 1000, us, device_us=us / 5, first=first)
                   for us, first in ((42.0, 3.0), (104.0, 1.0), (66.0, 2.0))]
    record = combine(per_process)
    assert record.host["median_s"] == pytest.approx(66e-6)  # the median process's own statistics
    assert record.host["process_medians_s"] == pytest.approx([42e-6, 104e-6, 66e-6])
    assert record.device["process_medians_s"] == pytest.approx([8.4e-6, 20.8e-6, 13.2e-6])
    assert record.first_call_s == 2.0 and record.detail["processes"] == 3


def test_a_process_that_did_not_time_makes_the_record_its_evidence():
    crashed = PerfRecord(kernel="add", style="raw", mode="eager", size=1000, outcome="crash", stage="run",
                         error_type="WorkerProcess", error="the worker process ended with signal 11")
    record = combine([timed("add", "raw", "eager", 1000, 20.0), crashed])
    assert (record.outcome, record.error) == ("crash", "the worker process ended with signal 11")
    assert record.detail["process_outcomes"] == ["pass", "crash"]


def test_a_size_a_process_never_reached_is_combined_from_those_that_did():
    first = [timed("add", "raw", "eager", 1000, 20.0), timed("add", "raw", "eager", 4096, 30.0)]
    second = [timed("add", "raw", "eager", 1000, 22.0)]
    combined = combine_sizes([first, second])
    assert [r.size for r in combined] == [1000, 4096]
    assert combined[0].host["process_medians_s"] == pytest.approx([20e-6, 22e-6])
    assert "process_medians_s" not in combined[1].host


def test_processes_run_in_rounds_over_the_styles_and_a_failed_job_is_not_asked_again(monkeypatch, tmp_path):
    asked: list[tuple[str, str]] = []

    def fake_run_job(job, settings, workdir):
        asked.append((job.style, workdir.name.rsplit("-", 1)[1]))
        if job.style == "custom_op":
            return [PerfRecord(kernel=job.kernel, style=job.style, mode=job.mode, size=1000, outcome="timeout")]
        return [timed(job.kernel, job.style, job.mode, 1000, 10.0 + len(asked))]

    monkeypatch.setattr(runner, "run_job", fake_run_job)
    monkeypatch.setattr(runner.tempfile, "mkdtemp", lambda prefix: str(tmp_path))
    jobs = [PerfJob("add", style, "eager", (1000,)) for style in ("native", "raw", "custom_op")]
    settings = runner.WorkerSettings(tier="gpu", kernels_from=(), rule=StopRule(), warmup=1, batch_s=0.001,
                                     timeout_s=10)
    written: list[PerfRecord] = []
    runner.run_jobs(jobs, settings, written.append, progress=lambda line: None, processes=2)
    assert asked == [("native", "p1"), ("raw", "p1"), ("custom_op", "p1"), ("native", "p2"), ("raw", "p2")]
    by_style = {record.style: record for record in written}
    assert by_style["native"].host["process_medians_s"] == pytest.approx([11e-6, 14e-6])
    assert by_style["raw"].host["process_medians_s"] == pytest.approx([12e-6, 15e-6])
    assert by_style["custom_op"].outcome == "timeout"


def _run(raw_by_process: list[float], native_by_process: list[float]) -> list[PerfRecord]:
    middle = sorted(range(len(raw_by_process)), key=raw_by_process.__getitem__)[(len(raw_by_process) - 1) // 2]
    native_middle = sorted(range(len(native_by_process)), key=native_by_process.__getitem__)[(len(native_by_process) - 1) // 2]
    return [timed("add", "native", "eager", 1000, native_by_process[native_middle], native_by_process),
            timed("add", "raw", "eager", 1000, raw_by_process[middle], raw_by_process)]


def test_growth_within_the_spread_between_processes_is_not_flagged(tmp_path):
    baseline = read_perf_results(write(tmp_path / "base.jsonl", _run([20.0, 30.0, 40.0], [10.0, 10.0, 10.0])))
    noisy = read_perf_results(write(tmp_path / "noisy.jsonl", _run([25.0, 38.0, 45.0], [10.0, 10.0, 10.0])))
    [row] = overhead_growth(baseline, noisy)
    assert row.growth == pytest.approx(38 / 30 - 1) and row.beyond_noise is False and not row.flagged(0.2)
    text = render_growth([row], 0.2, "base", "noisy")
    assert "0 grew by more than 20% beyond the spread between processes (1 more grew that much within it" in text
    assert "2.00-4.00x" in text and "2.50-4.50x" in text


def test_growth_beyond_every_baseline_process_is_flagged_and_fails_perf_diff(tmp_path):
    base = write(tmp_path / "base.jsonl", _run([20.0, 22.0, 21.0], [10.0, 10.0, 10.0]))
    grown = write(tmp_path / "grown.jsonl", _run([30.0, 29.0, 31.0], [10.0, 10.0, 10.0]))
    [row] = overhead_growth(read_perf_results(base), read_perf_results(grown))
    assert row.beyond_noise is True and row.flagged(0.2)
    assert main(["perf-diff", str(base), str(grown), "-o", str(tmp_path / "diff.md")]) == 1
    assert "| **grew** | add" in (tmp_path / "diff.md").read_text()


def test_process_i_of_a_style_is_divided_by_process_i_of_native(tmp_path):
    """A slow round slows every style alike: paired ratios stay put where the medians' ratio would not."""
    perf = read_perf_results(write(tmp_path / "perf.jsonl", _run([20.0, 40.0, 24.0], [10.0, 20.0, 10.0])))
    row = [cell.strip() for cell in next(line for line in render_performance(perf).splitlines()
                                         if line.startswith("| raw")).strip("|").split("|")]
    assert row[3] == "24.0" and row[10] == "2x"  # pairs 2.0, 2.0, 2.4: median 2; the medians' ratio would be 2.4
    assert row[12] == "20.0 / 40.0 / 24.0"


def test_perf_join_takes_each_kernel_and_mode_whole_from_the_last_run_that_has_it(tmp_path, capsys):
    first = write(tmp_path / "first.jsonl", [timed("add", "native", "eager", 1000, 8.0),
                                             timed("add", "raw", "eager", 1000, 20.0),
                                             timed("add", "native", "aoti", 1000, 30.0)])
    second = write(tmp_path / "second.jsonl", [timed("add", "native", "eager", 1000, 9.0)],
                   started="2026-11-25T11:00:00+00:00")
    out = tmp_path / "joined.jsonl"
    assert main(["perf-join", str(first), str(second), "-o", str(out)]) == 0
    joined = read_perf_results(out)
    kept = {(r.style, r.mode): (r.host["median_s"], r.run) for r in joined.records}
    assert kept == {("native", "eager"): (pytest.approx(9e-6), 1), ("native", "aoti"): (pytest.approx(30e-6), 0)}
    assert [run["kernel_modes"] for run in joined.header["joined_from"]] == [["add/aoti"], ["add/eager"]]
    assert f"{first}: add/aoti" in capsys.readouterr().out


def test_perf_join_refuses_another_machine_with_one_line(tmp_path, capsys):
    first = write(tmp_path / "first.jsonl", [timed("add", "native", "eager", 1000, 8.0)])
    other = write(tmp_path / "other.jsonl", [timed("add", "native", "eager", 1000, 8.0)], {**H100, "gpu": "NVIDIA A100"})
    assert main(["perf-join", str(first), str(other), "-o", str(tmp_path / "joined.jsonl")]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and not (tmp_path / "joined.jsonl").exists()
    with pytest.raises(Exception, match="not one machine's numbers"):
        join_perf_files([first, other])


def test_the_kernel_against_compile_is_not_compared_across_two_runs(tmp_path):
    eager = write(tmp_path / "eager.jsonl", [timed("add", "raw", "eager", 1000, 20.0, device_us=4.0)])
    compiled = write(tmp_path / "compile.jsonl", [timed("add", "native", "compile", 1000, 80.0, device_us=3.0)])
    joined = join_perf_files([eager, compiled])
    assert "timed in different runs of a joined file" in render_performance(joined)


def test_a_perf_file_cut_mid_line_by_a_killed_run_keeps_its_whole_records(tmp_path, capsys):
    path = write(tmp_path / "perf.jsonl", [timed("add", "native", "eager", 1000, 8.0),
                                           timed("add", "raw", "eager", 1000, 20.0)])
    path.write_text(path.read_text() + '{"record": "perf", "kernel": "add", "sty')  # killed while writing a third
    perf = read_perf_results(path)
    assert perf.dropped_torn_line and [r.style for r in perf.records] == ["native", "raw"]
    assert main(["perf-report", str(path), "-o", str(tmp_path / "performance.md")]) == 0
    assert "the last line is torn" in capsys.readouterr().err
    assert "ended in a torn line" in (tmp_path / "performance.md").read_text()
