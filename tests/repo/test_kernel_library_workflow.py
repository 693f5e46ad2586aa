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
