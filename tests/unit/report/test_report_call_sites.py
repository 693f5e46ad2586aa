"""The call-site table: its own section of the report, never counted in the chart, and it says where the sites
of one style disagree."""

from __future__ import annotations

from report_helpers import cell, results

from harness.report.markdown.aggregate import cells_for, final_cells
from harness.report.markdown.render import render_report
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


def _rows(section: str) -> list[list[str]]:
    return [[part.strip() for part in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| style")]


def test_the_report_has_a_call_site_section_naming_the_disagreement():
    report = render_report(results(MEASURED))
    section = report.split("## Call sites")[1]
    assert ["autograd\\_function", "module\\_attribute", "❌ 1 \\[1\\]"] in _rows(section)
    assert ["autograd\\_function", "direct", "✅ 1"] in _rows(section)
    assert ("- autograd\\_function, compile\\_fullgraph: direct pass, module\\_alias pass, module\\_attribute fail "
            "(1 kernel: add)" in section)
    assert "add autograd\\_function compile\\_fullgraph went fail" in section  # the footnoted evidence


def test_entries_count_kernels_and_a_footnote_names_the_kernels_behind_a_minority():
    """Three kernels at two sites: the counts add up per site, the failure of one kernel at every site is no
    disagreement but its footnote names it, and a failure every kernel shares names none."""
    measured = [sited(kernel, "raw", site, "compile_fullgraph", "fail" if kernel == "odd" else "pass")
                for kernel in ("add", "odd", "sin") for site in ("free_function", "module_forward")]
    for kernel in ("add", "odd", "sin"):
        for site in ("free_function", "module_forward"):
            measured.append(sited(kernel, "raw", site, "export_nonstrict", "fail"))
            measured[-1].error = "Cannot access data pointer of Tensor"  # one cause, shared by every kernel
    section = render_report(results(measured)).split("## Call sites")[1]
    assert ["raw", "free\\_function", "✅ 2 · ❌ 1 \\[1\\]", "❌ 3 \\[2\\]"] in _rows(section)
    assert ["raw", "module\\_forward", "✅ 2 · ❌ 1 \\[1\\]", "❌ 3 \\[2\\]"] in _rows(section)
    notes = [line for line in section.splitlines() if line[:3] in ("1. ", "2. ")]
    assert notes[0].endswith("(odd)") and not notes[1].endswith(")")
    assert "agree in every pipeline" in section


def test_no_call_site_cells_no_section():
    assert "## Call sites" not in render_report(results(MEASURED[:1]))


def test_the_run_summary_gives_call_site_cells_a_grid_of_their_own():
    from harness.report.markdown.summary import render_summary

    text = render_summary(results(MEASURED))
    main_grid, site_grid = text.split("call sites (docs/call-sites.md):")
    assert "autograd_function@" not in main_grid and "compile_fullgraph  ok" in main_grid
    header = next(line for line in site_grid.splitlines() if line.startswith("pipeline"))
    assert header.split() == ["pipeline", "autograd_function@direct", "autograd_function@module_alias",
                              "autograd_function@module_attribute"]
    assert next(line for line in site_grid.splitlines() if line.startswith("compile_fullgraph")).split() == [
        "compile_fullgraph", "ok", "ok", "FAIL"]
    only_sites = render_summary(results(MEASURED[1:]))
    assert "call sites (docs/call-sites.md):" in only_sites and "\npipeline    autograd_function\n" not in only_sites
