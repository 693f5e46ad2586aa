"""`--kernels-from` alone runs the plug-in's kernels, not the built-in catalogue; `--with-catalogue` and `-k` bring
catalogue kernels back (CPU tier, through the real CLI). Measured on the H100 before this: nine Liger kernels came
with the whole catalogue, 6,908 cells instead of 1,413."""

from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.domain.registry import load_specs
from harness.results import read_results

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "tests" / "fixtures" / "kernel_library" / "library_kernels.py"
pytestmark = pytest.mark.slow


def run(tmp_path, *extra):
    output = tmp_path / "results.jsonl"
    command = ["run", "--tier", "cpu", "--kernels-from", str(PLUGIN), "-s", "native",
               "-p", "eager", "-n", "1", "-o", str(output), "--baseline-dir", "none", *extra]
    completed = harness_command(command, timeout=900)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    results = read_results(output)
    return completed.stdout, [cell.kernel for cell in results.cells], results


def test_kernels_from_alone_runs_only_the_plugins_kernels(tmp_path):
    stdout, kernels, results = run(tmp_path)
    assert kernels == ["library_scale"]
    assert list(results.header["kernels"]) == ["library_scale"]
    assert "the built-in catalogue joins with --with-catalogue" in stdout


def test_the_catalogue_joins_by_name(tmp_path):
    _, kernels, _ = run(tmp_path, "-k", "add,library_scale")
    assert sorted(kernels) == ["add", "library_scale"]


def test_the_catalogue_joins_by_flag(tmp_path):
    _, kernels, _ = run(tmp_path, "--with-catalogue")
    assert sorted(kernels) == sorted(load_specs([str(PLUGIN)]))
