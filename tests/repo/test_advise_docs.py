"""docs/advise-and-repro.md shows the needs and fixes tables the code uses, and the styles and pipelines repro writes."""

from __future__ import annotations

from pathlib import Path

from harness.domain.repro import SUPPORTED_PIPELINES, SUPPORTED_STYLES
from harness.report.advice.advise import fixes_table, needs_table

DOC = (Path(__file__).resolve().parents[2] / "docs" / "advise-and-repro.md").read_text(encoding="utf-8")


def test_the_doc_holds_the_tables_advise_uses():
    """On failure paste the output of: python -c 'from harness.report.advice.advise import needs_table; print(needs_table())'
    (and the same for fixes_table)."""
    assert needs_table() in DOC
    assert fixes_table() in DOC


def test_the_doc_names_what_repro_supports():
    assert ", ".join(f"`{p}`" for p in SUPPORTED_PIPELINES) in " ".join(DOC.split())
    assert ", ".join(f"`{s}`" for s in SUPPORTED_STYLES) in DOC
