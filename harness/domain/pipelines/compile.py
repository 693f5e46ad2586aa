"""torch.compile pipelines: default, fullgraph, training, dynamic shapes, CUDA graphs, and visibility."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch

from harness.domain.evidence import graph_break_reasons, unwrap
from harness.domain.pipelines.common import CellContext, StageFailure, check_result, expected_result, stage_clock, staged
from harness.domain.pipelines.eager import check_backward
from harness.domain.pipelines.export import dynamic_dims_of
from harness.domain.user_code import in_user_code


def compile_stage(exc: BaseException) -> str:
    """Where a torch.compile call failed: Dynamo's tracing, Inductor's compiling, or the compiled code running."""
    from torch._dynamo import exc as dynamo_exc

    if isinstance(exc, dynamo_exc.BackendCompilerFailed):
        return "compile"
    exc = unwrap(exc)
    if isinstance(exc, dynamo_exc.BackendCompilerFailed):
        return "compile"
    trace_errors = tuple(
        getattr(dynamo_exc, name)
        for name in ("Unsupported", "TorchRuntimeError", "UserError", "InternalTorchDynamoError", "UncapturedHigherOrderOpError")
        if hasattr(dynamo_exc, name)
    )
    if isinstance(exc, trace_errors):
        return "trace"
    return "run"


def compiled_call(context: CellContext, compiled: Any, args: tuple[Any, ...]) -> Any:
    """Call a torch.compile'd function, attributing a failure to trace, compile or run.

    Dynamo, Inductor and the first run happen inside one call, so a call that succeeds counts its time
    as compile; one that fails counts it in the stage it failed in."""
    if context.stage_marker:
        context.stage_marker("compile")
    with stage_clock(context, "compile"):
        try:
            output = compiled(*args)
            context.synchronize()
        except Exception as exc:
            raise StageFailure(compile_stage(exc), exc) from exc
    return output


def _check_compiled(context: CellContext, compiled: Any, args: tuple[Any, ...]) -> Any:
    expected = expected_result(context, args)
    output = compiled_call(context, compiled, args)
    check_result(context, output, args, expected)
    return output


# How each compile pipeline calls torch.compile; `harness perf` compiles the same way (compiled_for).
COMPILE_OPTIONS: dict[str, dict[str, Any]] = {
    "compile": {},
    "compile_fullgraph": {"fullgraph": True},
    "cudagraphs": {"mode": "reduce-overhead", "fullgraph": True},
}


def compiled_for(pipeline: str, call: Any) -> Any:
    """`call` under torch.compile with the options of `pipeline`, after resetting Dynamo's caches."""
    torch._dynamo.reset()
    return torch.compile(call, **COMPILE_OPTIONS[pipeline])


def run_compile(context: CellContext) -> dict[str, Any]:
    """Graph breaks are allowed here; the detail records how many and Dynamo's reason for each."""
    from torch._dynamo.utils import counters

    compiled = compiled_for("compile", context.built.call)
    counters.clear()
    _check_compiled(context, compiled, context.inputs())
    reasons = graph_break_reasons(dict(counters["graph_break"]))
    for reason in reasons:  # a location in a reason names the user's code (harness.domain.user_code)
        reason["reason"] = in_user_code(reason["reason"], context.spec)
    return {"graph_breaks": sum(r["count"] for r in reasons), "graph_break_reasons": reasons} if reasons else {}


def run_compile_fullgraph(context: CellContext) -> dict[str, Any]:
    _check_compiled(context, compiled_for("compile_fullgraph", context.built.call), context.inputs())
    return {}


def run_compile_fullgraph_backward(context: CellContext) -> dict[str, Any]:
    torch._dynamo.reset()
    compiled = torch.compile(context.built.call, fullgraph=True)
    return check_backward(context, lambda *args: compiled_call(context, compiled, args), run_stage="compile")


def run_compile_dynamic(context: CellContext) -> dict[str, Any]:
    """fullgraph=True with dynamic=True, at two sizes: a graph break must not hide a symbolic-shape failure."""
    torch._dynamo.reset()
    compiled = torch.compile(context.built.call, fullgraph=True, dynamic=True)
    for size in context.spec.sizes:
        _check_compiled(context, compiled, _bounded(context, context.inputs(size)))
    return {"sizes": list(context.spec.sizes)}


def _bounded(context: CellContext, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """With the spec's dynamic_bounds, mark the dims that follow `size` dynamic within them (as export's Dim)."""
    if context.spec.dynamic_bounds is None:
        return args

    low, high = context.spec.dynamic_bounds
    for arg, dims in zip(args, dynamic_dims_of(context, args).values()):
        for dim in dims:
            torch._dynamo.mark_dynamic(arg, dim, min=low, max=high)
    return args


# Where Inductor reports a CUDA-graph skip: the function is imported by name into these modules, so each is patched.
CUDAGRAPH_SKIP_MODULES = ("torch._inductor.cudagraph_utils", "torch._inductor.compile_fx", "torch._inductor.cudagraph_trees",
                          "torch._inductor.output_code")
CUDAGRAPH_SKIP_FUNCTION = "log_cudagraph_skip_and_bump_counter"


@contextlib.contextmanager
def recording_cudagraph_skips() -> Iterator[list[str]]:
    """Collect Inductor's reason for each CUDA-graph skip ("skipping cudagraphs due to mutated inputs"...).

    Inductor logs the reason and bumps counters['inductor']['cudagraph_skips'] in one function; it is wrapped
    (the original still runs) wherever it is visible. Torch versions without it leave the list empty."""
    import importlib

    reasons: list[str] = []
    patched = []
    for name in CUDAGRAPH_SKIP_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        original = getattr(module, CUDAGRAPH_SKIP_FUNCTION, None)
        if not callable(original):
            continue

        def recording(msg: str, *args: Any, _original: Callable[..., Any] = original, **kwargs: Any) -> Any:
            reasons.append(str(msg))
            return _original(msg, *args, **kwargs)

        setattr(module, CUDAGRAPH_SKIP_FUNCTION, recording)
        patched.append((module, original))
    try:
        yield reasons
    finally:
        for module, original in patched:
            setattr(module, CUDAGRAPH_SKIP_FUNCTION, original)


def run_cudagraphs(context: CellContext) -> dict[str, Any]:
    """mode="reduce-overhead": warm up, record, replay; an Inductor cudagraph skip is a failure, not a pass,
    and its evidence is Inductor's own reason."""
    from torch._dynamo.utils import counters

    compiled = compiled_for("cudagraphs", context.built.call)
    counters.clear()
    args = context.inputs()
    with recording_cudagraph_skips() as reasons:
        for _ in range(3):
            _check_compiled(context, compiled, args)
    skips = int(counters["inductor"]["cudagraph_skips"])
    unique_reasons = list(dict.fromkeys(in_user_code(reason, context.spec) for reason in reasons))
    if skips:
        because = f": {'; '.join(unique_reasons)}" if unique_reasons else " (Inductor gave no reason)"
        with staged("check", context):
            raise CudagraphsSkipped(f"Inductor skipped CUDA graphs {skips} time(s){because}",
                                    detail={"cudagraph_skips": skips, "cudagraph_skip_reasons": unique_reasons})
    return {"cudagraph_skips": skips}


class CudagraphsSkipped(RuntimeError):
    """Inductor ran the graph without CUDA graphs; `cell_detail` (the cell's detail) holds the count and reasons."""

    def __init__(self, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.cell_detail = detail or {}


class NotTracedInto(AssertionError):
    """Inductor's output does not contain the user's kernel: compile treated the op as opaque."""


def run_compile_visible(context: CellContext) -> dict[str, Any]:
    """Decide from Inductor's generated code, not from a return value, whether compile saw the kernel."""
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    args = context.inputs()
    expected = expected_result(context, args)
    compiled = torch.compile(context.built.call)
    output, codes = compiled_call(context, lambda *a: run_and_get_code(compiled, *a), args)
    check_result(context, output, args, expected)
    source = "\n".join(codes)
    names = context.built.kernel_names
    found = [name for name in names if name in source]
    with staged("check", context):
        if not codes:
            raise NotTracedInto("Inductor produced no code (the call ran outside any compiled graph)")
        if names and not found:
            raise NotTracedInto(f"Inductor's output ({len(codes)} module(s)) does not contain {', '.join(names)}")
    return {"generated_modules": len(codes), "kernels_found": found}
