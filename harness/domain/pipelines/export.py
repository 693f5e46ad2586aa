"""torch.export pipelines: strict, non-strict, and non-strict with a dynamic dim."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from harness.domain.pipelines.common import CellContext, check_call, staged
from harness.domain.signature import named_function


def call_module(context: CellContext) -> torch.nn.Module:
    """export takes modules: one whose `forward(self, x, ...)` only calls the op, adding nothing to the question."""
    call: Callable[..., Any] = context.built.call
    if isinstance(call, torch.nn.Module):  # a call site that is a module (harness.domain.call_sites): export it as is
        return call
    forward = named_function("forward", ["self", *context.spec.argument_names], lambda self, *args: call(*args))
    module_class = type(f"{context.spec.name}_module", (torch.nn.Module,), {"forward": forward})
    return module_class()


DEFAULT_BOUNDS = (2, 1 << 20)


def dynamic_dims_of(context: CellContext, args: tuple[Any, ...]) -> dict[str, tuple[int, ...]]:
    """The dims the spec says follow `size` (default: dim 0 of every tensor), by argument name."""
    dims = context.spec.dynamic_dims
    return {name: (dims.get(name, ()) if dims is not None else (0,)) if isinstance(arg, torch.Tensor) else ()
            for name, arg in zip(context.spec.argument_names, args)}


def dynamic_shapes(context: CellContext, args: tuple[Any, ...]) -> dict[str, Any]:
    """One shared Dim, within the spec's dynamic_bounds, for the dims that follow `size`, by argument name."""
    low, high = context.spec.dynamic_bounds or DEFAULT_BOUNDS
    size = torch.export.Dim("size", min=low, max=high)
    return {name: {dim: size for dim in chosen} or None for name, chosen in dynamic_dims_of(context, args).items()}


def export_program(context: CellContext, args: tuple[Any, ...], strict: bool, dynamic: bool = False) -> Any:
    module = call_module(context)
    with staged("trace", context):
        return torch.export.export(
            module, args, strict=strict, dynamic_shapes=dynamic_shapes(context, args) if dynamic else None
        )


def run_export(context: CellContext, strict: bool) -> dict[str, Any]:
    args = context.inputs()
    program = export_program(context, args, strict=strict)
    check_call(context, program.module(), args)
    return {}


def run_export_strict(context: CellContext) -> dict[str, Any]:
    return run_export(context, strict=True)


def run_export_nonstrict(context: CellContext) -> dict[str, Any]:
    return run_export(context, strict=False)


def run_export_dynamic(context: CellContext) -> dict[str, Any]:
    """Export non-strict at the first size with a dynamic dim, run and check at both sizes."""
    program = export_program(context, context.inputs(), strict=False, dynamic=True)
    module = program.module()
    for size in context.spec.sizes:
        check_call(context, module, context.inputs(size))
    return {"sizes": list(context.spec.sizes)}
