"""`history`: capabilities across versions, ordered by version, with the first version that holds."""

from __future__ import annotations

from pathlib import Path

from report_helpers import cell, check_golden, environment, results

from harness.report.__main__ import main
from harness.report.history import NEVER, holds_since, render_history, version_key


def test_versions_order_numerically_with_prereleases_first() -> None:
    versions = ["2.10.0", "2.6.0", "2.6.0a0+git12", "2.11.0+cu130", "2.6.0.post1", "2.9.1"]
    assert sorted(versions, key=version_key) == ["2.6.0a0+git12", "2.6.0", "2.6.0.post1", "2.9.1", "2.10.0",
                                                 "2.11.0+cu130"]


def test_holds_since_is_the_start_of_the_final_run_of_yes() -> None:
    assert holds_since(["a", "b", "c", "d"], ["No", "Yes", "No", "Yes"]) == "d"
    assert holds_since(["a", "b", "c"], ["Yes", "Yes", "Yes"]) == "a"
    assert holds_since(["a", "b"], ["Yes", "skip"]) == NEVER


def run_at(torch: str, outcome: str, tier: str = "gpu"):
    return (f"{torch}.jsonl", results([cell("k", "raw", "compile", outcome)], environment(torch=torch, tier=tier)))


def test_first_version_from_which_it_holds() -> None:
    text = render_history([run_at("2.10.0", "pass"), run_at("2.5.1", "fail"), run_at("2.6.0", "pass")])
    row = next(line for line in text.splitlines() if line.startswith("| Supports torch.compile ") and "| raw" in line)
    cells = [part.strip() for part in row.strip("|").split("|")]
    assert cells == ["Supports torch.compile", "raw", "No (0/1)", "Yes (1/1)", "Yes (1/1)",
                     "torch 2.6.0 / triton 3.5.0"]
    header = next(line for line in text.splitlines() if line.startswith("| Capability"))
    assert header.index("torch 2.5.1") < header.index("torch 2.6.0") < header.index("torch 2.10.0")


def test_tiers_get_separate_tables(tmp_path: Path, make_results, capsys) -> None:
    paths = [make_results(f"{t}.jsonl", [cell("k", "raw", "eager")], environment(tier=t)) for t in ("cpu", "gpu")]
    out = tmp_path / "history.md"
    assert main(["history", *map(str, paths), "-o", str(out)]) == 0
    text = out.read_text()
    assert text.index("## GPU tier") < text.index("## CPU interpreter tier")


def test_two_files_for_one_version_are_refused(make_results, capsys) -> None:
    paths = [make_results(name, [cell("k", "raw", "eager")]) for name in ("a.jsonl", "b.jsonl")]
    assert main(["history", *map(str, paths)]) == 2
    assert "both are torch 2.11.0+cu130 / triton 3.5.0; merge them" in capsys.readouterr().err


def test_history_golden() -> None:
    runs = [run_at("2.10.0", "pass"), run_at("2.5.1", "fail"), run_at("2.6.0", "pass"), run_at("2.6.0", "skip", "cpu")]
    check_golden("history.md", render_history(runs))
