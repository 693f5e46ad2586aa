"""`merge`: shards of one run become one file; anything that is not one run is refused."""

from __future__ import annotations

from pathlib import Path

from report_helpers import cell, environment

from harness.report.__main__ import main
from harness.report.markdown.render import render_report
from harness.results import read_results


def test_shards_join_and_identical_duplicates_collapse(make_results, tmp_path: Path) -> None:
    a = make_results("a.jsonl", [cell("k", "raw", "eager"), cell("k", "raw", "compile", "fail")])
    b = make_results("b.jsonl", [cell("k", "raw", "compile", "fail"), cell("k", "native", "eager")],
                     environment(hostname="node-2"), started="2025-01-01T00:00:00+00:00")
    out = tmp_path / "all.jsonl"
    assert main(["merge", str(a), str(b), "-o", str(out)]) == 0
    merged = read_results(out)
    assert [c.id for c in merged.cells] == ["k/native/eager", "k/raw/eager", "k/raw/compile"]
    assert merged.header["started"] == "2025-01-01T00:00:00+00:00"
    assert [s["source"] for s in merged.header["merged_from"]] == [str(a), str(b)]
    assert "Yes (1/1)" in render_report(merged)


def test_shards_pinned_to_different_gpus_of_different_hosts_join(make_results, tmp_path: Path) -> None:
    """The nightly's shards: one per runner, or two on a two-GPU host, each pinned to one GPU (measured on the H100s)."""
    a = make_results("a.jsonl", [cell("k", "raw", "eager")], environment(cuda_visible_devices="0", gpu_count=2))
    b = make_results("b.jsonl", [cell("k", "raw", "compile")], environment(cuda_visible_devices="1", gpu_count=1))
    assert main(["merge", str(a), str(b), "-o", str(tmp_path / "all.jsonl")]) == 0


def test_differing_environments_are_refused(make_results, tmp_path: Path, capsys) -> None:
    a = make_results("a.jsonl", [cell("k", "raw", "eager")])
    b = make_results("b.jsonl", [cell("k", "raw", "compile")], environment(triton="3.4.0"))
    assert main(["merge", str(a), str(b), "-o", str(tmp_path / "all.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {b}: environment differs from {a} in triton ('3.4.0' vs '3.5.0')\n"
    assert not (tmp_path / "all.jsonl").exists()


def test_the_same_cell_with_two_outcomes_is_refused(make_results, tmp_path: Path, capsys) -> None:
    a = make_results("a.jsonl", [cell("k", "raw", "eager")])
    b = make_results("b.jsonl", [cell("k", "raw", "eager", "crash")])
    assert main(["merge", str(a), str(b), "-o", str(tmp_path / "all.jsonl")]) == 2
    assert capsys.readouterr().err.startswith(f"error: k/raw/eager: {a} says pass, {b} says crash (")


def test_an_input_is_never_overwritten(make_results, capsys) -> None:
    a = make_results("a.jsonl", [cell("k", "raw", "eager")])
    b = make_results("b.jsonl", [cell("k", "raw", "compile")])
    before = a.read_bytes()
    assert main(["merge", str(a), str(b), "-o", str(a)]) == 2
    assert "would overwrite an input" in capsys.readouterr().err
    assert a.read_bytes() == before


def test_rerun_lets_a_later_file_replace_a_cell_and_records_it(make_results, tmp_path: Path, capsys) -> None:
    run = make_results("run.jsonl", [cell("k", "raw", "eager"), cell("k", "raw", "compile", "fail")])
    again = make_results("again.jsonl", [cell("k", "raw", "compile"), cell("k", "native", "eager")],
                         started="2025-01-02T00:00:00+00:00")
    out = tmp_path / "all.jsonl"
    assert main(["merge", str(run), str(again), "--rerun", "-o", str(out)]) == 0
    merged = read_results(out)
    assert {c.id: c.outcome for c in merged.cells} == {"k/native/eager": "pass", "k/raw/eager": "pass",
                                                       "k/raw/compile": "pass"}
    assert merged.header["replaced"] == [{"id": "k/raw/compile", "was": "fail", "now": "pass",
                                          "from": str(run), "by": str(again)}]
    assert f"replaced k/raw/compile: fail ({run}) -> pass ({again})" in capsys.readouterr().out


def test_without_rerun_the_refusal_says_how_to_join_a_later_run(make_results, tmp_path: Path, capsys) -> None:
    run = make_results("run.jsonl", [cell("k", "raw", "compile", "fail")])
    again = make_results("again.jsonl", [cell("k", "raw", "compile")])
    assert main(["merge", str(run), str(again), "-o", str(tmp_path / "all.jsonl")]) == 2
    assert "pass --rerun" in capsys.readouterr().err


def test_a_joined_file_joined_again_names_its_runs_not_itself(make_results, tmp_path: Path) -> None:
    a = make_results("a.jsonl", [cell("k", "raw", "eager")])
    b = make_results("b.jsonl", [cell("k", "raw", "compile")])
    first, second = tmp_path / "ab.jsonl", tmp_path / "abc.jsonl"
    assert main(["merge", str(a), str(b), "-o", str(first)]) == 0
    c = make_results("c.jsonl", [cell("k", "raw", "compile", "fail")])
    assert main(["merge", str(first), str(c), "--rerun", "-o", str(second)]) == 0
    header = read_results(second).header
    assert [part["source"] for part in header["merged_from"]] == [str(a), str(b), str(c)]
    assert [change["id"] for change in header["replaced"]] == ["k/raw/compile"]
