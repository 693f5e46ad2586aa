"""The subsystems pipelines: flop_counter, cpu_fallback, tensor_subclass, vmap, opcheck."""

from harness.vocab import PIPELINE_FAMILIES

PIPELINES = PIPELINE_FAMILIES["subsystems"]


def test_cell(matrix_cell, matrix_run):
    matrix_run(matrix_cell)
