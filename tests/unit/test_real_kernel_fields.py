"""The KernelSpec fields that let a library's kernel be written as it is: saved intermediates, scalars that reach
the backward, declared backward mutation and bounded dynamic dims. A broken field is named in one clear message."""

import dataclasses

import pytest
import torch

from harness.domain.spec import visible_output
from harness.domain.styles import build_style
from kernels import add, rms_norm

SPEC = rms_norm.SPEC


def problem(**changes):
    with pytest.raises(ValueError) as error:
        dataclasses.replace(SPEC, **changes)
    return str(error.value)


def test_the_catalogue_rms_norm_uses_every_new_field():
    assert SPEC.saved_intermediates == ("rstd",)
    assert SPEC.backward_scalars == ("offset",)
    assert SPEC.dynamic_bounds == (2, 1 << 16)


@pytest.mark.parametrize("field", ["saved_intermediates", "backward_scalars", "backward_mutates"])
def test_backward_fields_need_a_backward(field):
    value = {"saved_intermediates": ("extra",), "backward_scalars": ("alpha",), "backward_mutates": ("grad0",)}[field]
    scaled = __import__("kernels.scaled_add", fromlist=["SPEC"]).SPEC  # has a float argument, no backward
    with pytest.raises(ValueError, match=f"{field} is for the backward, and the spec declares no backward"):
        dataclasses.replace(scaled, **{field: value})


@pytest.mark.parametrize("names, message", [
    (("not a name",), "saved_intermediates names 'not a name', which is not a Python identifier"),
    (("x",), "saved_intermediates names 'x', which is an argument"),
    (("rstd", "rstd"), "saved_intermediates names an intermediate twice"),
])
def test_saved_intermediates_are_named_once_and_not_arguments(names, message):
    assert message in problem(saved_intermediates=names)


@pytest.mark.parametrize("names, message", [
    (("alpha",), "backward_scalars names 'alpha', which is not an argument"),
    (("weight",), "backward_scalars names 'weight', a Tensor: only float, int and bool arguments"),
])
def test_backward_scalars_name_scalar_arguments(names, message):
    assert message in problem(backward_scalars=names)


@pytest.mark.parametrize("names, message", [
    (("weight",), "backward_mutates names 'weight'; name the backward's parameters: saved0"),
    (("grad1",), "backward_mutates names 'grad1', but the backward receives 1 gradient(s)"),
])
def test_backward_mutates_names_backward_parameters(names, message):
    assert message in problem(backward_mutates=names)


@pytest.mark.parametrize("bounds, message", [
    ((2,), "dynamic_bounds must be a (min, max) pair of ints"),
    ((1, 100), "must have 2 <= min < max"),
    ((300, 200), "must have 2 <= min < max"),
    ((2, 300), "dynamic_bounds (2, 300) leave out sizes [389]"),
])
def test_dynamic_bounds_hold_both_sizes(bounds, message):
    assert message in problem(dynamic_bounds=bounds)


def test_a_declared_backward_mutation_is_in_the_backward_operators_schema():
    mutating = dataclasses.replace(SPEC, name="rms_norm_mutating_backward", backward_mutates=("grad0",))
    build_style(mutating, "custom_op")
    schema = str(torch.ops.tcm_custom_op.rms_norm_mutating_backward_backward.default._schema)
    assert "!) grad0" in schema and "Tensor saved0" in schema, schema  # grad0 written in place, saved0 read
    assert "float offset" in schema, schema


def test_a_backward_mutation_of_a_parameter_that_does_not_exist_is_named_at_build():
    missing = dataclasses.replace(SPEC, name="rms_norm_missing_saved", backward_mutates=("saved7",))
    with pytest.raises(ValueError, match=r"backward_mutates names \['saved7'\]; the backward's parameters are saved0"):
        build_style(missing, "custom_op")


def test_the_user_sees_the_outputs_without_the_intermediates():
    y, rstd = torch.ones(2, 3), torch.ones(2)
    assert visible_output(SPEC, (y, rstd)) is y
    assert visible_output(add.SPEC, y) is y  # a spec without intermediates: the launch's return as it is


def test_dynamic_bounds_become_the_bounds_of_exports_dim():
    from types import SimpleNamespace

    from harness.domain.pipelines.export import DEFAULT_BOUNDS, dynamic_shapes

    args = SPEC.make_inputs(8, torch.device("cpu"), torch.Generator())
    shapes = dynamic_shapes(SimpleNamespace(spec=SPEC), args)
    assert (shapes["x"][0].min, shapes["x"][0].max) == (2, 1 << 16)
    assert shapes["weight"] is None and shapes["eps"] is None
    unbounded = dynamic_shapes(SimpleNamespace(spec=dataclasses.replace(SPEC, dynamic_bounds=None)), args)
    assert (unbounded["x"][0].min, unbounded["x"][0].max) == DEFAULT_BOUNDS


def test_the_cpu_fallback_kernel_returns_the_hidden_outputs_the_schema_promises():
    from harness.domain.pipelines.subsystems import cpu_kernel

    args = SPEC.make_inputs(8, torch.device("cpu"), torch.Generator().manual_seed(0))
    output, rstd = cpu_kernel(SPEC)(*args)
    torch.testing.assert_close(output, SPEC.reference(*args))
    assert rstd.shape == (8,) and rstd.dtype == torch.float32
    assert cpu_kernel(add.SPEC) is add.SPEC.reference
