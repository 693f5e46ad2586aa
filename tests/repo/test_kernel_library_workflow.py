"""The reusable kernel-library workflow's own shell steps, run here as GitHub would run them.

actionlint checks the workflow's types and scripts; this runs them: the matrix on the one-kernel
plug-in of this repository's CI, the chart into the job summary, the diff against the committed
baseline, and the final gate, once as committed (passes) and once against a baseline in which a
cell that now fails had passed (the gate must fail). The steps are read from the YAML as text.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.vocab import STYLES

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "kernel-library.yml"
BASELINE = "tests/fixtures/kernel_library/baseline-cpu-torch{torch}.jsonl"
pytestmark = pytest.mark.slow


def step_script(name_prefix: str) -> str:
    """The `run: |` block of the step whose name starts with `name_prefix`, dedented."""
    text = WORKFLOW.read_text(encoding="utf-8")
    match = re.search(rf"- name: {re.escape(name_prefix)}.*?\n(\s+)run: \|\n(.*?)(?=\n\s*- (?:name|uses):|\Z)", text,
                      re.DOTALL)
    assert match, f"no step {name_prefix!r} with a run block"
    lines = match.group(2).splitlines()
    indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return "\n".join(line[indent:] for line in lines) + "\n"


def run_step(name_prefix: str, environment: dict[str, str]) -> subprocess.CompletedProcess:
    script = step_script(name_prefix).replace("python -m", f"{sys.executable} -m").replace(
        "python -c", f"{sys.executable} -c")
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=REPO,
                          env=environment, capture_output=True, text=True, timeout=900)


def outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """The run step once, as the CI job `kernel-library` calls it (tier cpu, three pipelines)."""
    folder = tmp_path_factory.mktemp("job")
    environment = {**os.environ, "OUT": str(folder / "tcm-out"), "TORCH_VERSION": "2.13.0",
                   "KERNELS_FROM": "tests/fixtures/kernel_library/library_kernels.py", "KERNELS": "", "STYLES": "",
                   "PIPELINES": "eager,export_strict,export_nonstrict", "TIER": "cpu", "BASELINE": BASELINE,
                   "GITHUB_OUTPUT": str(folder / "run-output"), "GITHUB_STEP_SUMMARY": str(folder / "summary.md")}
    completed = run_step("Run the matrix", environment)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return folder, environment


def test_the_run_step_runs_only_the_plugins_kernels(job):
    folder, _ = job
    assert outputs(folder / "run-output") == {"status": "0"}
    records = [json.loads(line) for line in (folder / "tcm-out" / "results.jsonl").read_text().splitlines()[1:]]
    assert {record["kernel"] for record in records} == {"library_scale"}
    assert len(records) == len(STYLES) * 3  # every style in the three pipelines the job asks


def test_the_chart_goes_to_the_summary_and_the_committed_baseline_passes_the_gate(job):
    folder, environment = job
    assert run_step("Chart into the job summary", environment).returncode == 0
    environment = {**environment, "GITHUB_OUTPUT": str(folder / "diff-output")}
    assert run_step("Compare with the baseline", environment).returncode == 0
    assert outputs(folder / "diff-output") == {"status": "0"}
    summary = (folder / "summary.md").read_text()
    assert "# Kernel matrix, torch 2.13.0" in summary and "library\\_scale" in summary and "0 regressions" in summary
    gate = run_step("Fail on a regression", {**environment, "RUN_STATUS": "0", "DIFF_STATUS": "0"})
    assert gate.returncode == 0, gate.stdout


def test_a_cell_that_passed_in_the_baseline_and_fails_now_fails_the_gate(job, tmp_path):
    folder, environment = job
    lines = (REPO / BASELINE.format(torch="2.13.0")).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    failing_now = next(r for r in records[1:] if r["outcome"] == "fail")
    failing_now.update(outcome="pass", stage=None, error_type=None, error=None)
    doctored = tmp_path / "baseline-2.13.0.jsonl"
    doctored.write_text("".join(json.dumps(r) + "\n" for r in records))
    environment = {**environment, "BASELINE": str(tmp_path / "baseline-{torch}.jsonl"),
                   "GITHUB_OUTPUT": str(tmp_path / "diff-output")}
    assert run_step("Compare with the baseline", environment).returncode == 0
    status = outputs(tmp_path / "diff-output")["status"]
    assert status == "1"
    gate = run_step("Fail on a regression", {**environment, "RUN_STATUS": "0", "DIFF_STATUS": status})
    assert gate.returncode == 1 and "no longer passes" in gate.stdout


def test_a_missing_baseline_fails_the_gate_with_a_line_saying_how_to_make_one(job, tmp_path):
    _, environment = job
    environment = {**environment, "BASELINE": str(tmp_path / "none-{torch}.jsonl"),
                   "GITHUB_OUTPUT": str(tmp_path / "diff-output")}
    completed = run_step("Compare with the baseline", environment)
    assert "no baseline" in completed.stdout and outputs(tmp_path / "diff-output")["status"] == "2"
    gate = run_step("Fail on a regression", {**environment, "RUN_STATUS": "0", "DIFF_STATUS": "2"})
    assert gate.returncode == 1


def test_the_html_step_checks_the_command_exists_before_calling_it():
    script = step_script("HTML report")
    assert script.index("if ! python -m harness html --help") < script.index('python -m harness html "$OUT')


def step_block(name_prefix: str) -> str:
    """The whole text of the step whose name starts with `name_prefix` (its `if`, `uses` and `with` too)."""
    text = WORKFLOW.read_text(encoding="utf-8")
    match = re.search(rf"\n(\s+)- name: {re.escape(name_prefix)}.*?(?=\n\1- |\Z)", text, re.DOTALL)
    assert match, f"no step {name_prefix!r}"
    return match.group(0)


def field(block: str, name: str) -> str:
    match = re.search(rf"\n\s+{name}: (.*)", block)
    assert match, f"no {name} in {block}"
    return match.group(1).strip()


def test_the_cache_is_restored_before_the_run_and_saved_after_it_even_when_the_job_fails():
    text = WORKFLOW.read_text(encoding="utf-8")
    restore, save = step_block("Restore the previous run's results"), step_block("Keep this run's results")
    assert "uses: actions/cache/restore@" in restore and "uses: actions/cache/save@" in save
    assert text.index(restore) < text.index("- name: Run the matrix") < text.index(save)
    assert field(save, "if").startswith("always() && inputs.reuse")  # a regression fails the job: keep its results
    assert field(restore, "path") == field(save, "path") == ".tcm-reuse"
    assert "REUSE_DIR: ${{ github.workspace }}/.tcm-reuse" in text
    key = field(restore, "key")
    assert key == field(save, "key")
    for part in ("runner.os", "matrix.torch", "inputs.tier", "inputs.python-version", "inputs.kernels-from",
                 "github.ref_name", "github.run_id", "github.run_attempt"):
        assert part in key, part  # a cache entry is written once: the key is new for every run


def test_the_restore_keys_let_a_pull_request_start_from_its_base_branchs_cache():
    restore = step_block("Restore the previous run's results")
    key = field(restore, "key")
    prefixes = [line.strip() for line in restore.split("restore-keys: |", 1)[1].splitlines() if line.strip()]
    branch_prefix = key.split("${{ github.run_id }}")[0]
    assert prefixes == [branch_prefix, key.split("${{ github.ref_name }}")[0]]  # this branch's newest, then any branch's


def test_a_second_run_step_reuses_the_first_ones_cells(tmp_path):
    """The run step twice with the kept folder between them, as the cache keeps it: the second copies every cell."""
    environment = {**os.environ, "OUT": str(tmp_path / "tcm-out"), "TORCH_VERSION": "2.13.0",
                   "KERNELS_FROM": "tests/fixtures/kernel_library/library_kernels.py", "KERNELS": "", "STYLES": "",
                   "PIPELINES": "eager", "TIER": "cpu", "BASELINE": "", "REUSE": "true",
                   "REUSE_DIR": str(tmp_path / "tcm-reuse"), "GITHUB_OUTPUT": str(tmp_path / "run-output")}
    first = run_step("Run the matrix", environment)
    assert first.returncode == 0 and "reuse:" not in first.stdout, first.stdout[-2000:]
    assert (tmp_path / "tcm-reuse" / "results.jsonl").is_file()
    second = run_step("Run the matrix", environment)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    assert f"reuse: {len(STYLES)} of {len(STYLES)} cells reused" in second.stdout
    records = [json.loads(line) for line in (tmp_path / "tcm-out" / "results.jsonl").read_text().splitlines()[1:]]
    assert len(records) == len(STYLES) and all("reused_from" in record["detail"] for record in records)
    (tmp_path / "tcm-reuse" / "results.jsonl").write_text("not a results file\n")
    third = run_step("Run the matrix", environment)  # a kept file that does not read: every cell runs, no failure
    assert third.returncode == 0 and "does not read; running every cell" in third.stdout, third.stdout[-2000:]
