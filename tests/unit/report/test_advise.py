"""`advise`: which style meets the needs, judged only from the cells a results file holds."""

from __future__ import annotations

import pytest
from report_helpers import cell, results

from harness.cli import main
from harness.report.advice.advise import advise, render_advice
from harness.report.advice.fixes import FIX_RULES, fixes_for
from harness.report.advice.needs import NEEDS, NEEDS_BY_NAME, UnknownNeed, parse_needs
from harness.report.markdown.capabilities import CAPABILITIES
from harness.vocab import PIPELINES

FAKE_POINTER = ("Cannot access data pointer of Tensor (e.g. FakeTensor, FunctionalTensor). If you're using "
                "torch.compile/export/fx, it is likely that we are erroneously tracing into a custom kernel.")


def _by_style(advice):
    return {style.style: style for style in advice.styles}


def test_every_need_names_known_pipelines_and_training_is_the_charts_rule():
    assert all(set(need.pipelines) <= set(PIPELINES) for need in NEEDS)
    training = next(c for c in CAPABILITIES if c.name == "Supports training")
    assert NEEDS_BY_NAME["training"].pipelines == training.pipelines


def test_unknown_need_lists_the_known_ones():
    with pytest.raises(UnknownNeed, match="unknown need 'trainig'.*known needs: inference"):
        parse_needs("inference,trainig")


def test_the_style_that_passes_everything_ranks_first_and_a_failure_carries_its_evidence():
    cells = [cell("add", "triton_op", "eager"), cell("add", "triton_op", "export_nonstrict"),
             cell("add", "raw", "eager"),
             cell("add", "raw", "export_nonstrict", "fail", stage="trace", error_type="RuntimeError", error=FAKE_POINTER)]
    advice = advise(results(cells), parse_needs("inference,export"))
    assert [s.style for s in advice.styles] == ["triton_op", "raw"]
    assert advice.styles[0].verdict == "meets every need for every kernel measured"
    (shortfall,) = advice.styles[1].failing
    assert (shortfall.need, shortfall.kernel, shortfall.pipeline, shortfall.cell.stage) == \
        ("export", "add", "export_nonstrict", "trace")
    assert [fix.rule.name for fix in shortfall.fixes] == ["triton_op"]
    assert shortfall.passes_as == ("triton_op",)


def test_a_need_with_no_measured_pipeline_is_not_measured_never_a_pass():
    advice = advise(results([cell("add", "custom_op", "eager")]), parse_needs("inference,aoti"))
    (custom_op,) = advice.styles
    assert advice.unmeasured_pipelines == ["aoti"]
    assert custom_op.verdict == "meets every measured need; not measured: aoti"
    assert "Not measured in this file" in render_advice(advice, results([]), "r.jsonl", markdown=False)


def test_a_cell_missing_for_one_style_is_not_measured_and_a_skip_is_not_asked():
    cells = [cell("add", "raw", "eager"), cell("sin", "raw", "eager", "skip", reason="no GPU"),
             cell("add", "custom_op", "eager")]
    styles = _by_style(advise(results(cells), parse_needs("inference")))
    assert [(s.kernel, s.outcome) for s in styles["custom_op"].missing] == [("sin", "not measured")]
    assert [(s.kernel, s.outcome) for s in styles["raw"].not_asked] == [("sin", "skip")]
    assert not styles["raw"].failing and not styles["custom_op"].failing


def test_the_strict_fix_needs_the_strict_cell_to_pass():
    failing = cell("add", "raw", "export_nonstrict", "fail", error_type="RuntimeError", error="something else")
    passing_strict = {failing.id: failing, "add/raw/export_strict": cell("add", "raw", "export_strict")}
    failing_strict = {failing.id: failing, "add/raw/export_strict": cell("add", "raw", "export_strict", "fail")}
    assert [f.rule.name for f in fixes_for(failing, passing_strict)] == ["strict"]
    assert fixes_for(failing, failing_strict) == []


def test_the_triton_op_fix_is_withheld_where_triton_op_was_measured_and_fails():
    failing = cell("add", "raw", "compile", "fail", error_type="RuntimeError", error=FAKE_POINTER)
    cells = {failing.id: failing, "add/triton_op/compile": cell("add", "triton_op", "compile", "fail")}
    assert fixes_for(failing, cells) == []


def test_the_apply_directly_fix_fires_only_on_the_recorded_call_site():
    plain = cell("add", "autograd_function", "compile_fullgraph", "fail")
    at_attribute = cell("add", "autograd_function", "compile_fullgraph", "fail", detail={"call_site": "module_attribute"})
    assert fixes_for(plain, {}) == []
    assert [f.rule.name for f in fixes_for(at_attribute, {})] == ["apply_directly"]


# As the CPU tier records data_dependent_output_int/custom_op/export_nonstrict (torch 2.13).
DATA_DEPENDENT = ("GuardOnDataDependentSymNode: Could not extract specialized integer from data-dependent expression u0"
                  " (unhinted: u0).  (Size-like symbols: none)")


def test_the_symint_size_fix_fires_on_a_guard_on_a_data_dependent_size_only():
    forced = cell("data_dependent_output_int", "custom_op", "export_nonstrict", "fail", stage="trace",
                  error_type="GuardOnDataDependentSymNode", error=DATA_DEPENDENT)
    other = cell("data_dependent_output_int", "triton_op", "export_nonstrict", "fail", error_type="RuntimeError",
                 error=FAKE_POINTER)
    assert [f.rule.name for f in fixes_for(forced, {})] == ["symint_size"]
    assert "trace stage" in fixes_for(forced, {})[0].evidence
    assert "symint_size" not in [f.rule.name for f in fixes_for(other, {})]


def test_no_fix_for_a_pass_even_if_its_text_matches():
    assert fixes_for(cell("add", "raw", "compile", error=FAKE_POINTER, error_type="RuntimeError"), {}) == []


def test_rule_names_are_unique():
    assert len({rule.name for rule in FIX_RULES}) == len(FIX_RULES)


def test_markdown_escapes_error_text(tmp_path):
    cells = [cell("add", "raw", "eager", "fail", error_type="RuntimeError", error="a | b <script>")]
    text = render_advice(advise(results(cells), parse_needs("inference")), results(cells), "r.jsonl", markdown=True)
    assert "a &#124; b &lt;script&gt;" in text and "<script>" not in text


def test_cli_exit_codes(make_results, capsys):
    path = make_results("r.jsonl", [cell("add", "raw", "eager")])
    assert main(["advise", "--needs", "inference", "--results", str(path), "--format", "md"]) == 0
    assert "| 1      | raw" in capsys.readouterr().out
    assert main(["advise", "--needs", "nope", "--results", str(path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    bad = path.parent / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["advise", "--needs", "inference", "--results", str(bad)]) == 2
    assert "bad.jsonl" in capsys.readouterr().err


def test_published_gpu_results_advise_without_error(capsys):
    assert main(["advise", "--needs", "inference,aoti"]) == 0
    assert "custom_op" in capsys.readouterr().out
