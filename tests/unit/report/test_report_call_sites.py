"""The call-site table: its own section of the report, never counted in the chart, and it says where the sites
of one style disagree."""

from __future__ import annotations

from report_helpers import cell, results

from harness.report.aggregate import cells_for, final_cells
from harness.report.render import render_report
from harness.results import CellResult
from harness.vocab import cell_id


def sited(kernel: str, style: str, site: str, pipeline: str, outcome: str = "pass") -> CellResult:
    made = cell(kernel, style, pipeline, outcome)
    made.id, made.call_site = cell_id(kernel, style, pipeline, site), site
    return made


MEASURED = [
    cell("add", "autograd_function", "compile_fullgraph"),
    sited("add", "autograd_function", "direct", "compile_fullgraph"),
    sited("add", "autograd_function", "module_alias", "compile_fullgraph"),
    sited("add", "autograd_function", "module_attribute", "compile_fullgraph", "fail"),
]


def test_call_site_cells_are_not_chart_evidence():
    evidence = cells_for(final_cells(results(MEASURED)), "autograd_function", ("compile_fullgraph",))
    assert [c.id for c in evidence] == ["add/autograd_function/compile_fullgraph"]


def test_the_report_has_a_call_site_section_naming_the_disagreement():
    report = render_report(results(MEASURED))
    section = report.split("## Call sites")[1]
    rows = [[part.strip() for part in line.strip("|").split("|")] for line in section.splitlines() if line.startswith("| add")]
    assert ["add", "autograd\\_function", "module\\_attribute", "❌ \\[1\\]"] in rows
    assert ("- add, autograd\\_function, compile\\_fullgraph: direct pass, module\\_alias pass, module\\_attribute fail"
            in section)
    assert "add autograd\\_function compile\\_fullgraph went fail" in section  # the footnoted evidence


def test_no_call_site_cells_no_section():
    assert "## Call sites" not in render_report(results(MEASURED[:1]))
