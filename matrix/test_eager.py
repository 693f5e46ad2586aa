"""The eager pipelines: eager, eager_backward."""

from harness.vocab import PIPELINE_FAMILIES

PIPELINES = PIPELINE_FAMILIES["eager"]


def test_cell(matrix_cell, matrix_run):
    matrix_run(matrix_cell)
