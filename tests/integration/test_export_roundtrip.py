"""export_roundtrip: the saved ExportedProgram is loaded and run in another process, as a consumer would.

One CPU-tier run through the command line: the built-in `add` and a plug-in loaded from a path, as the
pure-PyTorch control and as a torch.library.custom_op, each loaded with and without the kernel's module.
"""

from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.results import read_results

REPO = Path(__file__).resolve().parents[1].parent
PLUGIN = Path(__file__).parent / "plugins" / "roundtrip_kernels.py"
pytestmark = pytest.mark.slow  # one run of 8 cells: about 10 s on two shared cores


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    output = tmp_path_factory.mktemp("roundtrip") / "results.jsonl"
    command = ["run", "--tier", "cpu", "--kernels-from", str(PLUGIN),
               "-k", "add,plugin_add", "-s", "native,custom_op", "-p", "export_roundtrip,export_roundtrip_bare",
               "-o", str(output)]
    completed = harness_command(command, timeout=600)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return {cell.id: cell for cell in read_results(output).cells}


def test_a_custom_op_round_trips_in_a_process_that_imports_its_module_itself(cells):
    cell = cells["add/custom_op/export_roundtrip"]
    assert cell.outcome == "pass", cell
    fresh = cell.detail["fresh_process"]
    assert fresh["pid"] != fresh["cell_pid"]
    assert fresh["kernel_modules_at_start"] == []  # nothing of the kernel's until the consumer imports it
    assert "kernels.add" in fresh["kernel_modules_before_load"]
    assert cell.detail["program_operators"] == ["tcm_custom_op::add.default"]


def test_loading_a_custom_op_without_its_module_fails_at_load_naming_the_operator(cells):
    cell = cells["add/custom_op/export_roundtrip_bare"]
    assert (cell.outcome, cell.stage, cell.detail["roundtrip_stage"]) == ("fail", "load", "load"), cell
    assert cell.detail["missing_operators"] == ["tcm_custom_op::add.default"]
    assert "needs operator tcm_custom_op::add" in cell.error and "kernels.add" in cell.error
    assert "tcm_custom_op.add" in cell.detail["cause"]  # torch's own deserializer error, which it only logs
    assert cell.detail["fresh_process"]["kernel_modules_at_end"] == []


def test_the_control_round_trips_with_and_without_the_kernels_module(cells):
    for pipeline in ("export_roundtrip", "export_roundtrip_bare"):
        cell = cells[f"add/native/{pipeline}"]
        assert cell.outcome == "pass", cell
        assert cell.detail["program_operators"] == []
    assert cells["add/native/export_roundtrip_bare"].detail["fresh_process"]["kernel_modules_at_end"] == []


def test_a_plugin_from_a_path_is_imported_by_its_path_in_the_fresh_process(cells):
    cell = cells["plugin_add/custom_op/export_roundtrip"]
    assert cell.outcome == "pass", cell
    assert cell.detail["consumer_imports"] == str(PLUGIN.resolve())
    fresh = cell.detail["fresh_process"]
    assert fresh["kernel_modules_at_start"] == []
    assert any(name.startswith("_tcm_user_kernels_") for name in fresh["kernel_modules_before_load"])
