"""PyTorch subsystems: FlopCounterMode, a CPU fallback, tensor subclasses, vmap and opcheck."""

from __future__ import annotations

from typing import Any

import torch

from harness.domain.pipelines.common import CellContext, check_call, check_result, clone_args, expected_result, staged
from harness.domain.poison import poison_before_run
from harness.domain.signature import named_function
from harness.domain.spec import KernelSpec, no_launch_wrap
from harness.domain.styles import SkipCell


class FlopCountMismatch(AssertionError):
    """FlopCounterMode counted other than the kernel's flop formula says."""


def run_flop_counter(context: CellContext) -> dict[str, Any]:
    """The harness registers the spec's formula where the style gives an operator to register it on."""
    from torch.utils.flop_counter import FlopCounterMode, register_flop_formula

    spec, built = context.spec, context.built
    if built.overload is not None and spec.flops is not None:
        formula = spec.flops
        with staged("build", context):
            register_flop_formula(built.overload.overloadpacket)(lambda *shapes, out_shape=None, **_: formula(*shapes))
    args = context.inputs()
    expected_answer = expected_result(context, args)  # outside the mode: the reference's own flops are not the op's
    with FlopCounterMode(display=False) as counter:
        with staged("run", context):
            output = built.call(*args)
            context.synchronize()
    check_result(context, output, args, expected_answer)
    counted = counter.get_total_flops()
    if built.is_control or spec.flops is None:
        return {"counted_flops": counted}
    expected = spec.flops(*(a.shape if isinstance(a, torch.Tensor) else a for a in args))
    with staged("check", context):
        if counted != expected:
            raise FlopCountMismatch(f"FlopCounterMode counted {counted} flops; the kernel's formula says {expected}")
    return {"counted_flops": counted}


def run_cpu_fallback(context: CellContext) -> dict[str, Any]:
    """Register the reference as the op's CPU kernel where the style allows one, then call it on CPU tensors."""
    built = context.built
    if built.custom_op_def is not None:
        with staged("build", context):
            built.custom_op_def.register_kernel("cpu")(cpu_kernel(context.spec))
    check_call(context, built.call, context.inputs(device=torch.device("cpu")))
    return {"registered_cpu_kernel": built.custom_op_def is not None}


def cpu_kernel(spec: KernelSpec) -> Any:
    """The CPU kernel a user registers: the reference, plus the hidden outputs the operator's schema returns when
    the spec saves intermediates (zeros of their shapes: only the outputs are asked here, the backward is not)."""
    if not spec.saved_intermediates:
        return spec.reference

    def reference_and_intermediates(*args: Any) -> tuple[Any, ...]:
        allocated = tuple(spec.launch(no_launch_wrap, *args))  # allocates every returned tensor, launches nothing
        output = spec.reference(*args)
        outputs = () if spec.num_outputs == 0 else tuple(output) if spec.num_outputs > 1 else (output,)
        return (*outputs, *(t.zero_() for t in allocated[spec.num_outputs:]))

    return named_function("cpu_kernel", list(spec.argument_names), reference_and_intermediates)


def _two_tensor_class() -> Any:
    try:
        from torch.testing._internal.two_tensor import TwoTensor
    except ImportError as exc:
        raise SkipCell(f"torch {torch.__version__} has no TwoTensor test subclass ({exc})") from exc
    return TwoTensor


def run_tensor_subclass(context: CellContext) -> dict[str, Any]:
    """TwoTensor (PyTorch's own test subclass) holds two tensors; the op must apply to both."""
    two_tensor = _two_tensor_class()
    first, second = context.inputs(), clone_args(tuple(a * 2 if isinstance(a, torch.Tensor) else a for a in context.inputs()))
    expected = [expected_result(context, first), expected_result(context, second)]
    wrapped = tuple(two_tensor(a, b) if isinstance(a, torch.Tensor) else a for a, b in zip(first, second))
    with staged("run", context):
        output = context.built.call(*wrapped)
        context.synchronize()
    with staged("check", context):
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        for item in outputs:
            if not isinstance(item, two_tensor):
                raise TypeError(f"the op returned {type(item).__name__}, not the subclass it was given")
        for part, values, answer in (("a", [o.a for o in outputs], expected[0]), ("b", [o.b for o in outputs], expected[1])):
            exact = None if answer.exact_output is None else _leaves(answer.exact_output)
            context.assert_close(values, _leaves(answer.output), exact, what=f"subclass part {part}",
                                 inputs_numel=answer.inputs_numel)
    return {}


def _leaves(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _stacked(outputs: list[Any], num_outputs: int) -> Any:
    if num_outputs == 1:
        return torch.stack(outputs)
    return tuple(torch.stack([o[i] for o in outputs]) for i in range(num_outputs))


def run_vmap(context: CellContext) -> dict[str, Any]:
    """torch.vmap over a batch of 3 inputs; no vmap rule is registered: this asks what works out of the box."""
    batches = [context.inputs() for _ in range(3)]
    batches = [tuple(a + i if isinstance(a, torch.Tensor) else a for a in args) for i, args in enumerate(batches)]
    stacked = tuple(
        torch.stack([b[i] for b in batches]) if isinstance(batches[0][i], torch.Tensor) else batches[0][i]
        for i in range(len(batches[0]))
    )
    in_dims = tuple(0 if isinstance(a, torch.Tensor) else None for a in stacked)
    answers = [expected_result(context, b) for b in batches]
    expected_stacked = _stacked([a.output for a in answers], context.spec.num_outputs)
    exact_stacked = None if any(a.exact_output is None for a in answers) else \
        _stacked([a.exact_output for a in answers], context.spec.num_outputs)
    poison_before_run(context.device, expected_stacked)  # the batched output is larger than any one answer
    with staged("run", context):
        output = torch.vmap(context.built.call, in_dims=in_dims)(*stacked)
        context.synchronize()
    with staged("check", context):
        context.assert_close(output, expected_stacked, exact_stacked, inputs_numel=len(answers) * answers[0].inputs_numel)
    return {"batch": 3}


def run_opcheck(context: CellContext) -> dict[str, Any]:
    """torch.library.opcheck: schema, fake impl, autograd registration and AOTDispatch, on the real inputs."""
    context.require_operator("opcheck")
    if not hasattr(torch.library, "opcheck"):
        raise SkipCell(f"torch {torch.__version__} has no torch.library.opcheck")
    args = context.inputs()
    if context.spec.has_backward:
        names = context.spec.differentiable_names
        args = tuple(a.requires_grad_(True) if n in names else a for n, a in zip(context.spec.argument_names, args))
    with staged("run", context):
        report = torch.library.opcheck(context.built.overload, args)
    return {"opcheck": {k: str(v) for k, v in report.items()}}
