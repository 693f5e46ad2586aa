"""reports/history.md is what every committed results file renders to, and `refresh` keeps the docs so.

Also: how files of one torch/triton share a history column (shards, runs of other kernels, re-runs,
the same versions with and without LD_PRELOAD), so that the headers name versions and nothing else.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.report.compare.history import render_history
from harness.report.upkeep.docs import BEGIN, END
from harness.report.upkeep.refresh import HISTORY, history_sources, main, refresh_history
from harness.results import CellResult, ResultsFile

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
CPU = FIXTURES / "cpu-torch2.13.0+cpu-triton3.7.1.jsonl"
GPU = FIXTURES / "gpu-h100-torch2.11.0+cu130-triton3.6.0-libstdcxx-preload.jsonl"


def test_reports_history_is_fresh() -> None:
    stale, diff = refresh_history(REPO, check=True)
    assert not stale, "reports/history.md is stale; run `nox -s docs`\n" + diff[-3000:]


def test_history_is_built_from_the_published_results_and_the_version_runs_not_test_fixtures() -> None:
    sources = {REPO / path for path in history_sources(REPO)}
    assert REPO / "reports" / "gpu-results.jsonl" in sources
    assert set((REPO / "reports" / "history").glob("*.jsonl")) <= sources
    assert not set(FIXTURES.glob("*.jsonl")) & sources


def test_the_ecosystem_results_stay_out_of_the_history(tmp_path: Path) -> None:
    """Other libraries' kernels, measured with the published torch, would merge into its column."""
    (tmp_path / "reports" / "ecosystem").mkdir(parents=True)
    for name in ("reports/gpu-results.jsonl", "reports/ecosystem/liger-results.jsonl"):
        shutil.copy(GPU, tmp_path / name)
    assert [str(path) for path in history_sources(tmp_path)] == ["reports/gpu-results.jsonl"]


def make_checkout(root: Path) -> Path:
    (root / "tests" / "fixtures").mkdir(parents=True)
    (root / "reports").mkdir()
    shutil.copy(CPU, root / "tests" / "fixtures" / CPU.name)
    (root / "reports" / "history").mkdir()
    shutil.copy(CPU, root / "reports" / "history" / CPU.name)
    (root / "reports" / "api-choice.md").write_text(f"# Chart\n\n{BEGIN}\nold chart\n{END}\n\nkept\n", encoding="utf-8")
    (root / HISTORY).write_text("old history\n", encoding="utf-8")
    return root


def test_check_fails_on_stale_docs_changes_nothing_then_passes_after_refresh(tmp_path: Path, capsys) -> None:
    repo = make_checkout(tmp_path)
    before = {p: (repo / p).read_bytes() for p in ("reports/api-choice.md", HISTORY)}
    assert main(["--repo", str(repo), "--results", str(GPU), "--check"]) == 1
    out = capsys.readouterr().out
    assert "reports/api-choice.md: stale" in out and "reports/history.md: stale" in out and "-old chart" in out
    assert {p: (repo / p).read_bytes() for p in before} == before
    assert main(["--repo", str(repo), "--results", str(GPU)]) == 0
    assert main(["--repo", str(repo), "--results", str(GPU), "--check"]) == 0
    chart = (repo / "reports" / "api-choice.md").read_text(encoding="utf-8")
    assert "old chart" not in chart and chart.endswith(f"{END}\n\nkept\n") and "H100" in chart
    assert (repo / HISTORY).read_text(encoding="utf-8") == render_history([(f"reports/history/{CPU.name}", read(CPU))])


def test_a_document_with_broken_markers_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    repo = make_checkout(tmp_path)
    (repo / "README.md").write_text(f"{BEGIN}\nno end marker\n", encoding="utf-8")
    assert main(["--repo", str(repo), "--results", str(GPU)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "README.md" in err and err.count("\n") == 1


def test_ignored_local_runs_stay_out_of_the_committed_history(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = make_checkout(tmp_path)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("/reports/results-*.jsonl\n", encoding="utf-8")
    shutil.copy(GPU, repo / "reports" / "results-local.jsonl")  # a local run: ignored
    shutil.copy(GPU, repo / "reports" / "gpu-results.jsonl")  # new, not ignored: it will be committed
    assert history_sources(repo) == [Path("reports/gpu-results.jsonl"), Path("reports/history") / CPU.name]


def read(path: Path) -> ResultsFile:
    lines = path.read_text(encoding="utf-8").splitlines()
    return ResultsFile(header=json.loads(lines[0]), cells=[CellResult.from_record(json.loads(x)) for x in lines[1:]])


def run(kernel: str, started: str, **environment: object) -> ResultsFile:
    env = {"torch": "2.11.0+cu130", "triton": "3.6.0", "tier": "gpu", "gpu": "NVIDIA H100", **environment}
    cell = CellResult(id=f"{kernel}/raw/eager", kernel=kernel, style="raw", pipeline="eager", outcome="pass")
    return ResultsFile(header={"environment": env, "started": started}, cells=[cell])


def header_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("| Capability"))


def test_runs_of_other_kernels_in_one_version_share_a_column() -> None:
    text = render_history([("a", run("add", "t1", cpu_count=16)), ("b", run("sin", "t2", cpu_count=2))])
    assert header_line(text).count("torch 2.11.0+cu130") == 1
    assert "Yes (2/2)" in text


def test_headers_name_versions_only_whatever_else_the_environments_differ_in() -> None:
    text = render_history([("a", run("add", "t1", ld_preload="/lib/libstdc++.so.6")), ("b", run("add", "t2")),
                           ("c", run("add", "t3", torch="2.12.0+cu130"))])
    assert [part.strip() for part in header_line(text).strip("|").split("|")] == [
        "Capability", "style", "torch 2.12.0+cu130 / triton 3.6.0", "torch 2.11.0+cu130 / triton 3.6.0", "changed"]


def test_a_rerun_of_one_version_supersedes_the_earlier_run_cell_by_cell() -> None:
    earlier = run("add", "2026-01-01")
    later = run("add", "2026-02-01")
    later.cells[0] = CellResult(id="add/raw/eager", kernel="add", style="raw", pipeline="eager", outcome="fail",
                                stage="run", error_type="RuntimeError", error="boom")
    text = render_history([("later", later), ("earlier", earlier)])
    assert "No (0/1)" in text and "Yes (1/1)" not in text


def test_each_device_family_gets_its_own_table() -> None:
    text = render_history([("a", run("add", "t1")), ("b", run("add", "t2", gpu="NVIDIA A100-SXM4-80GB"))])
    assert "## GPU tier, H100" in text and "## GPU tier, A100" in text


def test_a_document_that_only_quotes_the_marker_is_not_a_marked_document():
    from harness.report.upkeep.docs import BEGIN, has_marker_line

    assert has_marker_line(f"intro\n{BEGIN}\nchart\n")
    assert not has_marker_line(f"| error | `expected one '{BEGIN}' followed by ...` |\n")


def test_the_committed_page_is_fresh_and_self_contained() -> None:
    from harness.report.markdown.committed import COMMITTED_GPU_RESULTS
    from harness.report.upkeep.refresh import MATRIX_PAGE, refresh_page

    stale, diff = refresh_page(REPO, COMMITTED_GPU_RESULTS, check=True)
    assert not stale, diff + "run `nox -s docs`"
    page = (REPO / MATRIX_PAGE).read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page), "the page must open from disk with no network"


def test_the_report_side_never_imports_torch() -> None:
    code = ("import sys, harness.report.page.html, harness.report.page.html_cli, harness.report.compare.history, "
            "harness.report.upkeep.refresh, harness.report.markdown.chart, harness.report.markdown.footnotes; "
            "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_every_committed_version_of_the_cpu_history_measured_the_same_cells() -> None:
    """The history compares versions, so each file under reports/history/ holds the one fixed selection."""
    files = sorted((REPO / "reports" / "history").glob("cpu-torch*.jsonl"))
    assert files, "no CPU history committed"
    ids = {path.name: {cell.id for cell in read(path).cells} for path in files}
    first = ids[files[0].name]
    assert len(first) == 6 * 6 * 6  # 6 kernels x 6 styles x 6 pipelines
    assert all(cells == first for cells in ids.values()), {name: len(cells) for name, cells in ids.items()}
    for path in files:
        results = read(path)
        assert path.name == f"cpu-torch{results.environment['torch'].split('+')[0]}.jsonl"
        assert results.environment["tier"] == "cpu"


def test_gpu_history_files_add_their_releases_to_the_gpu_table_beside_the_cpu_one(tmp_path: Path) -> None:
    """reports/history/gpu-torch<release>.jsonl (the nightly's builds) are columns of the GPU tier's table."""
    repo = make_checkout(tmp_path)
    shutil.copy(GPU, repo / "reports" / "gpu-results.jsonl")
    lines = GPU.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["environment"] = {**header["environment"], "torch": "2.12.0.dev20261203+cu130"}
    (repo / "reports" / "history" / "gpu-torch2.12.0.jsonl").write_text(
        "\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    assert refresh_history(repo, check=False)[0]
    text = (repo / HISTORY).read_text(encoding="utf-8")
    gpu, cpu = text.split("## GPU tier, H100", 1)[1].split("## CPU", 1)
    columns = header_line(gpu)
    assert columns.index("torch 2.12.0.dev20261203+cu130") < columns.index("torch 2.11.0+cu130")
    assert "torch 2.13.0+cpu" in header_line(cpu) and "cu130" not in header_line(cpu)
