"""A kernel's `requires` becomes `skip` with a reason naming what is missing, never `fail`, and never a skip where it is met."""

import dataclasses

import pytest

from harness.domain.machine import REQUIREMENTS, missing_requirement
from harness.domain.pipelines.requirements import skip_reason
from kernels import add, fp8_scale, inline_asm, libdevice_tanh, tensor_descriptor


@pytest.mark.parametrize("spec, words", [(libdevice_tanh.SPEC, "libdevice"), (inline_asm.SPEC, "inline_asm_elementwise")])
def test_what_the_interpreter_cannot_run_is_skipped_on_the_cpu_tier(spec, words):
    reason = skip_reason(spec, "eager", "cpu")
    assert reason is not None and words in reason and "CPU interpreter tier" in reason and spec.name in reason


@pytest.mark.parametrize("spec", [libdevice_tanh.SPEC, inline_asm.SPEC, tensor_descriptor.SPEC, fp8_scale.SPEC])
def test_a_capable_gpu_asks_every_kernel(spec):
    assert skip_reason(spec, "eager", "gpu", capability=(9, 0)) is None


@pytest.mark.parametrize("spec, capability, words", [
    (tensor_descriptor.SPEC, (8, 9), "compute capability 9.0"),
    (fp8_scale.SPEC, (8, 0), "compute capability 8.9"),
])
def test_an_older_gpu_skips_with_its_capability_named(spec, capability, words):
    reason = skip_reason(spec, "eager", "gpu", capability=capability)
    assert reason is not None and words in reason and spec.name in reason
    assert reason.endswith(f"(compute capability {capability[0]}.{capability[1]})")


def test_the_parent_without_a_capability_leaves_the_decision_to_the_cell():
    """The parent never initialises CUDA: a capability requirement is decided again inside the cell."""
    assert skip_reason(tensor_descriptor.SPEC, "eager", "gpu", capability=None) is None


@pytest.mark.parametrize("spec", [tensor_descriptor.SPEC, fp8_scale.SPEC])
def test_the_interpreter_emulates_descriptors_and_float8(spec):
    assert skip_reason(spec, "eager", "cpu") is None


def test_every_requirement_has_a_reason_and_the_first_missing_one_is_given():
    assert all(requirement.missing for requirement in REQUIREMENTS.values())
    assert "libdevice" in missing_requirement(("libdevice", "inline-asm"), "cpu", None)


def test_an_unknown_requirement_is_a_spec_problem():
    with pytest.raises(ValueError, match="requires names 'tpu'"):
        dataclasses.replace(add.SPEC, requires=("tpu",))


def test_a_required_triton_allocator_is_set_for_the_cell_and_the_previous_one_put_back():
    from triton.runtime import _allocation

    from harness.domain.machine import _torch_scratch, provided

    before = _allocation._allocator.get()
    with provided(("sm90", "triton-allocator"), "gpu"):
        assert _allocation._allocator.get() is _torch_scratch
    assert _allocation._allocator.get() is before
    with provided(("triton-allocator",), "cpu"):  # the interpreter asks for no scratch
        assert _allocation._allocator.get() is before
    with provided(("sm90",), "gpu"):
        assert _allocation._allocator.get() is before


def test_the_allocator_requirement_never_makes_a_skip():
    assert missing_requirement(("triton-allocator",), "cpu", None) is None
    assert missing_requirement(("triton-allocator",), "gpu", (8, 0)) is None


def test_a_gpu_reproducer_of_a_kernel_that_requires_an_allocator_sets_one_as_the_harness_does():
    from harness.domain.registry import load_specs
    from harness.domain.repro import write_repro

    spec = load_specs()["tensor_descriptor_device"]
    script = write_repro(spec, "raw", "eager", "gpu")
    compile(script, "repro.py", "exec")
    # The script carries the harness's own `provided` (the tests above say when it sets an allocator) and runs the
    # cell inside it, as the harness does: one truth, copied from the source.
    assert "def provided(requires" in script and "triton.set_allocator(" in script
    assert "provided(spec.requires, tier)" in script
