"""A spec's own fake, through the real CLI on the CPU tier: the same launch (`int(count.item())`) as a custom_op
fails compile_fullgraph, export_strict and export_nonstrict with the fake derived from the launch, and passes them
with the hand-written fake (`new_dynamic_size`) of data_dependent_output_int_fake. Both are what this run measured."""

import pytest
from harness_commands import harness_command

from harness.results import read_results

pytestmark = pytest.mark.slow
KERNELS = ("data_dependent_output_int", "data_dependent_output_int_fake")
PIPELINES = ("compile_fullgraph", "export_strict", "export_nonstrict")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    output = tmp_path_factory.mktemp("own_fake") / "results.jsonl"
    command = ["run", "--tier", "cpu", "-k", ",".join(KERNELS), "-s", "custom_op", "-p", ",".join(PIPELINES),
               "-n", "1", "--baseline-dir", "none", "-o", str(output)]
    completed = harness_command(command, timeout=900)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return read_results(output)


def test_the_derived_fake_fails_on_the_data_dependent_int(results):
    cells = {cell.pipeline: cell for cell in results.cells if cell.kernel == "data_dependent_output_int"}
    assert sorted(cells) == sorted(PIPELINES)
    for cell in cells.values():
        assert cell.outcome == "fail" and cell.stage, cell
        assert "data-dependent" in cell.error, cell


def test_the_hand_written_fake_passes_the_same_pipelines(results):
    cells = {cell.pipeline: cell for cell in results.cells if cell.kernel == "data_dependent_output_int_fake"}
    assert sorted(cells) == sorted(PIPELINES)
    assert {pipeline: cell.outcome for pipeline, cell in cells.items()} == dict.fromkeys(PIPELINES, "pass")


def test_the_header_marks_the_kernel_with_its_own_fake(results):
    kernels = results.header["kernels"]
    assert kernels["data_dependent_output_int_fake"].get("own_fake") is True
    assert "own_fake" not in kernels["data_dependent_output_int"]
