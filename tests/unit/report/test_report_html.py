"""The HTML page's data and its CLI, without a browser (tests/integration/test_html_page.py opens it in one)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from report_helpers import cell, environment, results

from harness.cli import main
from harness.report.page.html import page_data, render_html


def test_a_message_cannot_close_the_data_script_or_inject_markup() -> None:
    hostile = cell("add", "raw", "eager", "fail", stage="run", error_type="E", error="</script><img src=x onerror=alert(1)>")
    page = render_html([("r.jsonl", results([hostile]))])
    data = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1)
    assert "<" not in data and json.loads(data)["cells"][0]["message"].startswith("</script>")


def test_versions_are_newest_first_and_two_of_them_give_a_history() -> None:
    older = ("old.jsonl", results([cell("add", "raw", "eager", "fail")], environment(torch="2.12.0")))
    newer = ("new.jsonl", results([cell("add", "raw", "eager")], environment(torch="2.13.0")))
    data = page_data([older, newer])
    assert data["versions"] == ["torch 2.13.0 / triton 3.5.0", "torch 2.12.0 / triton 3.5.0"]
    inference = next(r for r in data["history"] if r["capability"] == "Supports inference" and r["style"] == "raw")
    assert inference["words"] == ["Yes", "No"] and inference["changed_at"] == [0]
    assert page_data([newer])["history"] == []


def test_cli_writes_the_page_and_a_bad_file_is_one_line_and_exit_2(tmp_path: Path, make_results, capsys) -> None:
    run = make_results("r.jsonl", [cell("add", "raw", "eager")])
    assert main(["html", str(run), "-o", str(tmp_path / "p.html")]) == 0
    assert (tmp_path / "p.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    assert main(["html", str(bad), "-o", str(tmp_path / "q.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "bad.jsonl" in err and err.count("\n") == 1


def test_call_site_cells_stay_out_of_the_pages_chart_heatmap_and_png(tmp_path: Path) -> None:
    """A call-site cell has its style and pipeline: counted in, it made the page's chart say 102/140 where the
    Markdown chart said 34/35, and it landed on the main cell's square of the heatmap."""
    pytest = __import__("pytest")
    from harness.report.markdown.render import render_report
    from harness.vocab import cell_id

    def sited(site: str, outcome: str):
        made = cell("add", "autograd_function", "compile_fullgraph", outcome)
        made.id, made.call_site = cell_id("add", "autograd_function", "compile_fullgraph", site), site
        return made

    measured = results([cell("add", "autograd_function", "compile_fullgraph"), sited("direct", "pass"),
                        sited("module_attribute", "fail")])
    data = page_data([("gpu.jsonl", measured)])
    fullgraph = next(row for row in data["chart"]["rows"] if row["capability"] == "Supports torch.compile(fullgraph=True)")
    assert "Yes (1/1)" in fullgraph["verdicts"]
    assert "Yes (1/1)" in render_report(measured)  # the same verdict as the Markdown chart
    assert [(c["style"], c["outcome"]) for c in data["cells"]] == [("autograd_function", "pass")]
    from harness.report.compare.history import version_columns
    from harness.report.page.heatmap_png import heatmap_cells

    newest = version_columns([("gpu.jsonl", measured)])[0]
    assert [c.id for c in heatmap_cells(newest)] == ["add/autograd_function/compile_fullgraph"]
    pytest.importorskip("matplotlib")
    from harness.report.page.heatmap_png import write_heatmap_png

    assert write_heatmap_png([("gpu.jsonl", measured)], tmp_path / "h.png").read_bytes().startswith(b"\x89PNG")
