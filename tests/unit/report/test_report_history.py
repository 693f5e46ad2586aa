"""`history`: one column per version, newest first, and where a capability changed, with both sides' evidence."""

from __future__ import annotations

from pathlib import Path

import pytest
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


def test_a_build_is_kept_in_one_history_file_per_tier_and_torch_release() -> None:
    from harness.report.compare.history import HISTORY_DIR, HistoryError, history_file, torch_release

    assert [torch_release(v) for v in ("2.13.0+cu130", "2.13.0.dev20261203+cu130", "2.13.0rc2", "v2.12.1")] == [
        "2.13.0", "2.13.0", "2.13.0", "2.12.1"]
    assert history_file({"torch": "2.13.0.dev20261203+cu130", "tier": "gpu"}) == HISTORY_DIR / "gpu-torch2.13.0.jsonl"
    assert history_file({"torch": "2.12.0+cpu", "tier": "cpu"}, Path("h")) == Path("h") / "cpu-torch2.12.0.jsonl"
    with pytest.raises(HistoryError, match="'nightly'"):
        torch_release("nightly")


def test_reference_is_the_published_results_for_stable_else_the_release_history(make_results, tmp_path, capsys) -> None:
    nightly = make_results("n.jsonl", [cell("k", "raw", "compile", "pass")], environment(torch="2.13.0.dev1+cu130"))
    published = str(tmp_path / "published.jsonl")
    common = ["--dir", str(tmp_path), "--published", published]

    def answer(*argv: str) -> str:
        assert main(["reference", *argv, *common]) == 0
        return capsys.readouterr().out.strip()

    kept = str(tmp_path / "gpu-torch2.13.0.jsonl")
    assert answer(str(nightly), "--history-file") == kept
    assert answer(str(nightly), "--build", "nightly") == published  # no record of its release yet
    Path(kept).write_text("", encoding="utf-8")
    assert answer(str(nightly), "--build", "nightly") == kept
    assert answer("--torch", "2.13.0.dev2+cu130", "--build", "nightly") == kept
    assert answer(str(nightly)) == published  # the stable build: always the published results
    assert main(["reference", str(nightly), "--torch", "2.13.0", *common]) == 2
    assert main(["reference", "--torch", "nightly", *common]) == 2
    assert capsys.readouterr().err.count("\n") == 2
