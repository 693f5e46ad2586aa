"""eager and eager_backward: the op called directly, then its gradients through autograd."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from harness.domain.inputs import FailingExample, InputCase, case_inputs, explore
from harness.domain.pipelines.common import (
    CellContext,
    StageFailure,
    check_call,
    clone_args,
    exact_device,
    expected_result,
    largest_input,
    mutated_args,
    staged,
    widen,
)
from harness.domain.poison import poison_before_run
from harness.domain.tolerance import float64_everywhere


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
    outputs = _as_list(output)
    generator = torch.Generator().manual_seed(seed + 1)
    return [torch.randn(o.shape, generator=generator).to(device=o.device, dtype=o.dtype) for o in outputs]


def _reference_grads(context: CellContext, args: tuple[Any, ...], grad_outputs: list[torch.Tensor] | None
                     ) -> tuple[Any, list[torch.Tensor], tuple[torch.Tensor, ...]]:
    """(output, grad_outputs, gradients) of the reference's autograd on copies of `args`."""
    reference_args = _with_grad(context, clone_args(args))
    reference_output = context.spec.reference(*reference_args)
    if grad_outputs is None:
        grad_outputs = _grad_outputs(reference_output, context.seed)
    else:
        grad_outputs = [g.to(o.dtype) for g, o in zip(grad_outputs, _as_list(reference_output))]
    grads = torch.autograd.grad(reference_output, _differentiable(context, reference_args), grad_outputs)
    return reference_output, grad_outputs, grads


def _as_list(output: Any) -> list[Any]:
    return list(output) if isinstance(output, (tuple, list)) else [output]


def _detached(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, (tuple, list)):
        return [_detached(v) for v in value]
    return value


def check_backward(context: CellContext, call: Callable[..., Any], run_stage: str = "run") -> dict[str, Any]:
    """Forward and backward through `call`, output and gradients held to the reference's autograd in float64
    (the tolerance model), with the allowance from the reference's own autograd in the inputs' dtype."""
    args = context.inputs()
    reference_output, grad_outputs, reference_grads = _reference_grads(context, args, None)
    exact_output = exact_grads = None
    try:
        wide_device = exact_device(args)
        with float64_everywhere():
            exact_output, _, exact_grads = _reference_grads(
                context, tuple(widen(a, wide_device) for a in args), [widen(g, wide_device) for g in grad_outputs])
    except Exception as exc:  # a reference that only runs in its own dtype: judged against that dtype's run
        context.judged["float64 reference"] = f"failed, {type(exc).__name__}: {str(exc)[:200]}"

    poison_before_run(context.device, reference_output, reference_grads)  # as expected_result does (common.py)
    test_args = _with_grad(context, args)
    with staged(run_stage, context):
        output = call(*test_args)
        context.synchronize()
    inputs_numel = largest_input((*args, *grad_outputs))
    with staged("check", context):
        context.assert_close(output, _detached(reference_output), _detached(exact_output), inputs_numel=inputs_numel)
    with staged("run", context):
        outputs = list(output) if isinstance(output, (tuple, list)) else [output]
        grads = torch.autograd.grad(outputs, _differentiable(context, test_args), grad_outputs)
        context.synchronize()
    with staged("check", context):
        context.assert_close(list(grads), list(reference_grads), None if exact_grads is None else list(exact_grads),
                             what="gradients", inputs_numel=inputs_numel)
    return {}


def run_eager_backward(context: CellContext) -> dict[str, Any]:
    return check_backward(context, context.built.call)


def check_input_case(context: CellContext, case: InputCase) -> None:
    """The op on one generated input against the reference; a refused strided view the spec does not claim is fine."""
    spec = context.spec
    args = case_inputs(spec, case, context.device, context.seed)
    expected = expected_result(context, args)
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
            context.assert_close(output, expected.output, expected.exact_output, inputs_numel=expected.inputs_numel)
        if spec.mutates_args:
            context.assert_close(mutated_args(context, args), expected.mutations, expected.exact_mutations,
                                 what="mutated arguments", inputs_numel=expected.inputs_numel)


def failing_input(failing: FailingExample) -> StageFailure:
    """The minimal failing input as the cell's failure: its stage and error, the input named before the error line."""
    inner = failing.error
    stage, error = (inner.stage, inner.error) if isinstance(inner, StageFailure) else ("run", inner)
    detail = {**failing.summary, "example": failing.case.to_record() if failing.case else None}
    prefix = f"[{failing.case.describe()}] " if failing.case else ""
    return StageFailure(stage, error, prefix=prefix, detail=detail)


def run_eager_inputs(context: CellContext) -> dict[str, Any]:
    """The op on generated inputs (sizes, dtypes, strided views); a failure names the minimal failing input."""
    try:
        return explore(context.spec, context.tier, lambda case: check_input_case(context, case))
    except FailingExample as failing:
        raise failing_input(failing) from failing.error


def run_eager_inputs_on(context: CellContext, cases: list[InputCase]) -> dict[str, Any]:
    """eager_inputs on given cases, with no search: a reproducer's, where the failing example is written in."""
    for case in cases:
        try:
            check_input_case(context, case)
        except Exception as exc:
            raise failing_input(FailingExample(case, exc)) from exc
    return {"examples": len(cases)}
