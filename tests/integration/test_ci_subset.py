"""The CPU tier over the whole catalogue, in the CI subset of pipelines, held to the reviewed baseline.

`python -m harness run --subset ci` exits 1 when any cell's outcome differs from
matrix/expected/<torch>-<triton>-cpu.json or a cell has no result, so this test fails on any
change in what the CPU tier measures, in either direction; a reviewed change updates the baseline.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from harness.domain.registry import load_specs
from harness.results import read_results
from harness.run.environment import resolve_tier
from harness.run.subsets import CI_PIPELINES
from harness.vocab import STYLES

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(resolve_tier("auto") != "cpu", reason="the CI subset is the CPU tier's")]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    output = tmp_path_factory.mktemp("ci") / "results.jsonl"
    command = [sys.executable, "-m", "harness", "run", "--tier", "cpu", "--subset", "ci", "-n", "2", "-o", str(output)]
    completed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=2400)
    return completed, output


def test_the_catalogue_matches_the_cpu_baseline(run):
    completed, _ = run
    differing = [line for line in completed.stderr.splitlines() if line.startswith(("baseline:", "error:"))]
    assert completed.returncode == 0, "\n".join(differing[:40]) or completed.stdout[-3000:] + completed.stderr[-3000:]


def test_every_kernel_style_and_ci_pipeline_is_asked(run):
    _, output = run
    cells = {c.id for c in read_results(output).cells}
    kernels = load_specs([])
    assert cells == {f"{k}/{s}/{p}" for k in kernels for s in STYLES for p in CI_PIPELINES}


def test_the_control_is_healthy_wherever_it_runs(run):
    _, output = run
    broken = [c for c in read_results(output).cells if c.style == "native" and c.outcome not in ("pass", "skip")]
    assert broken == [], broken
