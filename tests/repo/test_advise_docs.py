"""docs/advise-and-repro.md shows the needs and fixes tables the code uses, and a measured repro of every pipeline."""

from __future__ import annotations

from pathlib import Path

from harness.report.advice.advise import fixes_table, needs_table
from harness.vocab import PIPELINES

DOC = (Path(__file__).resolve().parents[2] / "docs" / "advise-and-repro.md").read_text(encoding="utf-8")


def test_the_doc_holds_the_tables_advise_uses():
    """On failure paste the output of: python -c 'from harness.report.advice.advise import needs_table; print(needs_table())'
    (and the same for fixes_table)."""
    assert needs_table() in DOC
    assert fixes_table() in DOC


def test_the_docs_measured_table_has_a_repro_of_every_pipeline():
    table = DOC.split("<!-- repro-cpu-table -->")[1].split("<!-- /repro-cpu-table -->")[0]
    for pipeline in PIPELINES:
        assert f"/{pipeline}`" in table, pipeline
