"""The call-site axis through the command line: call-site cells are collected only in the pipelines where a call
site can matter, recorded under their own ids (`kernel/style@site/pipeline`) with their site, and reported in a
table of their own, never in the chart."""

from pathlib import Path

import pytest
from harness_commands import harness_command

from harness.report.markdown.render import render_report
from harness.results import read_results

REPO = Path(__file__).resolve().parents[2]
PLUGIN = Path(__file__).parent / "plugins" / "torch_only_kernels.py"
STYLES = "autograd_function,autograd_function@direct,autograd_function@module_attribute,raw@module_forward"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    output = tmp_path_factory.mktemp("call-sites") / "results.jsonl"
    command = ["run", "--tier", "cpu", "--kernels-from", str(PLUGIN), "-k", "torch_add",
               "-s", STYLES, "-p", "eager,compile_fullgraph", "-n", "1", "-o", str(output)]
    completed = harness_command(command, timeout=900)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return read_results(output)


def test_call_site_cells_have_their_own_ids_and_only_where_a_call_site_can_matter(results):
    assert sorted(cell.id for cell in results.cells) == sorted([
        "torch_add/autograd_function/eager",
        "torch_add/autograd_function/compile_fullgraph",
        "torch_add/autograd_function@direct/compile_fullgraph",
        "torch_add/autograd_function@module_attribute/compile_fullgraph",
        "torch_add/raw@module_forward/compile_fullgraph",
    ])


def test_a_call_site_cell_records_its_style_and_its_site_apart(results):
    cells = {cell.id: cell for cell in results.cells}
    sited = cells["torch_add/autograd_function@module_attribute/compile_fullgraph"]
    assert (sited.style, sited.call_site, sited.pipeline) == ("autograd_function", "module_attribute", "compile_fullgraph")
    assert cells["torch_add/autograd_function/compile_fullgraph"].call_site == ""


def test_each_call_site_runs_its_own_code(results):
    """The op is plain PyTorch, so Dynamo traces it here: a site that did not call the op could not pass."""
    for cell in results.cells:
        if cell.call_site:
            assert cell.outcome == "pass", cell


def test_the_report_gives_call_sites_their_own_table(results):
    report = render_report(results)
    chart_and_grids, call_sites = report.split("## Which API should I use?")[1].split("## Call sites")
    assert "module\\_attribute" in call_sites and "module\\_forward" in call_sites
    assert "module\\_attribute" not in chart_and_grids and "module\\_forward" not in chart_and_grids
    assert "2 cells" in chart_and_grids  # the summary counts the main cells only
