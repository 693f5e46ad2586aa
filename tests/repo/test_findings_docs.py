"""docs/findings.md shows the known-reports table the code uses."""

from __future__ import annotations

from pathlib import Path

from harness.report.markdown.known_reports_markdown import known_reports_table

DOC = (Path(__file__).resolve().parents[2] / "docs" / "findings.md").read_text(encoding="utf-8")


def test_the_doc_holds_the_known_reports_table():
    """On failure paste the output of:
    python -c 'from harness.report.markdown.known_reports_markdown import known_reports_table as t; print(t())'"""
    assert known_reports_table() in DOC
