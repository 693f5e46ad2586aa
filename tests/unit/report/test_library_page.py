"""`harness library-page`: one library's page, advise for the three needs of reports/ecosystem/ and then the chart,
nested under the page's own title (docs/ecosystem.md)."""

from __future__ import annotations

import re
from pathlib import Path

from harness.cli import main
from harness.report.advice.library_page import LIBRARY_NEEDS, render_library_page
from harness.results import read_results

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "cpu-torch2.13.0+cpu-triton3.7.1-ci-subset.jsonl"


def test_the_page_has_one_title_then_advise_for_each_need_then_the_chart():
    page = render_library_page(read_results(FIXTURE), "results.jsonl", "Mylib 1.0 on the CPU tier")
    headings = re.findall(r"^(#+) (.*)$", page, re.M)
    assert [level for level, _ in headings].count("#") == 1 and headings[0] == ("#", "Mylib 1.0 on the CPU tier")
    second = [text for level, text in headings if level == "##"]
    assert second == [f"{question} (`advise --needs {needs}`)" for question, needs in LIBRARY_NEEDS] + [
        "The chart and the evidence"]
    assert "Which API should I use?" in page and page.count("### Which style meets these needs") == 3


def test_the_command_writes_the_page(tmp_path, capsys):
    output = tmp_path / "page.md"
    assert main(["library-page", str(FIXTURE), "--title", "Mylib", "-o", str(output)]) == 0
    assert output.read_text().startswith("# Mylib\n")
    assert main(["library-page", str(FIXTURE), "--title", "Mylib", "-o", str(FIXTURE)]) == 2  # never over its input
    assert "would overwrite an input" in capsys.readouterr().err
