"""`history`: one column per version, newest first, and where a capability changed, with both sides' evidence."""

from __future__ import annotations

from pathlib import Path

from report_helpers import cell, check_golden, environment, results

from harness.report.__main__ import main
from harness.report.compare.history import render_history, version_key


def test_versions_order_numerically_with_prereleases_first() -> None:
    versions = ["2.10.0", "2.6.0", "2.6.0a0+git12", "2.11.0+cu130", "2.6.0.post1", "2.9.1"]
    assert sorted(versions, key=version_key) == ["2.6.0a0+git12", "2.6.0", "2.6.0.post1", "2.9.1", "2.10.0",
                                                 "2.11.0+cu130"]


def run_at(torch: str, outcome: str, tier: str = "gpu", kernel: str = "k"):
    return (f"{torch}.jsonl", results([cell(kernel, "raw", "compile", outcome)], environment(torch=torch, tier=tier)))


def row_of(text: str, capability: str, style: str) -> list[str]:
    row = next(line for line in text.splitlines() if line.startswith(f"| {capability} ") and f"| {style} " in line)
    return [part.strip() for part in row.strip("|").split("|")]


def test_columns_are_newest_first_and_a_change_names_both_versions_with_a_footnote() -> None:
    text = render_history([run_at("2.10.0", "pass"), run_at("2.5.1", "fail"), run_at("2.6.0", "pass")])
    assert row_of(text, "Supports torch.compile", "raw") == [
        "Supports torch.compile", "raw", "Yes (1/1)", "Yes (1/1) \\[1\\]", "No (0/1)", "No up to 2.5.1, Yes from 2.6.0 \\[1\\]"]
    header = next(line for line in text.splitlines() if line.startswith("| Capability"))
    assert header.index("torch 2.10.0") < header.index("torch 2.6.0") < header.index("torch 2.5.1")
    note = text[text.index("\n1. "):]
    assert "torch 2.5.1 / triton 3.5.0: No (0/1) — fail at run: RuntimeError:" in note
    assert "torch 2.6.0 / triton 3.5.0: Yes (1/1)" in note


def test_a_kernel_only_one_version_ran_is_never_a_change() -> None:
    older = run_at("2.5.1", "pass")
    newer = ("2.6.0.jsonl", results([cell("k", "raw", "compile"), cell("new", "raw", "compile", "fail")],
                                    environment(torch="2.6.0")))
    assert row_of(render_history([older, newer]), "Supports torch.compile", "raw")[-1] == ""


def test_tiers_get_separate_tables(tmp_path: Path, make_results, capsys) -> None:
    paths = [make_results(f"{t}.jsonl", [cell("k", "raw", "eager")], environment(tier=t)) for t in ("cpu", "gpu")]
    out = tmp_path / "history.md"
    assert main(["history", *map(str, paths), "-o", str(out)]) == 0
    text = out.read_text()
    assert text.index("## GPU tier") < text.index("## CPU interpreter tier")


def test_two_files_of_one_version_merge_into_one_column(make_results, capsys) -> None:
    paths = [make_results("a.jsonl", [cell("a", "raw", "eager")]), make_results("b.jsonl", [cell("b", "raw", "eager")])]
    assert main(["history", *map(str, paths)]) == 0
    out = capsys.readouterr().out
    assert out.count("torch 2.11.0+cu130 / triton 3.5.0") == 1 and "Yes (2/2)" in out


def test_history_golden() -> None:
    runs = [run_at("2.10.0", "pass"), run_at("2.5.1", "fail"), run_at("2.6.0", "pass"), run_at("2.6.0", "skip", "cpu")]
    check_golden("history.md", render_history(runs))
