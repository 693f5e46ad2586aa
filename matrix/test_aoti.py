"""The aoti pipelines: aoti, aoti_strict, aoti_fresh_process."""

from harness.vocab import PIPELINE_FAMILIES

PIPELINES = PIPELINE_FAMILIES["aoti"]


def test_cell(matrix_cell, matrix_run):
    matrix_run(matrix_cell)
