"""Verdicts: measured outcomes only; env, skip and timeout are shown, never counted as No."""

from __future__ import annotations

import pytest
from report_helpers import cell, results

from harness.report.markdown.aggregate import cells_for, final_cells, verdict_of


def verdict_text(*outcomes: str) -> str:
    return verdict_of([cell(f"k{i}", "raw", "eager", outcome) for i, outcome in enumerate(outcomes)]).text()


@pytest.mark.parametrize(
    ("outcomes", "text"),
    [
        (("pass", "pass"), "Yes (2/2)"),
        (("pass", "pass", "fail"), "In the majority of cases (2/3)"),
        (("pass", "wrong"), "Rarely (1/2)"),
        (("pass", "crash", "fail", "wrong"), "Rarely (1/4)"),
        (("fail", "wrong", "crash"), "No (0/3)"),
        (("pass", "skip", "env"), "Yes (1/1); skip 1; env 1"),
        (("fail", "timeout"), "No (0/1); timeout 1"),
        (("skip", "skip"), "skip (2)"),
        (("env", "skip", "timeout"), "timeout (1); skip (1); env (1)"),
        ((), "not measured"),
        (("pass", "mystery"), "Rarely (1/2)"),
    ],
)
def test_verdict_rules(outcomes: tuple[str, ...], text: str) -> None:
    assert verdict_text(*outcomes) == text


def test_clean_yes_only_without_left_out_cells() -> None:
    assert verdict_of([cell("a", "raw", "eager")]).clean_yes
    assert not verdict_of([cell("a", "raw", "eager"), cell("b", "raw", "eager", "skip")]).clean_yes


def test_a_later_line_for_the_same_cell_wins() -> None:
    run = results([cell("a", "raw", "eager", "crash"), cell("a", "raw", "eager", "pass")])
    assert final_cells(run)["a/raw/eager"].outcome == "pass"


def test_a_chart_cell_gathers_every_kernel_of_the_style_in_any_pipeline() -> None:
    run = results([cell(k, s, p) for k in ("a", "b") for s in ("raw", "custom_op")
                   for p in ("eager_backward", "compile_fullgraph_backward", "eager")])
    chosen = cells_for(final_cells(run), "raw", ("eager_backward", "compile_fullgraph_backward"))
    assert [c.id for c in chosen] == [
        "a/raw/eager_backward", "a/raw/compile_fullgraph_backward",
        "b/raw/eager_backward", "b/raw/compile_fullgraph_backward",
    ]
