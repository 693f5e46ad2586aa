"""The eager pipelines: eager, eager_backward, eager_inputs (generated sizes, dtypes and strided views)."""

from harness.vocab import PIPELINE_FAMILIES

PIPELINES = PIPELINE_FAMILIES["eager"]


def test_cell(matrix_cell, matrix_run):
    matrix_run(matrix_cell)
