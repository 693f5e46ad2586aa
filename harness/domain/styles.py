"""Derives one callable per wrapping style from a KernelSpec.

A style never knows which pipeline will run it: it hands back a `BuiltOp` that
says what it is made of (an operator overload, a way to register a CPU kernel
or a flop formula) and pipelines ask those questions instead of the style's name.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from harness.domain.call_sites import at_call_site
from harness.domain.signature import named_function
from harness.domain.spec import KernelSpec, identity_wrap, kernel_name, launched_count, no_launch_wrap, visible_output
from harness.vocab import split_style


class SkipCell(Exception):
    """The cell cannot be asked here (no GPU, API missing in this torch, nothing to ask); carries the reason."""


@dataclass
class BuiltOp:
    call: Callable[..., Any]
    kernel_names: tuple[str, ...]  # user kernels whose presence in Inductor's output means "traced into"
    overload: Any = None  # torch._ops.OpOverload when the style makes a torch.library operator
    custom_op_def: Any = None  # torch._library.custom_ops.CustomOpDef, for register_kernel
    is_control: bool = False  # the pure-PyTorch control: FlopCounterMode's own count is its expectation
    notes: list[str] = field(default_factory=list)
    rebuild_as: str = ""  # the style that made it: a fresh process rebuilds the op this way (export_roundtrip)


def _output_annotation(count: int) -> Any:
    if count == 0:
        return None
    if count == 1:
        return torch.Tensor
    return typing.Tuple[tuple([torch.Tensor] * count)]  # noqa: UP006 - built at run time


def _typed(fn: Callable[..., Any], names: tuple[str, ...], kinds: tuple[type, ...], outputs: int) -> Callable[..., Any]:
    """`fn` behind the named, annotated signature that torch.library infers an operator schema from."""
    annotations = dict(zip(names, kinds)) | {"return": _output_annotation(outputs)}
    return named_function("impl", list(names), fn, annotations)


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _backward_signature(spec: KernelSpec, saved_count: int) -> tuple[tuple[str, ...], tuple[type, ...]]:
    """saved0.., grad0.., then the scalars the backward asked for, by their own names and types."""
    grad_count = max(spec.num_outputs, 1)
    names = tuple(f"saved{i}" for i in range(saved_count)) + tuple(f"grad{i}" for i in range(grad_count))
    kinds = dict(spec.arguments)
    scalar_kinds = tuple(kinds[name] for name in spec.backward_scalars)
    return names + spec.backward_scalars, (torch.Tensor,) * len(names) + scalar_kinds


def _keep_scalars(ctx: Any, spec: KernelSpec, args: tuple[Any, ...]) -> None:
    """As a user writes `ctx.eps = eps`: one ctx attribute per scalar the backward asked for."""
    for name, value in spec.backward_scalar_values(args).items():
        setattr(ctx, f"scalar_{name}", value)


def _kept_scalars(ctx: Any, spec: KernelSpec) -> dict[str, Any]:
    return {name: getattr(ctx, f"scalar_{name}") for name in spec.backward_scalars}


def _grads_for_all_arguments(spec: KernelSpec, grads: tuple[Any, ...]) -> tuple[Any, ...]:
    """Autograd wants one gradient per argument; the spec's backward gives one per differentiable argument."""
    by_name = dict(zip(spec.differentiable_names, grads))
    return tuple(by_name.get(name) for name in spec.argument_names)


def build_native(spec: KernelSpec, namespace: str) -> BuiltOp:
    return BuiltOp(call=spec.reference, kernel_names=(), is_control=True)


def build_raw(spec: KernelSpec, namespace: str) -> BuiltOp:
    """A plain Python function launching the kernel, as the tutorial's `add(x, y)`."""
    raw = named_function(spec.name, list(spec.argument_names),
                         lambda *args: visible_output(spec, spec.launch(identity_wrap, *args)))
    return BuiltOp(call=raw, kernel_names=tuple(kernel_name(k) for k in spec.kernels))


def _autograd_function_class(spec: KernelSpec, wrap: Callable[[Any], Any]) -> Any:
    """An autograd.Function whose forward launches the kernel and backward the spec's backward, both through `wrap`."""

    def forward(ctx: Any, *args: Any) -> Any:
        launched = spec.launch(wrap, *args)
        if spec.save_for_backward is not None:  # intermediates are saved like any tensor, never returned
            ctx.save_for_backward(*spec.save_for_backward(args, launched))
            _keep_scalars(ctx, spec, args)
        return visible_output(spec, launched)

    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        if spec.backward is None:
            raise RuntimeError(f"kernel {spec.name} declares no backward")
        grads = _as_tuple(spec.backward(wrap, *ctx.saved_tensors, *grad_outputs, **_kept_scalars(ctx, spec)))
        return _grads_for_all_arguments(spec, grads)

    grad_names = [f"grad{i}" for i in range(max(spec.num_outputs, 1))]
    return type(f"{spec.name}_function", (torch.autograd.Function,), {
        "forward": staticmethod(named_function("forward", ["ctx", *spec.argument_names], forward)),
        "backward": staticmethod(named_function("backward", ["ctx", *grad_names], backward)),
    })


def build_autograd_function(spec: KernelSpec, namespace: str) -> BuiltOp:
    """`forward(ctx, x, ...)` launches the kernel, `backward` the spec's backward kernels, both raw."""
    function_class = _autograd_function_class(spec, identity_wrap)
    return BuiltOp(call=function_class.apply, kernel_names=tuple(kernel_name(k) for k in spec.kernels))


def build_wrap_triton(spec: KernelSpec, namespace: str) -> BuiltOp:
    """The launch through `torch.library.wrap_triton` in a plain function, with no triton_op around it.

    PyTorch documents this for make_fx and non-strict export (wrap_triton's docstring) and libraries call
    kernels this way. wrap_triton gives no autograd (its higher-order op falls through Autograd), so a spec
    with a backward is wrapped in an autograd.Function whose forward and backward both launch through
    wrap_triton, as a library that trains through such kernels must. No operator is made: the pipelines
    that need one skip, as for `raw`.
    """
    wrap_triton = getattr(torch.library, "wrap_triton", None)
    if wrap_triton is None:
        raise SkipCell(f"torch {torch.__version__} has no torch.library.wrap_triton")
    kernel_names = tuple(kernel_name(k) for k in spec.kernels)
    if spec.has_backward:
        return BuiltOp(call=_autograd_function_class(spec, wrap_triton).apply, kernel_names=kernel_names,
                       notes=["backward: an autograd.Function whose forward and backward launch through wrap_triton"])
    call = named_function(spec.name, list(spec.argument_names),
                          lambda *args: visible_output(spec, spec.launch(wrap_triton, *args)))
    return BuiltOp(call=call, kernel_names=kernel_names)


def _library_op(spec: KernelSpec, namespace: str, use_triton_op: bool) -> BuiltOp:
    """custom_op and triton_op differ only in the decorator and the `wrap`: one builder, two styles."""
    library = torch.library
    if use_triton_op and not (hasattr(library, "triton_op") and hasattr(library, "wrap_triton")):
        raise SkipCell(f"torch {torch.__version__} has no torch.library.triton_op/wrap_triton")
    if not hasattr(library, "custom_op"):
        raise SkipCell(f"torch {torch.__version__} has no torch.library.custom_op")
    wrap = library.wrap_triton if use_triton_op else identity_wrap
    names, kinds = spec.argument_names, tuple(kind for _, kind in spec.arguments)
    decorate: Any = library.triton_op if use_triton_op else library.custom_op

    # Saved intermediates are hidden outputs of the operator (setup_context sees only inputs and outputs);
    # the style's callable returns the outputs alone, so the user sees what every other style gives.
    returned = launched_count(spec)
    forward_impl = _typed(lambda *args: spec.launch(wrap, *args), names, kinds, returned)
    forward = decorate(f"{namespace}::{spec.name}", forward_impl, mutates_args=spec.mutates_args)
    if spec.fake is not None:  # the spec's own: triton_op's fake (its launch) and custom_op's derived one give way
        forward.register_fake(_typed(spec.fake, names, kinds, returned))
    elif not use_triton_op:
        forward.register_fake(_typed(lambda *args: spec.launch(no_launch_wrap, *args), names, kinds, returned))

    if spec.backward is not None and spec.save_for_backward is not None:
        _register_backward(spec, namespace, forward, decorate, wrap, use_triton_op)

    overload = getattr(getattr(torch.ops, namespace), spec.name).default
    kernel_names = tuple(kernel_name(k) for k in spec.kernels)
    call = forward
    if spec.saved_intermediates:
        call = named_function(spec.name, list(names), lambda *args: visible_output(spec, forward(*args)))
    return BuiltOp(call=call, kernel_names=kernel_names, overload=overload, custom_op_def=forward)


def _register_backward(spec: KernelSpec, namespace: str, forward: Any, decorate: Any, wrap: Any, use_triton_op: bool) -> None:
    backward_spec = spec.backward
    save = spec.save_for_backward
    assert backward_spec is not None and save is not None
    grad_count = len(spec.differentiable_names)
    scalar_count = len(spec.backward_scalars)

    def make_backward_op(saved_count: int) -> Any:
        names, kinds = _backward_signature(spec, saved_count)
        tensor_count = len(names) - scalar_count
        unknown = [name for name in spec.backward_mutates if name not in names]
        if unknown:
            raise ValueError(f"kernel {spec.name}: backward_mutates names {unknown}; the backward's parameters are "
                             f"{', '.join(names)}")

        def launcher(launch_wrap: Any) -> Callable[..., Any]:
            """The op returns a Tensor for one gradient and a tuple for several, as its schema says."""

            def run(*args: Any) -> Any:
                scalars = dict(zip(spec.backward_scalars, args[tensor_count:]))
                grads = tuple(backward_spec(launch_wrap, *args[:tensor_count], **scalars))
                return grads if grad_count > 1 else grads[0]

            return _typed(run, names, kinds, grad_count)

        op = decorate(f"{namespace}::{spec.name}_backward", launcher(wrap), mutates_args=spec.backward_mutates)
        if not use_triton_op:
            op.register_fake(launcher(no_launch_wrap))
        return op

    visible_grads = max(spec.num_outputs, 1)

    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        ctx.save_for_backward(*save(inputs, output))
        if spec.saved_intermediates:  # the hidden outputs: no gradient flows into them
            ctx.mark_non_differentiable(*tuple(output)[spec.num_outputs:])
        _keep_scalars(ctx, spec, inputs)

    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        scalars = tuple(_kept_scalars(ctx, spec).values())
        grads = _as_tuple(backward_op(*ctx.saved_tensors, *grad_outputs[:visible_grads], *scalars))
        return _grads_for_all_arguments(spec, grads)

    # The backward op's schema needs the number of saved tensors; the spec's save function tells it on a tiny probe.
    probe = spec.make_inputs(spec.sizes[0], torch.device("meta"), torch.Generator())
    with torch.device("meta"):
        probe_output = spec.launch(no_launch_wrap, *probe)
    backward_op = make_backward_op(len(save(probe, probe_output)))
    forward.register_autograd(backward, setup_context=setup_context)


def build_custom_op(spec: KernelSpec, namespace: str) -> BuiltOp:
    return _library_op(spec, namespace, use_triton_op=False)


def build_triton_op(spec: KernelSpec, namespace: str) -> BuiltOp:
    return _library_op(spec, namespace, use_triton_op=True)


BUILDERS: dict[str, Callable[[KernelSpec, str], BuiltOp]] = {
    "native": build_native,
    "raw": build_raw,
    "autograd_function": build_autograd_function,
    "custom_op": build_custom_op,
    "triton_op": build_triton_op,
    "wrap_triton": build_wrap_triton,
}


def build_style(spec: KernelSpec, style: str) -> BuiltOp:
    """Make the op for one style; torch.library names live in a per-style namespace (tcm_custom_op, ...).

    `style@site` makes the style's op and calls it from that call site (harness.domain.call_sites)."""
    return build_with(spec, style, BUILDERS[split_style(style)[0]])


def build_with(spec: KernelSpec, style: str, builder: Callable[[KernelSpec, str], BuiltOp]) -> BuiltOp:
    """build_style with the style's builder given: a reproducer carries that builder alone (harness.domain.repro)."""
    base, site = split_style(style)
    built = builder(spec, f"tcm_{base}")
    built.rebuild_as = base
    if site:
        built = at_call_site(spec, built, base, site)
    return built
