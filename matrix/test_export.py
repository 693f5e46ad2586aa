"""The export pipelines: export_strict, export_nonstrict, export_dynamic, export_roundtrip, export_roundtrip_bare."""

from harness.vocab import PIPELINE_FAMILIES

PIPELINES = PIPELINE_FAMILIES["export"]


def test_cell(matrix_cell, matrix_run):
    matrix_run(matrix_cell)
