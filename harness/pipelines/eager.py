"""eager and eager_backward: the op called directly, then its gradients through autograd."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from harness.checking import assert_matches
from harness.pipelines.common import CellContext, check_call, clone_args, staged


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
