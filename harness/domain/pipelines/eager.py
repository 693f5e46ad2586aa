"""eager and eager_backward: the op called directly, then its gradients through autograd."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from harness.domain.checking import assert_close_to_exact, assert_matches
from harness.domain.inputs import FailingExample, InputCase, case_inputs, explore
from harness.domain.pipelines.common import (
    CellContext,
    StageFailure,
    check_call,
    clone_args,
    expected_result,
    mutated_args,
    staged,
)


def run_eager(context: CellContext) -> dict[str, Any]:
    check_call(context, context.built.call, context.inputs())
    return {}


def _with_grad(context: CellContext, args: tuple[Any, ...]) -> tuple[Any, ...]:
    names = context.spec.differentiable_names
    return tuple(
        a.detach().clone().requires_grad_(True) if name in names and isinstance(a, torch.Tensor) else a
        for name, a in zip(context.spec.argument_names, args)
    )


def _differentiable(context: CellContext, args: tuple[Any, ...]) -> list[torch.Tensor]:
    names = context.spec.differentiable_names
    return [a for name, a in zip(context.spec.argument_names, args) if name in names]


def _grad_outputs(output: Any, seed: int) -> list[torch.Tensor]:
    outputs = list(output) if isinstance(output, (tuple, list)) else [output]
    generator = torch.Generator().manual_seed(seed + 1)
    return [torch.randn(o.shape, generator=generator).to(device=o.device, dtype=o.dtype) for o in outputs]


def check_backward(context: CellContext, call: Callable[..., Any], run_stage: str = "run") -> dict[str, Any]:
    """Forward and backward through `call`, gradients checked against the reference's autograd."""
    args = context.inputs()
    reference_args = _with_grad(context, clone_args(args))
    reference_output = context.spec.reference(*reference_args)
    grad_outputs = _grad_outputs(reference_output, context.seed)
    reference_grads = torch.autograd.grad(reference_output, _differentiable(context, reference_args), grad_outputs)

    test_args = _with_grad(context, args)
    with staged(run_stage, context):
        output = call(*test_args)
        context.synchronize()
    with staged("check", context):
        assert_matches(output, reference_output.detach() if isinstance(reference_output, torch.Tensor) else reference_output)
    with staged("run", context):
        outputs = list(output) if isinstance(output, (tuple, list)) else [output]
        grads = torch.autograd.grad(outputs, _differentiable(context, test_args), grad_outputs)
        context.synchronize()
    with staged("check", context):
        assert_matches(list(grads), list(reference_grads), what="gradients")
    return {}


def run_eager_backward(context: CellContext) -> dict[str, Any]:
    return check_backward(context, context.built.call)


def run_eager_inputs(context: CellContext) -> dict[str, Any]:
    """The op on generated inputs (sizes, dtypes, strided views); a failure names the minimal failing input."""
    spec = context.spec

    def check_case(case: InputCase) -> None:
        args = case_inputs(spec, case, context.device, context.seed)
        native, native_mutations = expected_result(context, args)
        exact, exact_mutations = _exact_result(context, args, (native, native_mutations))
        try:
            with staged("run", context):
                output = context.built.call(*args)
                context.synchronize()
        except StageFailure:
            if case.contiguous or spec.accepts_noncontiguous:
                raise
            return  # refused a strided view it does not claim to accept: a clear refusal is allowed
        with staged("check", context):
            if spec.num_outputs > 0:
                assert_close_to_exact(output, native, exact)
            if spec.mutates_args:
                assert_close_to_exact(mutated_args(context, args), native_mutations, exact_mutations,
                                      what="mutated arguments")

    try:
        return explore(spec, context.tier, check_case)
    except FailingExample as failing:
        inner = failing.error
        stage, error = (inner.stage, inner.error) if isinstance(inner, StageFailure) else ("run", inner)
        detail = {**failing.summary, "example": failing.case.to_record() if failing.case else None}
        prefix = f"[{failing.case.describe()}] " if failing.case else ""
        raise StageFailure(stage, error, prefix=prefix, detail=detail) from error


def _exact_result(context: CellContext, args: tuple[Any, ...],
                  native: tuple[Any, tuple[Any, ...]]) -> tuple[Any, tuple[Any, ...]]:
    """The reference computed in fp32 from the same values: the answer low-precision results are held to.

    When no argument is below fp32 that is the native result itself, so it is not computed again."""
    if not any(isinstance(a, torch.Tensor) and a.is_floating_point() and a.dtype != torch.float32 for a in args):
        return native
    wide_args = tuple(a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)
    return expected_result(context, wide_args)
