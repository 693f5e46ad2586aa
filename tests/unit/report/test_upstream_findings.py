"""`findings`: the cells where PyTorch itself is at fault, grouped by cause, each with a known report where one matches."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from harness_commands import harness_command
from report_helpers import cell, results

from harness.report.markdown.known_reports import KNOWN_REPORTS, kernel_features
from harness.report.upstream.findings import CRASH, INTERNAL, SILENT_WRONG, find_groups, kind_of, representative
from harness.report.upstream.findings_markdown import expected_and_got, render_findings
from harness.results import read_results

REPO = Path(__file__).resolve().parents[3]
PUBLISHED = REPO / "reports" / "gpu-results.jsonl"


@cache
def published():
    return read_results(PUBLISHED)


def _group(name):
    return next(group for group in find_groups(published()) if group.known and group.known.name == name)


def test_the_flop_counter_group_is_every_bare_wrap_triton_cell_and_cites_pytorch_167224():
    group = _group("pytorch#167224")
    assert group.kind == SILENT_WRONG and len(group.cells) == 37  # every catalogue kernel's but heuristics_autotune
    assert {(c.style, c.pipeline) for c in group.cells} == {("wrap_triton", "flop_counter")}


def test_the_tma_group_is_the_tensor_descriptor_kernel_and_reproduces_its_triton_op_compile_cell():
    group = _group("pytorch#193608")
    assert group.kernels == ["tensor_descriptor"]
    assert {c.style for c in group.cells} == {"triton_op", "wrap_triton"} and len(group.cells) == 10
    assert representative(group, kernel_features(published())).id == "tensor_descriptor/triton_op/compile"


def test_a_kernel_wrong_in_every_style_is_the_kernels_fault_not_pytorchs():
    """add on a strided view is wrong as raw, custom_op, triton_op...: no style passes, so no finding."""
    cells = {c.id: c for c in published().cells}
    assert cells["add/raw/eager_inputs"].outcome == "wrong"
    assert kind_of(cells["add/raw/eager_inputs"], cells) is None


def _cells(*made):
    return {c.id: c for c in made}


def test_a_wrong_cell_needs_its_control_to_pass_and_another_style_to_pass():
    wrong = cell("k", "triton_op", "compile", "wrong", stage="check", error_type="MismatchError", error="output: ...")
    helped = [cell("k", "triton_op", "eager"), cell("k", "custom_op", "compile")]
    assert kind_of(wrong, _cells(wrong, cell("k", "native", "compile"), *helped)) == SILENT_WRONG
    assert kind_of(wrong, _cells(wrong, cell("k", "native", "compile", "fail"), *helped)) is None
    assert kind_of(wrong, _cells(wrong, cell("k", "native", "compile"), helped[0])) is None


def test_crashes_and_internal_errors():
    crash = cell("k", "raw", "aoti", "crash", stage="run", error_type="SIGSEGV", error="died")
    assert kind_of(crash, _cells(crash, cell("k", "native", "aoti"))) == CRASH
    inductor = cell("k", "triton_op", "aoti", "fail", stage="compile", error_type="InductorError(TypeError)", error="x")
    assert kind_of(inductor, _cells(inductor, cell("k", "native", "aoti"))) == INTERNAL
    ours = cell("k", "raw", "aoti", "fail", stage="run", error_type="AssertionError", error="x",
                traceback='File "/site-packages/torch/a.py", line 1\nFile "/repo/harness/b.py", line 2\nAssertionError: x')
    theirs = cell("k", "raw", "aoti", "fail", stage="run", error_type="AssertionError", error="x",
                  traceback='File "/repo/harness/b.py", line 2\nFile "/site-packages/torch/a.py", line 1\nAssertionError')
    control = cell("k", "native", "aoti")
    assert kind_of(ours, _cells(ours, control)) is None
    assert kind_of(theirs, _cells(theirs, control)) == INTERNAL


def test_expected_and_got_come_from_the_recorded_mismatch():
    wrong = next(c for c in published().cells if c.id == "add/wrap_triton/flop_counter")
    expected, got = expected_and_got(wrong, ["custom_op"])
    assert "-3.3916348218917847 at flat index 0" in expected and "custom_op" in expected
    assert got.startswith("nan there (the output was never written (it still holds the poison value)); 1000 of 1000 "
                          "elements differ")


def test_the_page_has_each_groups_reproducer_versions_and_known_report():
    made = results([cell("k", "native", "flop_counter"), cell("k", "wrap_triton", "eager"),
                    cell("k", "custom_op", "flop_counter"),
                    cell("k", "wrap_triton", "flop_counter", "wrong", stage="check", error_type="MismatchError",
                         error="output: 8 of 8 elements differ beyond the allowance (max err 1); first at flat index 0:"
                               " 0.0 vs fp64 answer 1.5 (PyTorch 1.5)")])
    groups = find_groups(made)
    page = render_findings(made, "r.jsonl", groups, {"k/wrap_triton/flop_counter": "print('the script')\n"})
    assert "print('the script')" in page and "pytorch#167224" in page and "NVIDIA H100" in page
    assert "python -m harness repro k/wrap_triton/flop_counter --tier gpu" in page
    assert "- Expected: the pure-PyTorch reference's output (custom_op give it): 1.5 at flat index 0" in page


def test_no_fault_says_so():
    made = results([cell("k", "native", "eager"), cell("k", "raw", "eager")])
    assert "No cell of this file shows a PyTorch fault" in render_findings(made, "r.jsonl", find_groups(made), {})


def test_every_known_report_is_cited_with_an_address_and_a_state():
    for report in KNOWN_REPORTS:
        assert report.url.startswith("https://github.com/pytorch/") and report.state and report.evidence


def test_a_bad_results_file_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    completed = harness_command(["findings", str(bad)], timeout=120)
    assert completed.returncode == 2 and completed.stderr.count("\n") == 1 and str(bad) in completed.stderr
