"""A skipped CUDA graph keeps Inductor's own reason (harness.domain.pipelines.compile.recording_cudagraph_skips).

Inductor reports each skip through one function that each of its modules imports by name; the harness wraps it
in every one. On the CPU tier no graph can hold CUDA tensors, so the tests call it the way Inductor does.
"""

import importlib

import pytest
from torch._dynamo.utils import counters

from harness.domain.pipelines.compile import CUDAGRAPH_SKIP_FUNCTION, CUDAGRAPH_SKIP_MODULES, recording_cudagraph_skips


@pytest.mark.parametrize("module_name", CUDAGRAPH_SKIP_MODULES)
def test_a_skip_reported_from_any_inductor_module_is_recorded_and_still_counted(module_name):
    module = importlib.import_module(module_name)
    counters.clear()
    with recording_cudagraph_skips() as reasons:
        getattr(module, CUDAGRAPH_SKIP_FUNCTION)("skipping cudagraphs due to mutated inputs (1 instances)")
    assert reasons == ["skipping cudagraphs due to mutated inputs (1 instances)"]
    assert counters["inductor"]["cudagraph_skips"] == 1


def test_the_patch_is_undone():
    import torch._inductor.compile_fx as compile_fx

    before = compile_fx.log_cudagraph_skip_and_bump_counter
    with recording_cudagraph_skips():
        assert compile_fx.log_cudagraph_skip_and_bump_counter is not before
    assert compile_fx.log_cudagraph_skip_and_bump_counter is before
