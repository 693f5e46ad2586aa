"""Known upstream reports: fired only by their evidence pattern, and cited by the report, the HTML page and advise."""

from __future__ import annotations

from report_helpers import cell, results

from harness.report.advice.advise import advise, render_advice
from harness.report.advice.needs import parse_needs
from harness.report.markdown.known_reports import known_reports_for
from harness.report.markdown.render import render_report
from harness.report.page.html import page_data

NEVER_WRITTEN = dict(stage="check", error_type="MismatchError",
                     error="output: 8 of 8 elements differ beyond the allowance; first at flat index 0: 0.0 vs fp64 answer 1.5")
TMA = {"kernels": {"td": {"features": ["tensor-descriptor", "grid-tuple"]}, "k": {"features": ["grid-lambda"]}}}


def _by_id(*made):
    return {c.id: c for c in made}


def test_flop_counter_report_needs_the_bare_launch_right_in_eager():
    wrong = cell("k", "wrap_triton", "flop_counter", "wrong", **NEVER_WRITTEN)
    assert [m.report.name for m in known_reports_for(wrong, _by_id(wrong, cell("k", "wrap_triton", "eager")), {})] \
        == ["pytorch#167224"]
    broken = cell("k", "wrap_triton", "eager", "fail", stage="run", error_type="RuntimeError", error="x")
    assert known_reports_for(wrong, _by_id(wrong, broken), {}) == []
    failed = cell("k", "wrap_triton", "flop_counter", "fail", stage="check", error_type="FlopCountMismatch", error="0")
    assert known_reports_for(failed, _by_id(failed), {}) == []  # counted nothing but ran: another symptom


def test_host_tma_report_needs_the_tensor_descriptor_feature():
    features = {"td": ["tensor-descriptor"], "k": ["grid-lambda"]}
    for kernel, expected in (("td", ["pytorch#193608"]), ("k", [])):
        wrong = cell(kernel, "triton_op", "compile", "wrong", **NEVER_WRITTEN)
        found = known_reports_for(wrong, _by_id(wrong, cell(kernel, "triton_op", "eager")), features)
        assert [m.report.name for m in found] == expected


def _matching_file():
    return results([cell("td", "native", "aoti"), cell("td", "triton_op", "eager"), cell("td", "custom_op", "aoti"),
                    cell("td", "triton_op", "aoti", "wrong", **NEVER_WRITTEN)], **TMA)


def test_the_markdown_report_has_a_known_reports_section_only_when_a_cell_matches():
    assert "## Known upstream reports" in render_report(_matching_file())
    assert "[pytorch#193608](https://github.com/pytorch/pytorch/pull/193608)" in render_report(_matching_file())
    assert "## Known upstream reports" not in render_report(results([cell("k", "raw", "eager")], **TMA))


def test_the_html_page_puts_the_report_in_the_cells_evidence():
    records = {(r["kernel"], r["style"], r["pipeline"]): r for r in page_data([("r.jsonl", _matching_file())])["cells"]}
    assert records[("td", "triton_op", "aoti")]["upstream"].startswith("pytorch#193608 (closed pull request")
    assert records[("td", "custom_op", "aoti")]["upstream"] == ""


def test_advise_names_the_report_beside_the_fix():
    made = _matching_file()
    text = render_advice(advise(made, parse_needs("aoti")), made, "r.jsonl", markdown=True)
    assert r"\[known upstream\] pytorch\#193608 (closed pull request" in text  # Markdown-escaped
