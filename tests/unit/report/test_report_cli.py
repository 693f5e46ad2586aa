"""Bad input: one `error:` line, exit 2, and no existing output file truncated."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from report_helpers import cell

from harness.report.__main__ import main


def test_report_to_stdout_and_file(make_results, tmp_path: Path, capsys) -> None:
    run = make_results("r.jsonl", [cell("k", "raw", "eager")])
    assert main(["report", str(run)]) == 0
    printed = capsys.readouterr().out
    assert main(["report", str(run), "-o", str(tmp_path / "out" / "r.md")]) == 0
    assert (tmp_path / "out" / "r.md").read_text() == printed
    assert not [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("argv", [
    ["report", "{missing}"],
    ["report", "{bad}", "-o", "{existing}"],
    ["docs", "{existing}", "--results", "{missing}"],
    ["diff", "{good}", "{bad}", "-o", "{existing}"],
    ["baseline", "{missing}"],
    ["merge", "{good}", "{missing}", "-o", "{existing}"],
    ["history", "{good}", "{bad}", "-o", "{existing}"],
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], make_results, tmp_path: Path, capsys) -> None:
    paths = {
        "missing": tmp_path / "missing.jsonl",
        "bad": tmp_path / "bad.jsonl",
        "good": make_results("good.jsonl", [cell("k", "raw", "eager")]),
        "existing": tmp_path / "existing.md",
    }
    paths["bad"].write_text('{"record": "header", "schema": 999}\n')
    paths["existing"].write_text("keep me\n")
    assert main([part.format(**{k: str(v) for k, v in paths.items()}) for part in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert paths["existing"].read_text() == "keep me\n"


def test_unwritable_output_is_exit_2(make_results, tmp_path: Path, capsys) -> None:
    run = make_results("r.jsonl", [cell("k", "raw", "eager")])
    (tmp_path / "a_file").write_text("x")
    assert main(["report", str(run), "-o", str(tmp_path / "a_file" / "r.md")]) == 2
    assert capsys.readouterr().err.startswith(f"error: cannot write {tmp_path / 'a_file' / 'r.md'}: ")


def test_a_failed_write_keeps_the_old_file(make_results, tmp_path: Path, monkeypatch, capsys) -> None:
    run = make_results("r.jsonl", [cell("k", "raw", "eager")])
    existing = tmp_path / "r.md"
    existing.write_text("old report\n")

    def refuse(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    assert main(["report", str(run), "-o", str(existing)]) == 2
    assert capsys.readouterr().err == f"error: cannot write {existing}: disk full\n"
    assert existing.read_text() == "old report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl", "r.md"]
