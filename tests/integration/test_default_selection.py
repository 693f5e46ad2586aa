"""The CPU tier's default selection over the whole catalogue, held cell by cell to the reviewed baseline.

This is what `nox -s matrix` asks on a machine without a GPU. Any cell whose outcome differs from
matrix/expected/<torch>-<triton>-cpu.json fails this test, in either direction: a reviewed change updates the
baseline (`python -m harness baseline RESULTS`).
"""

from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.domain.registry import load_specs
from harness.report.compare.baseline import load_baseline
from harness.results import read_results
from harness.run.environment import resolve_tier
from harness.run.subsets import CPU_DEFAULT_PIPELINES
from harness.vocab import STYLES

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(resolve_tier("auto") != "cpu", reason="the default selection tested here is the CPU tier's")]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    output = tmp_path_factory.mktemp("default") / "results.jsonl"
    # One worker: the same cells and baseline, for about 10 CPU seconds less than the default two, each of which
    # compiles and imports for itself (111 and 123 against 121 and 133, docs/maintainers.md, "The harness's own
    # tests"); the suite's other worker runs the other modules meanwhile. Runs of two workers are tested elsewhere
    # (test_worker_start.py, unit/test_zygote_maker.py).
    command = ["run", "--tier", "cpu", "-n", "1", "-o", str(output)]
    completed = harness_command(command, timeout=2400)
    return completed, output


def test_the_run_ends_without_a_regression_or_a_missing_cell(run):
    completed, _ = run
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert "default selection (cpu tier)" in completed.stdout and "--all" in completed.stdout


def test_every_cell_has_the_outcome_the_baseline_expects(run):
    _, output = run
    results = read_results(output)
    expected = load_baseline(REPO / "matrix" / "expected", results.environment)
    assert expected is not None, "no reviewed CPU baseline for this torch and triton"
    differing = [f"{c.id}: expected {expected.get(c.id)}, measured {c.outcome}"
                 for c in results.cells if expected.get(c.id) != c.outcome]
    assert differing == [], "\n".join(differing[:40])


def test_every_kernel_style_and_default_pipeline_is_asked(run):
    _, output = run
    cells = {c.id for c in read_results(output).cells}
    kernels = load_specs([])
    assert cells == {f"{k}/{s}/{p}" for k in kernels for s in STYLES for p in CPU_DEFAULT_PIPELINES}


def test_the_control_is_healthy_wherever_it_runs(run):
    _, output = run
    broken = [c for c in read_results(output).cells if c.style == "native" and c.outcome not in ("pass", "skip")]
    assert broken == [], broken


def test_no_worker_is_retired(run):
    """No kernel of the catalogue changes a worker's global state: a retirement here is the guard's false alarm
    (harness.run.isolation.global_state), which costs a new worker and shows in no outcome."""
    _, output = run
    retired = {c.id: c.detail["worker_retired"] for c in read_results(output).cells if "worker_retired" in c.detail}
    assert retired == {}
