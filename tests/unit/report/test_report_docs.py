"""`docs`: only the marked region of a document is rewritten; --check changes nothing."""

from __future__ import annotations

from pathlib import Path

from report_helpers import cell, mixed_cells

from harness.report.__main__ import main
from harness.report.upkeep.docs import BEGIN, END

DOCUMENT = f"# My README\r\n\r\nBefore.\r\n\r\n{BEGIN}\nold chart\n{END}\r\n\r\nAfter.\r\n"


def test_update_then_check_is_fresh(make_results, tmp_path: Path, capsys) -> None:
    run = make_results("r.jsonl", mixed_cells())
    readme = tmp_path / "README.md"
    readme.write_bytes(DOCUMENT.encode())
    assert main(["docs", str(readme), "--results", str(run)]) == 0
    text = readme.read_bytes().decode()
    assert text.startswith("# My README\r\n\r\nBefore.\r\n\r\n" + BEGIN + "\nMeasured with torch 2.11.0+cu130")
    assert text.endswith(END + "\r\n\r\nAfter.\r\n") and "old chart" not in text
    assert "| Supports inference" in text and "1. fail at run: RuntimeError: element N of tensors" in text
    assert main(["docs", str(readme), "--results", str(run), "--check"]) == 0
    assert capsys.readouterr().out == ""


def test_check_reports_stale_with_a_diff_and_changes_nothing(make_results, tmp_path: Path, capsys) -> None:
    run = make_results("r.jsonl", [cell("add", "raw", "eager")])
    readme = tmp_path / "README.md"
    readme.write_text(DOCUMENT)
    before = readme.read_bytes()
    assert main(["docs", str(readme), "--results", str(run), "--check"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"--- {readme} (current)\n+++ {readme} (expected)\n")
    assert "-old chart" in out and "+| Supports inference" in out
    assert readme.read_bytes() == before


def test_results_change_makes_docs_stale(make_results, tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(DOCUMENT)
    assert main(["docs", str(readme), "--results", str(make_results("a.jsonl", [cell("a", "raw", "eager")]))]) == 0
    newer = make_results("b.jsonl", [cell("a", "raw", "eager", "fail")])
    assert main(["docs", str(readme), "--results", str(newer), "--check"]) == 1


def test_missing_or_unbalanced_markers_exit_2(make_results, tmp_path: Path, capsys) -> None:
    run = make_results("r.jsonl", [cell("add", "raw", "eager")])
    for name, text in [
        ("none.md", "no markers here\n"),
        ("two_begins.md", f"{BEGIN}\n{BEGIN}\n{END}\n"),
        ("no_end.md", f"{BEGIN}\nchart\n"),
        ("reversed.md", f"{END}\n{BEGIN}\n"),
    ]:
        path = tmp_path / name
        path.write_text(text)
        for extra in ([], ["--check"]):
            assert main(["docs", str(path), "--results", str(run), *extra]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and err.startswith(f"error: {path}: expected one")
        assert path.read_text() == text


def test_a_marker_quoted_inside_a_line_is_neither_counted_nor_rewritten(make_results, tmp_path: Path) -> None:
    """The README quotes the markers in its error table; only the region between whole-line markers changes."""
    quoted = f"| error | `expected one '{BEGIN}' followed by one '{END}'` |\n"
    readme = tmp_path / "README.md"
    readme.write_text(quoted + f"intro\n{BEGIN}\nold chart\n{END}\n" + quoted)
    assert main(["docs", str(readme), "--results", str(make_results("a.jsonl", [cell("a", "raw", "eager")]))]) == 0
    text = readme.read_text()
    assert text.startswith(quoted + f"intro\n{BEGIN}\n") and text.endswith(f"\n{END}\n" + quoted)
    assert "old chart" not in text
