"""`diff`: regressions fail the run (exit 1); everything else is reported."""

from __future__ import annotations

from pathlib import Path

from report_helpers import cell, check_golden, results

from harness.report.__main__ import main
from harness.report.compare.diff import diff_results, render_diff

OLD = [
    cell("a", "raw", "eager"),
    cell("a", "raw", "compile", "fail", error_type="Unsupported", error="old message"),
    cell("a", "custom_op", "eager", "fail"),
    cell("a", "custom_op", "compile", "fail"),
    cell("a", "triton_op", "eager"),
]
NEW = [
    cell("a", "raw", "eager", "wrong"),
    cell("a", "raw", "compile", "fail", error_type="Unsupported", error="new message\nmore"),
    cell("a", "custom_op", "eager"),
    cell("a", "custom_op", "compile", "crash"),
    cell("a", "autograd_function", "eager"),
]


def test_each_change_lands_in_its_section() -> None:
    sections = diff_results(results(OLD), results(NEW)).sections
    assert {title: [c.id for c in changes] for title, changes in sections.items()} == {
        "regressions": ["a/raw/eager"],
        "newly supported": ["a/custom_op/eager"],
        "changed errors": ["a/raw/compile"],
        "changed outcomes": ["a/custom_op/compile"],
        "cells added": ["a/autograd_function/eager"],
        "cells removed": ["a/triton_op/eager"],
        "flaky": [],
    }


def test_exit_1_on_regression_and_0_otherwise(make_results, capsys) -> None:
    old, new = make_results("old.jsonl", OLD), make_results("new.jsonl", NEW)
    assert main(["diff", str(old), str(new)]) == 1
    out = capsys.readouterr().out
    assert "## Regressions (1): pass -> not pass" in out
    assert "| a/raw/eager | pass" in out.replace("  ", "")
    assert main(["diff", str(new), str(old)]) == 1  # the reverse loses custom_op/eager
    capsys.readouterr()
    improved = make_results("improved.jsonl", [c for c in NEW if c.id != "a/raw/eager"] + [cell("a", "raw", "eager")])
    assert main(["diff", str(old), str(improved)]) == 0
    assert main(["diff", str(old), str(old)]) == 0
    assert "0 regressions, 0 newly supported" in capsys.readouterr().out


def test_text_format_and_output_file(make_results, tmp_path: Path) -> None:
    old, new = make_results("old.jsonl", OLD), make_results("new.jsonl", NEW)
    out = tmp_path / "diff.txt"
    assert main(["diff", str(old), str(new), "--format", "text", "-o", str(out)]) == 1
    text = out.read_text()
    assert "regressions (1): pass -> not pass\n  a/raw/eager: pass -> wrong at check" in text
    assert "changed errors (1)" in text and "new message more" not in text and "new message" in text


def test_diff_golden() -> None:
    check_golden("diff.md", render_diff(results(OLD), results(NEW), "old.jsonl", "new.jsonl"))
    check_golden("diff.txt", render_diff(results(OLD), results(NEW), "old.jsonl", "new.jsonl", markdown=False))


def test_an_error_that_differs_only_in_its_numbers_is_no_change() -> None:
    """The kernel side table's index in an exported program's error counts what the worker ran before it."""
    old = cell("a", "raw", "export_roundtrip", "fail", error_type="AssertionError",
               error="run in a fresh process: Kernel index 86 not found in id_to_kernel")
    new = cell("a", "raw", "export_roundtrip", "fail", error_type="AssertionError",
               error="run in a fresh process: Kernel index 1 not found in id_to_kernel")
    assert diff_results(results([old]), results([new])).sections["changed errors"] == []
    other = cell("a", "raw", "export_roundtrip", "fail", error_type="AssertionError", error="something else")
    assert [c.id for c in diff_results(results([old]), results([other])).sections["changed errors"]] == ["a/raw/export_roundtrip"]

