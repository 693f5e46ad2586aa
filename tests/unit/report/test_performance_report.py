"""The performance report and perf-diff, from small synthetic perf files: read like what a user is told."""

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.perf.performance import render_performance
from harness.perf.performance_diff import overhead_growth, render_growth
from harness.perf_results import PERF_SCHEMA, PerfFileError, PerfRecord, read_perf_results

H100 = {"tier": "gpu", "gpu": "NVIDIA H100 80GB HBM3", "torch": "2.11.0", "triton": "3.5.0", "interpreter": False}


def timed(kernel, style, mode, size, host_us, device_us=None, **extra):
    def stats(us):
        s = us / 1e6
        return {"median_s": s, "ci_low_s": 0.98 * s, "ci_high_s": 1.02 * s, "q1_s": 0.99 * s, "q3_s": 1.01 * s,
                "n": 40, "stop": "ci", "converged": True}

    return PerfRecord(kernel=kernel, style=style, mode=mode, size=size, outcome="pass", host=stats(host_us),
                      device=stats(device_us) if device_us else None, first_call_s=0.5,
                      profiler={"median_s": 1.1 * host_us / 1e6, "ratio_to_wall": 1.1}, dtype="float32", **extra)


def write_perf(path: Path, records, environment=H100) -> Path:
    header = {"record": "header", "perf_schema": PERF_SCHEMA, "environment": environment, "command": ["perf"],
              "method": {"rule": {"rel_ci": 0.05, "min_samples": 10, "max_samples": 200, "max_seconds": 5},
                         "warmup_calls": 10, "batch_ms": 1.0}}
    lines = [json.dumps(header)] + [json.dumps(record.to_record()) for record in records]
    path.write_text("\n".join(lines) + "\n")
    return path


ADD_BYTES = 3 * 4 * (1 << 24)  # x, y and out, fp32, 16 M elements


def add_run(custom_op_eager_us=60.0):
    return [
        timed("add", "native", "eager", 1024, 8.0, 4.0),
        timed("add", "raw", "eager", 1024, 27.0, 3.0),
        timed("add", "custom_op", "eager", 1024, custom_op_eager_us, 3.0),
        timed("add", "native", "compile", 1024, 80.0, 2.5),
        PerfRecord(kernel="add", style="raw", mode="compile", size=1024, outcome="fail", stage="trace",
                   error_type="TorchRuntimeError", error="RuntimeError when making fake tensor call"),
        timed("add", "native", "eager", 1 << 24, 60.0, 60.0),
        timed("add", "raw", "eager", 1 << 24, 60.0, 60.0, bytes_moved=ADD_BYTES, flops=1 << 24),
        timed("add", "native", "compile", 1 << 24, 60.0, 66.0, bytes_moved=ADD_BYTES, flops=1 << 24),
    ]


def test_a_style_is_shown_against_native_and_raw_from_the_same_run(tmp_path):
    text = render_performance(read_perf_results(write_perf(tmp_path / "perf.jsonl", add_run())))
    custom_op_row = next(line for line in text.splitlines() if line.startswith("| custom_op | eager"))
    assert "7.5x" in custom_op_row  # 60 / 8 over native
    assert "2.22x" in custom_op_row  # 60 / 27 over raw


def test_a_cell_the_matrix_failed_shows_its_outcome_and_no_time(tmp_path):
    text = render_performance(read_perf_results(write_perf(tmp_path / "perf.jsonl", add_run())))
    row = next(line for line in text.splitlines() if line.startswith("| raw       | compile"))
    assert "not timed: fail (trace: TorchRuntimeError: RuntimeError when making fake tensor call)" in row
    assert "µs" not in row and "x" not in row.split("|")[5]


def test_the_kernel_is_compared_with_torch_compile_of_the_reference_on_device_time(tmp_path):
    text = render_performance(read_perf_results(write_perf(tmp_path / "perf.jsonl", add_run())))
    assert "torch.compile(reference) is 1.2x faster" in text  # 3.0 us against 2.5 us at 1024
    assert "the Triton kernel is 1.1x faster" in text  # 60 us against 66 us at 16 M


def test_bandwidth_is_against_the_named_gpus_peak(tmp_path):
    text = render_performance(read_perf_results(write_perf(tmp_path / "perf.jsonl", add_run())))
    row = next(line for line in text.splitlines() if line.startswith("| add      | 16777216 | raw / eager"))
    assert "3,355" in row and "100%" in row  # 201 MB in 60 us on a 3.35 TB/s H100 SXM
    assert "H100 SXM (HBM3), 3.35 TB/s" in text


def test_a_cpu_tier_file_says_its_times_are_the_interpreters(tmp_path):
    cpu = {"tier": "cpu", "gpu": None, "interpreter": True, "torch": "2.13.0+cpu", "triton": "3.7.1"}
    perf = read_perf_results(write_perf(tmp_path / "perf.jsonl", [timed("add", "raw", "eager", 64, 900.0)], cpu))
    text = render_performance(perf)
    assert "Interpreter times." in text and "no device times" in text.lower()


def test_perf_report_writes_markdown_and_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    source = write_perf(tmp_path / "perf.jsonl", add_run())
    output, png = tmp_path / "out" / "performance.md", tmp_path / "out" / "performance.png"
    assert main(["perf-report", str(source), "-o", str(output), "--png", str(png)]) == 0
    assert png.read_bytes().startswith(b"\x89PNG")
    assert "](performance.png)" in output.read_text()


def test_perf_diff_flags_a_growth_above_20_percent_and_not_one_of_10(tmp_path):
    baseline = read_perf_results(write_perf(tmp_path / "base.jsonl", add_run(custom_op_eager_us=60.0)))
    slightly = read_perf_results(write_perf(tmp_path / "slight.jsonl", add_run(custom_op_eager_us=66.0)))
    much = read_perf_results(write_perf(tmp_path / "much.jsonl", add_run(custom_op_eager_us=78.0)))
    growth = {(r.style, r.mode, r.size): r.growth for r in overhead_growth(baseline, slightly)}
    assert growth[("custom_op", "eager", 1024)] == pytest.approx(0.10)
    assert "0 grew by more than 20%" in render_growth(overhead_growth(baseline, slightly), 0.2, "base", "slight")
    text = render_growth(overhead_growth(baseline, much), 0.2, "base", "much")
    assert "1 grew by more than 20%" in text and "| **grew** | add" in text and "+30%" in text


def test_perf_diff_reports_the_run_to_run_change_of_the_medians(tmp_path):
    from harness.perf.performance_diff import run_to_run_changes

    baseline = read_perf_results(write_perf(tmp_path / "base.jsonl", add_run(custom_op_eager_us=60.0)))
    again = read_perf_results(write_perf(tmp_path / "again.jsonl", add_run(custom_op_eager_us=66.0)))
    rows = {row[0]: row for row in run_to_run_changes(baseline, again)}
    assert rows["host time, launch-bound size"][1:] == ["4", "0.0%", "10.0%"]  # 4 timed cells; custom_op moved 10%
    assert rows["device time, large size"][1:] == ["3", "0.0%", "0.0%"]


def test_perf_diff_exits_1_on_a_flag_and_appends_to_the_job_summary(tmp_path, monkeypatch):
    base = write_perf(tmp_path / "base.jsonl", add_run(custom_op_eager_us=60.0))
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    same = write_perf(tmp_path / "same.jsonl", add_run(custom_op_eager_us=62.0))
    assert main(["perf-diff", str(base), str(same), "--summary", "-o", str(tmp_path / "d1.md")]) == 0
    grown = write_perf(tmp_path / "grown.jsonl", add_run(custom_op_eager_us=90.0))
    assert main(["perf-diff", str(base), str(grown), "--summary", "-o", str(tmp_path / "d2.md")]) == 1
    assert summary.read_text().count("## Performance: overhead over native") == 2


def test_a_matrix_results_file_is_refused_as_perf_results_with_one_line(tmp_path, capsys):
    matrix = tmp_path / "results.jsonl"
    matrix.write_text(json.dumps({"record": "header", "schema": 1, "environment": {}}) + "\n")
    with pytest.raises(PerfFileError, match="not a perf results header"):
        read_perf_results(matrix)
    assert main(["perf-report", str(matrix)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
