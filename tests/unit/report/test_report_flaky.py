"""`flaky` (--repeat N gave different outcomes): its own symbol, counted as not passed, every run listed."""

from __future__ import annotations

from report_helpers import cell, results

from harness.report.compare.diff import diff_results, render_diff
from harness.report.markdown.render import SYMBOLS, render_report

FLAKY = cell("add", "raw", "compile", "flaky", stage="run", error_type="RuntimeError", error="sometimes",
             repeats=["pass", "fail", "pass"])


def test_a_flaky_cell_has_its_symbol_a_footnote_with_every_run_and_counts_as_not_passed() -> None:
    text = render_report(results([FLAKY, cell("sin", "raw", "compile")]))
    symbol = SYMBOLS["flaky"][0]
    assert f"| {symbol}" in text.split("## Detail per kernel")[1]  # the legend
    grid = text.split("### add")[1]
    assert f"{symbol} \\[" in grid
    assert "flaky at run: RuntimeError: sometimes (runs: pass, fail, pass)" in grid
    chart_row = next(line for line in text.splitlines() if line.startswith("| Supports torch.compile "))
    assert "Rarely (1/2)" in chart_row  # one pass, one flaky: asked twice, passed once
    assert "flaky 1" in text


def test_diff_lists_pass_to_flaky_apart_from_the_regressions_and_shows_the_runs() -> None:
    """A flaky cell is a change nobody confirmed (harness.run.confirm): never a regression (issue #33)."""
    stable = cell("add", "raw", "compile")
    changes = diff_results(results([stable]), results([FLAKY]))
    assert [c.id for c in changes.sections["flaky"]] == ["add/raw/compile"]
    assert changes.sections["regressions"] == [] and not changes.has_regressions
    assert [c.id for c in diff_results(results([FLAKY]), results([stable])).sections["newly supported"]] == ["add/raw/compile"]
    text = render_diff(results([stable]), results([FLAKY]), "old.jsonl", "new.jsonl", markdown=False)
    assert "add/raw/compile: pass -> flaky at run (RuntimeError: sometimes) [runs: pass, fail, pass]" in text
