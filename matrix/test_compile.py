"""The compile pipelines: compile, compile_fullgraph, compile_fullgraph_backward, compile_dynamic, cudagraphs, compile_visible."""

from harness.vocab import PIPELINE_FAMILIES

PIPELINES = PIPELINE_FAMILIES["compile"]


def test_cell(matrix_cell, matrix_run):
    matrix_run(matrix_cell)
