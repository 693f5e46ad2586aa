"""`repro` writes a cell as a script that runs without the harness and ends as the cell ended.

The cell is run by the harness, the script by a fresh isolated Python (`-I`, no PYTHONPATH)
from an empty folder, so nothing of the harness can be imported; the CPU tier's
TRITON_INTERPRET=1 is set by the script itself.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.results import read_results

REPO = Path(__file__).resolve().parents[2]
CELLS = ["add/raw/export_nonstrict", "add/custom_op/export_nonstrict", "add/native/eager"]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The harness's own verdicts for CELLS, from one CPU-tier run."""
    output = tmp_path_factory.mktemp("cells") / "results.jsonl"
    command = [sys.executable, "-m", "harness", "run", "--tier", "cpu", "-k", "add", "-s", "raw,custom_op,native",
               "-p", "eager,export_nonstrict", "-n", "1", "-o", str(output), "--baseline-dir", "none"]
    completed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    return output, {cell.id: cell for cell in read_results(output).cells}


def _script_run(cell_id: str, results: Path, folder: Path) -> subprocess.CompletedProcess:
    script = folder / "repro.py"
    made = subprocess.run([sys.executable, "-m", "harness", "repro", cell_id, "--tier", "cpu", "--results",
                           str(results), "-o", str(script)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TRITON_INTERPRET")}
    return subprocess.run([sys.executable, "-I", str(script)], cwd=folder, env=environment, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.parametrize("cell_id", CELLS)
def test_the_script_ends_as_the_cell_ended(cell_id, recorded, tmp_path):
    results, cells = recorded
    cell = cells[cell_id]
    completed = _script_run(cell_id, results, tmp_path)
    if cell.outcome == "pass":
        assert completed.returncode == 0, completed.stderr[-3000:]
        assert f"PASS: {cell_id}" in completed.stdout
    else:
        assert cell.outcome == "fail" and completed.returncode == 1
        last_line = completed.stderr.strip().splitlines()[-1]
        assert last_line == f"{cell.error_type}: {cell.error}", (last_line, cell.error)
    assert "No module named 'harness'" not in completed.stderr


def test_the_raw_export_nonstrict_cell_is_a_real_failure_on_this_tier(recorded):
    """Guards the test above: it must compare an actual failure, not two passes."""
    assert recorded[1]["add/raw/export_nonstrict"].outcome == "fail"


def test_the_header_names_the_cell_versions_and_recorded_outcome(recorded, tmp_path):
    results, _ = recorded
    made = subprocess.run([sys.executable, "-m", "harness", "repro", "add/raw/export_nonstrict", "--tier", "cpu",
                           "--results", str(results)], cwd=REPO, capture_output=True, text=True, timeout=300)
    header = made.stdout.split("from __future__")[0]
    assert "add/raw/export_nonstrict" in header and "torch " in header and "triton " in header
    assert "Recorded outcome: fail at stage trace: RuntimeError: Cannot access data pointer" in header
    assert "import harness" not in made.stdout and "from harness" not in made.stdout


@pytest.mark.parametrize("cell_id, message", [
    ("add/raw/vmap", "repro does not support the pipeline 'vmap' yet"),
    ("add/raw/eager_backward", "the cell is skip"),
    ("nope/raw/eager", "unknown kernel 'nope'"),
    ("add/raw", "a cell id is kernel/style/pipeline"),
    ("add/autograd_function@module_attribute/compile", "repro does not write call-site cells yet"),
])
def test_what_repro_cannot_write_is_one_line_and_exit_2(cell_id, message):
    completed = subprocess.run([sys.executable, "-m", "harness", "repro", cell_id, "--tier", "cpu"], cwd=REPO,
                               capture_output=True, text=True, timeout=300)
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1 and message in completed.stderr


@pytest.mark.parametrize("cell_id", ["rms_norm/custom_op/eager_backward", "rms_norm/autograd_function/eager_backward"])
def test_a_spec_with_saved_intermediates_and_backward_scalars_is_written_as_the_harness_builds_it(cell_id, tmp_path):
    """rms_norm's hidden RSTD output, its offset passed to the backward: the script ends as the harness's cell."""
    output = tmp_path / "results.jsonl"
    kernel, style, pipeline = cell_id.split("/")
    command = [sys.executable, "-m", "harness", "run", "--tier", "cpu", "-k", kernel, "-s", style, "-p", pipeline,
               "-n", "1", "-o", str(output), "--baseline-dir", "none"]
    completed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-2000:]
    cell = {c.id: c for c in read_results(output).cells}[cell_id]
    script = _script_run(cell_id, output, tmp_path)
    assert (script.returncode == 0) == (cell.outcome == "pass"), script.stdout[-2000:] + script.stderr[-2000:]
