"""Calling a spec's make_inputs and reference once at load: a broken spec is named before any cell runs,
and a working one is never refused (the GPU tier checks on meta tensors and gives up where meta cannot say)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from harness.domain.registry import load_specs
from harness.domain.spec_check import SpecCallError, check_spec_calls
from kernels import add


@pytest.mark.parametrize("tier", ["cpu", "gpu"])
def test_every_catalogue_spec_passes_on_both_tiers(tier):
    for spec in load_specs(entry_points=False).values():
        check_spec_calls(spec, tier)


@pytest.mark.parametrize("tier", ["cpu", "gpu"])
def test_a_reference_with_a_bug_is_named_with_its_field(tier):
    spec = dataclasses.replace(add.SPEC, name="typo", reference=lambda x, y: torch.addd(x, y))
    with pytest.raises(SpecCallError, match=r"KernelSpec 'typo': field 'reference' raised .*AttributeError"):
        check_spec_calls(spec, tier)


def test_on_the_gpu_tier_what_meta_tensors_cannot_answer_is_left_to_the_cells():
    """`.item()` needs data: meta cannot run it, which says nothing about the reference."""
    spec = dataclasses.replace(add.SPEC, name="data_dependent", reference=lambda x, y: x * y.sum().item())
    check_spec_calls(spec, "gpu")
    check_spec_calls(spec, "cpu")


@pytest.mark.parametrize("tier, device", [("gpu", "meta"), ("cpu", "cpu")])
def test_the_gpu_tier_check_never_touches_cuda(tier, device):
    """The loading process may fork workers: on the GPU tier the check makes meta tensors, never CUDA ones."""
    asked = []

    def make_inputs(size, where, generator):
        asked.append(where.type)
        return add.SPEC.make_inputs(size, where, generator)

    check_spec_calls(dataclasses.replace(add.SPEC, name="spy", make_inputs=make_inputs), tier)
    assert asked == [device]
