"""Both sides of the tolerance model on real cells (CPU tier, Triton interpreter; plugins/tolerance_kernels.py):
rounding as real kernels round passes, a real bug is `wrong` and its line says the rule."""

from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.results import read_results

REPO = Path(__file__).resolve().parents[2]
PLUGIN = Path(__file__).parent / "plugins" / "tolerance_kernels.py"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    output = tmp_path_factory.mktemp("tolerance") / "results.jsonl"
    command = ["run", "--tier", "cpu", "--kernels-from", str(PLUGIN),
               "-k", "scale_rows,scale_rows_missing_row,scale_add_fp16,scale_add_bf16,add_off_by_one",
               "-s", "native,custom_op", "-p", "eager,eager_backward", "-o", str(output), "--overwrite"]
    completed = harness_command(command, timeout=1200)
    assert output.exists(), completed.stdout[-3000:] + completed.stderr[-3000:]
    return {cell.id: cell for cell in read_results(output).cells}


@pytest.mark.parametrize("cell_id", [
    "scale_rows/custom_op/eager_backward",  # (a) per-program fp32 partial sums of a weight gradient
    "scale_add_fp16/custom_op/eager", "scale_add_bf16/custom_op/eager",  # (c) one rounding where PyTorch rounds twice
    "scale_rows/native/eager_backward", "scale_rows_missing_row/native/eager_backward", "add_off_by_one/native/eager",
])
def test_rounding_passes(cells, cell_id):
    cell = cells[cell_id]
    assert cell.outcome == "pass", (cell.error, cell.traceback)
    assert all(rule.startswith("fp64 answer") for rule in cell.detail["tolerance"].values()), cell.detail


def test_a_weight_gradient_missing_one_row_of_389_is_wrong(cells):  # (b)
    cell = cells["scale_rows_missing_row/custom_op/eager_backward"]
    assert cell.outcome == "wrong", cell
    assert cell.error.startswith("gradients[1]: ") and "differ beyond the allowance" in cell.error
    assert any(rule in cell.error for rule in ("x fp32 reference error", "fp32 default", "x sqrt(K="))


def test_an_element_left_out_is_wrong(cells):  # (d)
    cell = cells["add_off_by_one/custom_op/eager"]
    assert cell.outcome == "wrong", cell
    assert cell.error.startswith("output: 1 of 1000 elements differ beyond the allowance")
    assert cell.traceback and "MismatchError" in cell.traceback
